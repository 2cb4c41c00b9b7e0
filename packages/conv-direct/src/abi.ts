/**
 * The kernel ABI: one ordered kernarg table per variant. The kernel builder generates its IR
 * parameters from it and the host packs values from it, so the two cannot drift apart.
 */
import { epilogueKernargs, kernargLayout as layoutOf, writeKernarg, type BufferView, type Epilogue, type KernargEntry, type KernargLayout, type KernargType, type LaunchKernarg } from '@rocke/ir';
import { ELEMENT_BYTES, problemGeometry, type Problem } from './problem.js';
import type { Variant } from './spec.js';
import { MAX_TENSOR_BYTES } from './targets.js';
import { WORKSPACE_ELEMENT_BYTES } from './validate.js';

export type { KernargEntry, KernargType };

/** Buffers a launch binds (bias and residual: a fused epilogue's). */
export type BufferName = 'x' | 'w' | 'y' | 'ws' | 'bias' | 'residual';

/** A pointer argument not yet bound to an address: buffer `buffer` plus a byte offset (a chunk's view). */
export type BufferRef = BufferView<BufferName>;

/** A kernarg value: a number for i32/f32, a bigint for i64 and resolved pointers, or a buffer view. */
export type KernargValue = LaunchKernarg<BufferName>;

const ptr = <N extends string>(name: N, access: 'read' | 'write', doc: string) => ({ name, type: 'ptr', access, doc }) as const;
const i32 = <N extends string>(name: N, doc: string) => ({ name, type: 'i32', doc }) as const;

const DENSE_ARGS = [
  ptr('x', 'read', 'input activations, NHWC'),
  ptr('w', 'read', 'weights, [K, R, S, C/groups]'),
  ptr('y', 'write', 'output, NHWK (split_c: written by the split-reduce pass that follows)'),
  i32('x_bytes', 'bytes of x this launch may read (buffer range)'),
  i32('w_bytes', 'bytes of w'),
  i32('y_bytes', 'bytes of y this launch may write'),
  i32('N', 'images in this launch'),
  i32('H', 'input rows'),
  i32('W', 'input columns'),
  i32('Ho', 'output rows'),
  i32('Wo', 'output columns'),
  i32('groups', 'convolution groups'),
  i32('C', 'input channels (all groups)'),
  i32('K', 'output channels (all groups)'),
  i32('x_stride_n', 'elements between images of x: H*W*C'),
  i32('x_stride_h', 'elements between rows of x: W*C'),
  i32('x_stride_w', 'elements between pixels of x: C'),
  i32('y_stride_n', 'elements between images of y: Ho*Wo*K'),
  i32('y_stride_h', 'elements between rows of y: Wo*K'),
  i32('y_stride_w', 'elements between pixels of y: K'),
] as const;

/**
 * Kernarg tables, in kernel-parameter order. Literal-typed, so the kernel builders' argument
 * accessors ({@link KernargName}) are checked against the table at compile time.
 */
export const KERNEL_ABI = {
  dense: DENSE_ARGS,
  // groups = C: the kernel derives the multiplier K/C from its spec (ck) and reads C and K.
  depthwise: DENSE_ARGS,
  // 1x1 as a GEMM over the flat pixels: the kernel reads N, Ho, Wo for its pixel count and gather.
  pointwise: DENSE_ARGS,
  grouped: [...DENSE_ARGS, i32('cpg', 'input channels per group: C/groups'), i32('kpg', 'output channels per group: K/groups')] as const,
  split_c: [
    ...DENSE_ARGS,
    ptr('ws', 'write', 'fp32 partial sums, [splits, N, Ho, Wo, K]'),
    i32('ws_bytes', 'bytes of ws this launch may write'),
    i32('splits', 'channel slices: each reduces whole channel runs, uneven by at most one run (split-slices.ts)'),
  ] as const,
} as const satisfies Readonly<Record<Variant, readonly KernargEntry[]>>;

/** Names of a variant's kernel arguments (default: of any variant). */
export type KernargName<V extends Variant = Variant> = (typeof KERNEL_ABI)[V][number]['name'];

/**
 * The kernarg table of a variant, with a fused epilogue's arguments (@rocke/ir's
 * `epilogueKernargs`) appended when the kernel has one (never split_c: its reduce has them).
 */
export function kernargTable(variant: Variant, epilogue?: Epilogue): readonly KernargEntry[] {
  const table: readonly KernargEntry[] | undefined = KERNEL_ABI[variant];
  if (!table) throw new KernargError(`unknown variant '${String(variant)}'`);
  if (!epilogue) return table;
  if (variant === 'split_c') throw new KernargError('split_c kernels take no epilogue arguments (the split-reduce pass applies the epilogue)');
  return [...table, ...epilogueKernargs(epilogue)];
}

/** A kernarg list that does not match its table, or a value out of its type's range. */
export class KernargError extends Error {
  override readonly name = 'KernargError';
}

/**
 * Orders named values by the variant's table. Throws a {@link KernargError} naming every missing
 * and every unexpected name, so an order or spelling mismatch never reaches a launch.
 */
export function orderKernargs(variant: Variant, values: Readonly<Record<string, KernargValue>>, epilogue?: Epilogue): KernargValue[] {
  const table = kernargTable(variant, epilogue);
  const expected = new Set(table.map((e) => e.name));
  const missing = table.filter((e) => !(e.name in values)).map((e) => e.name);
  const extra = Object.keys(values).filter((k) => !expected.has(k));
  if (missing.length || extra.length) {
    throw new KernargError(
      `${variant} kernargs do not match the ABI table:` +
        (missing.length ? ` missing ${missing.join(', ')}` : '') +
        (extra.length ? ` unexpected ${extra.join(', ')}` : ''),
    );
  }
  return table.map((e) => {
    const v = values[e.name] as KernargValue;
    checkValue(e, v);
    return v;
  });
}

function checkValue(e: KernargEntry, v: KernargValue): void {
  const bad = (why: string): never => {
    throw new KernargError(`kernarg ${e.name} (${e.type}): ${why}`);
  };
  switch (e.type) {
    case 'ptr':
      if (typeof v === 'bigint') {
        if (v < 0n || v >= 1n << 64n) bad(`address ${v} is not a 64-bit unsigned value`);
      } else if (typeof v !== 'object' || v === null || !('buffer' in v)) bad('expects a bigint address or a buffer view');
      else if (!Number.isSafeInteger(v.offsetBytes) || v.offsetBytes < 0) bad(`offset ${v.offsetBytes} is not a non-negative integer`);
      return;
    case 'i32':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -(2 ** 31) || v > 2 ** 31 - 1) bad(`${String(v)} is not an i32`);
      if (e.name.endsWith('_bytes') && (v as number) > MAX_TENSOR_BYTES) bad(`${String(v)} bytes exceed the per-launch limit ${MAX_TENSOR_BYTES}`);
      return;
    case 'i64':
      if (typeof v !== 'bigint' || v < -(1n << 63n) || v >= 1n << 63n) bad(`${String(v)} is not an i64 bigint`);
      return;
    case 'f32':
      if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${String(v)} is not a finite number`);
      return;
  }
}

/** Pointer arguments of one launch: addresses or views of the bound buffers. */
export type KernargBuffers = { x: bigint | BufferRef; w: bigint | BufferRef; y: bigint | BufferRef; ws?: bigint | BufferRef };

/** The scalars of a fused epilogue (those its shape uses; alpha and beta default to 1). */
export interface EpilogueScalars {
  alpha?: number;
  beta?: number;
  slope?: number;
  lo?: number;
  hi?: number;
}

/** Options for {@link kernargValues}. */
export interface KernargValueOptions {
  /** split_c: channel slices (required there, rejected elsewhere). */
  splits?: number;
  /**
   * A fused epilogue (the spec's), with its scalars. Bias binds buffer `bias` (K entries from
   * byte 0); the residual binds buffer `residual` at y's offset (it has y's layout).
   */
  epilogue?: { shape: Epilogue; scalars: EpilogueScalars };
}

/** The epilogue's values of one launch whose y view starts at `yOffsetBytes`. */
function epilogueValues(e: { shape: Epilogue; scalars: EpilogueScalars }, problem: Problem, yOffsetBytes: number, yBytes: number): Record<string, KernargValue> {
  const { shape, scalars } = e;
  const values: Record<string, KernargValue> = { alpha: scalars.alpha ?? 1 };
  if (shape.bias !== 'none') {
    values.bias = { buffer: 'bias', offsetBytes: 0 };
    values.bias_bytes = problem.K * (shape.bias === 'fp32' ? 4 : ELEMENT_BYTES);
  }
  if (shape.residual) {
    values.residual = { buffer: 'residual', offsetBytes: yOffsetBytes };
    values.residual_bytes = yBytes;
    values.beta = scalars.beta ?? 1;
  }
  // A missing parameter goes in as NaN, which the f32 check names.
  if (shape.act === 'leaky_relu') values.slope = scalars.slope ?? Number.NaN;
  if (shape.act === 'clamp') Object.assign(values, { lo: scalars.lo ?? Number.NaN, hi: scalars.hi ?? Number.NaN });
  return values;
}

/**
 * The ordered kernarg values of one launch over `problem` (the images this launch covers). Byte
 * counts are those of this launch's views; strides are in elements.
 */
export function kernargValues(
  variant: Variant,
  problem: Problem,
  buffers: KernargBuffers,
  opts: KernargValueOptions = {},
): KernargValue[] {
  const g = problemGeometry(problem);
  const values: Record<string, KernargValue> = {
    x: buffers.x,
    w: buffers.w,
    y: buffers.y,
    x_bytes: g.xBytes,
    w_bytes: g.wBytes,
    y_bytes: g.yBytes,
    N: problem.N,
    H: problem.H,
    W: problem.W,
    Ho: g.Ho,
    Wo: g.Wo,
    groups: problem.groups,
    C: problem.C,
    K: problem.K,
    x_stride_n: problem.H * problem.W * problem.C,
    x_stride_h: problem.W * problem.C,
    x_stride_w: problem.C,
    y_stride_n: g.Ho * g.Wo * problem.K,
    y_stride_h: g.Wo * problem.K,
    y_stride_w: problem.K,
  };
  if (variant === 'grouped') {
    values.cpg = g.cpg;
    values.kpg = g.kpg;
  }
  if (variant === 'split_c') {
    const splits = opts.splits;
    if (splits === undefined) throw new KernargError('split_c kernargs need a split count');
    if (buffers.ws === undefined) throw new KernargError('split_c kernargs need the ws buffer');
    values.ws = buffers.ws;
    values.ws_bytes = WORKSPACE_ELEMENT_BYTES * splits * problem.N * g.Ho * g.Wo * problem.K;
    values.splits = splits;
  } else {
    if (opts.splits !== undefined && opts.splits !== 1) throw new KernargError(`${variant} kernargs take no split count (got ${opts.splits})`);
    if (buffers.ws !== undefined) throw new KernargError(`${variant} kernargs take no ws buffer`);
  }
  if (opts.epilogue) {
    const yOffset = typeof buffers.y === 'object' ? buffers.y.offsetBytes : 0;
    Object.assign(values, epilogueValues(opts.epilogue, problem, yOffset, g.yBytes));
  }
  return orderKernargs(variant, values, opts.epilogue?.shape);
}

/** Replaces buffer views by `base address + offset`. */
export function resolveKernargs(values: readonly KernargValue[], addresses: Partial<Record<BufferName, bigint>>): (number | bigint)[] {
  return values.map((v) => {
    if (typeof v !== 'object') return v;
    const base = addresses[v.buffer];
    if (base === undefined) throw new KernargError(`no address for buffer ${v.buffer}`);
    return base + BigInt(v.offsetBytes);
  });
}

/** The variant's kernarg layout: @rocke/ir's one layout of its table. */
export function kernargLayout(variant: Variant, epilogue?: Epilogue): KernargLayout<KernargType> {
  return layoutOf(kernargTable(variant, epilogue));
}

/** Packs resolved values into a little-endian kernarg buffer laid out by {@link kernargLayout}. */
export function packKernargs(variant: Variant, values: readonly (number | bigint)[], epilogue?: Epilogue): Uint8Array {
  const { slots, size } = kernargLayout(variant, epilogue);
  if (values.length !== slots.length) {
    throw new KernargError(`${variant} takes ${slots.length} kernargs, got ${values.length}`);
  }
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  slots.forEach((slot, i) => {
    const v = values[i] as number | bigint;
    checkValue({ name: slot.name, type: slot.type, doc: '' }, v);
    writeKernarg(view, slot, v);
  });
  return bytes;
}
