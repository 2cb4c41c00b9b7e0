/**
 * The kernel ABI: one ordered kernarg table. The kernel builder makes its IR parameters from it
 * and the host packs values from it, so the two cannot drift apart.
 */
import { epilogueKernargs, type BufferView, type Epilogue, type KernargEntry, type KernargType, type LaunchKernarg } from '@rocke/ir';
import { SplitReduceError } from './errors.js';
import { DTYPE_BYTES, WS_ELEMENT_BYTES, type Dtype } from './spec.js';

export type { KernargEntry, KernargType };

/** Largest byte range of one buffer view (AMD buffer descriptors hold a 32-bit count; the kernels stay below 2^31). */
export const MAX_VIEW_BYTES = 0x7f000000;

/** The kernarg table of the bare fold, in kernel-parameter order. */
export const KERNARG_TABLE = [
  { name: 'ws', type: 'ptr', access: 'read', doc: 'fp32 partial sums: slice s of this launch starts at ws + s*slice_stride*4' },
  { name: 'y', type: 'ptr', access: 'write', doc: 'output, count elements of the output dtype' },
  { name: 'ws_bytes', type: 'i32', doc: 'bytes of each slice view this launch reads: count*4 (reads past it return zero)' },
  { name: 'y_bytes', type: 'i32', doc: 'bytes of y this launch writes: count*2 (writes past it are dropped)' },
  { name: 'count', type: 'i32', doc: 'output elements this launch folds' },
  { name: 'splits', type: 'i32', doc: 'slices to sum, in the order s = 0..splits-1 (>= 1)' },
  { name: 'slice_stride', type: 'i64', doc: 'fp32 elements between slices of ws (the whole tensor: N*Ho*Wo*K)' },
] as const satisfies readonly KernargEntry[];

/** Where a bias is read: element e of the reduce is output channel (channel0 + e) % channels. */
export const CHANNEL_ARGS = [
  { name: 'channels', type: 'i32', doc: 'output channels K of the conv (y is NHWK): the bias has K entries' },
  { name: 'channel0', type: 'i32', doc: "output channel of this launch's first element" },
] as const satisfies readonly KernargEntry[];

/**
 * The kernarg table of a spec with `epilogue` (none: {@link KERNARG_TABLE}): the bare table, the
 * channel position when there is a bias, then @rocke/ir's epilogue arguments.
 */
export function kernargTable(epilogue?: Epilogue): readonly KernargEntry[] {
  if (!epilogue) return KERNARG_TABLE;
  return [...KERNARG_TABLE, ...(epilogue.bias === 'none' ? [] : CHANNEL_ARGS), ...epilogueKernargs(epilogue)];
}

/** A pointer kernarg not yet bound to an address: a buffer plus a byte offset into it (a launch's view). */
export type BufferRef = BufferView<'ws' | 'y' | 'bias' | 'residual'>;

/** The scalars of a fused epilogue's launches (those its shape uses; the rest are ignored). */
export interface EpilogueArgs {
  /** Output channels K: element e of the reduce is channel e % K. */
  readonly channels: number;
  readonly alpha: number;
  readonly beta?: number;
  readonly slope?: number;
  readonly lo?: number;
  readonly hi?: number;
}

/** A kernarg value: a number for i32/i64, a bigint address or a buffer view for pointers. */
export type KernargValue = LaunchKernarg<BufferRef['buffer']>;

/** What one launch folds: `count` elements of each of `splits` slices `sliceStride` elements apart. */
export interface ReduceLaunchArgs {
  readonly ws: bigint | BufferRef;
  readonly y: bigint | BufferRef;
  readonly count: number;
  readonly splits: number;
  readonly sliceStride: number;
  readonly dtype: Dtype;
  /** A fused epilogue: its shape, its scalars, and this launch's first element of the reduce. */
  readonly epilogue?: { readonly shape: Epilogue; readonly args: EpilogueArgs; readonly start: number };
}

/** The ordered kernarg values of one launch; byte counts are those of this launch's views. */
export function kernargValues(a: ReduceLaunchArgs): KernargValue[] {
  const values: Record<string, KernargValue> = {
    ws: a.ws,
    y: a.y,
    ws_bytes: a.count * WS_ELEMENT_BYTES,
    y_bytes: a.count * DTYPE_BYTES[a.dtype],
    count: a.count,
    splits: a.splits,
    slice_stride: a.sliceStride,
  };
  const e = a.epilogue;
  if (e) {
    const { shape, args, start } = e;
    if (shape.bias !== 'none') {
      values.channels = args.channels;
      values.channel0 = start % args.channels;
      values.bias = { buffer: 'bias', offsetBytes: 0 };
      values.bias_bytes = args.channels * (shape.bias === 'fp32' ? 4 : DTYPE_BYTES[a.dtype]);
    }
    if (shape.residual) {
      // The residual has y's layout: its view starts where this launch's y view does.
      values.residual = { buffer: 'residual', offsetBytes: typeof a.y === 'object' ? a.y.offsetBytes : start * DTYPE_BYTES[a.dtype] };
      values.residual_bytes = a.count * DTYPE_BYTES[a.dtype];
      values.beta = args.beta ?? 1;
    }
    values.alpha = args.alpha;
    if (shape.act === 'leaky_relu') values.slope = args.slope ?? Number.NaN;
    if (shape.act === 'clamp') {
      values.lo = args.lo ?? Number.NaN;
      values.hi = args.hi ?? Number.NaN;
    }
  }
  return orderKernargs(values, e?.shape);
}

/**
 * Orders named values by the table, checking each against its type. Throws a
 * {@link SplitReduceError} naming every missing and unexpected name, or the bad value.
 */
export function orderKernargs(values: Readonly<Record<string, KernargValue>>, epilogue?: Epilogue): KernargValue[] {
  const table = kernargTable(epilogue);
  const expected = new Set(table.map((e) => e.name));
  const missing = table.filter((e) => !(e.name in values)).map((e) => e.name);
  const extra = Object.keys(values).filter((k) => !expected.has(k));
  if (missing.length || extra.length) {
    throw new SplitReduceError(
      'split-reduce kernargs do not match the ABI table:' +
        (missing.length ? ` missing ${missing.join(', ')}` : '') +
        (extra.length ? ` unexpected ${extra.join(', ')}` : ''),
    );
  }
  return table.map((e) => checkValue(e, values[e.name] as KernargValue));
}

function checkValue(e: KernargEntry, v: KernargValue): KernargValue {
  const bad = (why: string): never => {
    throw new SplitReduceError(`kernarg ${e.name} (${e.type}): ${why}`);
  };
  if (e.type === 'ptr') {
    if (typeof v === 'bigint') {
      if (v < 0n || v >= 1n << 64n) bad(`address ${v} is not a 64-bit unsigned value`);
    } else if (typeof v !== 'object' || v === null || !('buffer' in v)) bad('expects a bigint address or a buffer view');
    else if (!Number.isSafeInteger(v.offsetBytes) || v.offsetBytes < 0) bad(`offset ${v.offsetBytes} is not a non-negative integer`);
    return v;
  }
  if (e.type === 'f32') {
    if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${String(v)} is not a finite number`);
    return v;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return bad(`${String(v)} is not a non-negative integer`);
  if (e.type === 'i32' && v > 2 ** 31 - 1) bad(`${v} does not fit an i32`);
  if (e.name.endsWith('_bytes') && v > MAX_VIEW_BYTES) bad(`${v} bytes exceed the per-view limit 0x${MAX_VIEW_BYTES.toString(16).toUpperCase()}`);
  if ((e.name === 'splits' || e.name === 'channels') && v < 1) bad(`at least one ${e.name === 'splits' ? 'slice' : 'channel'} is needed`);
  return v;
}

/** Replaces buffer views by `base address + offset`, ready for a packer. */
export function resolveKernargs(values: readonly KernargValue[], addresses: Partial<Record<BufferRef['buffer'], bigint>>): (number | bigint)[] {
  return values.map((v) => {
    if (typeof v !== 'object') return v;
    const base = addresses[v.buffer];
    if (base === undefined) throw new SplitReduceError(`no address for buffer ${v.buffer}`);
    return base + BigInt(v.offsetBytes);
  });
}
