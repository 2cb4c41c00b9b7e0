/**
 * Launch plans: grid, block and kernargs of every launch one reduce needs. Each launch folds a
 * contiguous element range [start, start + count) of every slice; its ws and y pointers are views
 * (byte offsets) of the caller's buffers. A range is limited by the 32-bit buffer range of one
 * slice view (count*4 <= 0x7F000000 bytes), so very large outputs run as balanced launches.
 */
import { epilogueTag, isBareEpilogue, isTargetName, type Epilogue } from '@rocke/ir';
import { kernargValues, MAX_VIEW_BYTES, type EpilogueArgs, type KernargValue } from './abi.js';
import { SplitReduceError } from './errors.js';
import {
  cacheIdentity, defaultSpec, DTYPE_BYTES, DTYPES, kernelName, TARGET_NAMES, tileElements, WS_ELEMENT_BYTES,
  type CacheIdentity, type Dtype, type SplitReduceSpec, type TargetName, type VectorWidth,
} from './spec.js';
import { validate } from './validate.js';

/** One reduce to plan. */
export interface ReduceProblem {
  /** Output elements (N*Ho*Wo*K); also the distance in elements between workspace slices. */
  readonly count: number;
  /** Workspace slices [splits, count] to sum. */
  readonly splits: number;
  readonly dtype: Dtype;
  readonly target: TargetName;
  /** Vector width of the default spec (default 8: two 16-byte loads, one 16-byte store per thread). */
  readonly vectorWidth?: VectorWidth;
  /** A full spec instead of the default one; its target and dtype must match. */
  readonly spec?: SplitReduceSpec;
  /** Byte offset of slice 0 in the ws buffer (a multiple of 4; default 0). Not a multiple of 16: scalar path. */
  readonly wsOffsetBytes?: number;
  /** Byte offset of element 0 in the y buffer (a multiple of 2; default 0). Not a multiple of 16: scalar path. */
  readonly yOffsetBytes?: number;
  /** Largest byte range of one buffer view (default and maximum 0x7F000000). */
  readonly maxViewBytes?: number;
  /**
   * split_c's fused epilogue, applied after the fold: its shape (goes into the default spec; a
   * given spec must carry the same) and its launch scalars. The bias buffer is bound as `bias`
   * (K entries), the residual as `residual` (y's layout: each launch's view at its y view's offset).
   */
  readonly epilogue?: Epilogue;
  readonly epilogueArgs?: EpilogueArgs;
}

/** One kernel launch. */
export interface ReduceLaunch {
  readonly kernelName: string;
  /** Workgroups (x, y, z); the kernel uses a flat x grid. */
  readonly grid: readonly [number, number, number];
  /** Threads per workgroup. */
  readonly block: readonly [number, number, number];
  /** Values in ABI-table order; pointers are views of the `ws` and `y` buffers. */
  readonly kernargs: readonly KernargValue[];
  /** First output element of this launch. */
  readonly start: number;
  /** Output elements this launch folds. */
  readonly count: number;
  /** Byte offsets of this launch's ws (slice 0) and y views. */
  readonly wsOffsetBytes: number;
  readonly yOffsetBytes: number;
}

/** Everything needed to run one reduce. */
export interface ReducePlan {
  readonly spec: SplitReduceSpec;
  readonly kernelName: string;
  /** The binary's cache identity (shared by every reduce with this dtype and vector width). */
  readonly identity: CacheIdentity;
  readonly launches: readonly ReduceLaunch[];
  /** Bytes of ws read (`splits*count*4`, from `wsOffsetBytes`). */
  readonly wsBytes: number;
  /** Bytes of y written (`count*2`, from `yOffsetBytes`). */
  readonly yBytes: number;
  /** Why the plan looks the way it does, one line per decision. */
  readonly explain: readonly string[];
}

/** ws view alignment the vector path needs (16-byte loads); y needs vectorWidth elements. */
const VECTOR_ALIGN_BYTES = 16;
/** Launch ranges start on multiples of this many elements, keeping every view 16-byte aligned. */
const LAUNCH_ALIGN_ELEMENTS = 8;
/** AMD counts a dispatch's work-items in 32 bits; CUDA allows 2^31-1 blocks in x. */
const MAX_WORK_ITEMS = 2 ** 32 - 1;
const MAX_GRID_X = 2 ** 31 - 1;
const I32_MAX = 2 ** 31 - 1;

const hex = (n: number): string => `0x${n.toString(16).toUpperCase()}`;

/** Plans a reduce. Bad input is a {@link SplitReduceError} whose message gives the reason and the numbers. */
export function planReduce(p: ReduceProblem): ReducePlan {
  const fail = (why: string): never => {
    throw new SplitReduceError(`cannot plan split-reduce: ${why}`);
  };
  if (!isTargetName(p.target)) fail(`unknown target ${JSON.stringify(p.target)} (known: ${TARGET_NAMES.join(', ')})`);
  if (!(DTYPES as readonly string[]).includes(p.dtype)) fail(`unknown dtype ${JSON.stringify(p.dtype)} (known: ${DTYPES.join(', ')})`);
  if (!Number.isSafeInteger(p.count) || p.count < 1) fail(`count must be a positive integer (got ${p.count})`);
  if (!Number.isSafeInteger(p.splits) || p.splits < 1) fail(`splits must be a positive integer (got ${p.splits})`);
  if (p.splits > I32_MAX) fail(`splits ${p.splits} does not fit the i32 kernarg`);
  const wsOffset = p.wsOffsetBytes ?? 0;
  const yOffset = p.yOffsetBytes ?? 0;
  for (const [name, v, elementBytes] of [['wsOffsetBytes', wsOffset, WS_ELEMENT_BYTES], ['yOffsetBytes', yOffset, DTYPE_BYTES[p.dtype]]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) fail(`${name} must be a non-negative integer (got ${v})`);
    if (v % elementBytes !== 0) fail(`${name} ${v} is not a multiple of the ${elementBytes}-byte element`);
  }
  const maxView = p.maxViewBytes ?? MAX_VIEW_BYTES;
  if (!Number.isSafeInteger(maxView) || maxView < 1 || maxView > MAX_VIEW_BYTES) {
    fail(`maxViewBytes must be an integer in 1..${hex(MAX_VIEW_BYTES)} (got ${maxView})`);
  }

  const shape = p.epilogue && !isBareEpilogue(p.epilogue) ? p.epilogue : undefined;
  const spec = p.spec ?? { ...defaultSpec(p.target, p.dtype, p.vectorWidth ?? 8), ...(shape ? { epilogue: shape } : {}) };
  const v = validate(spec);
  if (!v.ok) return fail(`invalid spec: ${v.reason}`);
  if (spec.target !== p.target || spec.dtype !== p.dtype) {
    fail(`the spec is for ${spec.target}/${spec.dtype} but the problem is ${p.target}/${p.dtype}`);
  }
  if (p.spec && p.vectorWidth !== undefined && p.vectorWidth !== spec.vectorWidth) {
    fail(`vectorWidth ${p.vectorWidth} contradicts the spec's ${spec.vectorWidth}`);
  }
  if (JSON.stringify(spec.epilogue) !== JSON.stringify(shape)) {
    fail(`the spec's epilogue ${JSON.stringify(spec.epilogue ?? 'none')} is not the problem's ${JSON.stringify(shape ?? 'none')}`);
  }
  const epilogueArgs = p.epilogueArgs;
  if (shape && !epilogueArgs) fail('an epilogue needs its launch values (epilogueArgs: channels, alpha, ...)');
  if (shape && epilogueArgs && (!Number.isSafeInteger(epilogueArgs.channels) || epilogueArgs.channels < 1 || p.count % epilogueArgs.channels !== 0)) {
    fail(`epilogueArgs.channels must be a positive integer dividing count ${p.count} (got ${epilogueArgs.channels})`);
  }

  const outBytes = DTYPE_BYTES[p.dtype];
  const wsBytes = p.splits * p.count * WS_ELEMENT_BYTES;
  if (!Number.isSafeInteger(wsOffset + wsBytes)) fail(`workspace of ${p.splits} x ${p.count} fp32 is too large to address`);
  const tile = tileElements(spec);
  // Largest launch range: one slice view (the larger of ws and y per element) within the limit.
  const perView = Math.floor(maxView / Math.max(WS_ELEMENT_BYTES, outBytes));
  const maxLaunch = Math.floor(perView / LAUNCH_ALIGN_ELEMENTS) * LAUNCH_ALIGN_ELEMENTS;
  if (maxLaunch < 1) fail(`maxViewBytes ${maxView} cannot hold ${LAUNCH_ALIGN_ELEMENTS} fp32 elements`);
  const wanted = Math.ceil(p.count / maxLaunch);
  // Balanced: equal ranges, rounded up to the alignment (never above the limit).
  const step = Math.min(maxLaunch, Math.ceil(Math.ceil(p.count / wanted) / LAUNCH_ALIGN_ELEMENTS) * LAUNCH_ALIGN_ELEMENTS);

  const name = kernelName(spec);
  const launches: ReduceLaunch[] = [];
  for (let start = 0; start < p.count; start += step) {
    const count = Math.min(step, p.count - start);
    const grid = Math.ceil(count / tile);
    if (grid > MAX_GRID_X || grid * spec.threads > MAX_WORK_ITEMS) {
      fail(`a launch of ${count} elements needs ${grid} workgroups of ${spec.threads} (limits: ${MAX_GRID_X} workgroups, ${MAX_WORK_ITEMS} work-items)`);
    }
    const ws = { buffer: 'ws' as const, offsetBytes: wsOffset + start * WS_ELEMENT_BYTES };
    const y = { buffer: 'y' as const, offsetBytes: yOffset + start * outBytes };
    launches.push({
      kernelName: name,
      grid: [grid, 1, 1],
      block: [spec.threads, 1, 1],
      kernargs: kernargValues({
        ws, y, count, splits: p.splits, sliceStride: p.count, dtype: p.dtype,
        ...(shape && epilogueArgs ? { epilogue: { shape, args: epilogueArgs, start } } : {}),
      }),
      start,
      count,
      wsOffsetBytes: ws.offsetBytes,
      yOffsetBytes: y.offsetBytes,
    });
  }

  const explain = [
    `fold ${p.splits} fp32 slice${p.splits === 1 ? '' : 's'} of ${p.count} elements (${wsBytes} bytes) into ${p.dtype} in the order s = 0..${p.splits - 1}`,
    ...(shape ? [`then the epilogue ${epilogueTag(shape)} on each sum (fp32), after the whole fold`] : []),
    `kernel ${name}: ${spec.threads} threads x ${spec.outputsPerThread} outputs = ${tile} elements per workgroup, ${spec.vectorWidth}-element vectors, ${spec.slicesPerStep} slices per step`,
    launches.length === 1
      ? `one launch: each slice view is ${p.count * WS_ELEMENT_BYTES} bytes, within ${hex(maxView)}`
      : `${launches.length} launches of <= ${step} elements: one slice view of all ${p.count} would be ${p.count * WS_ELEMENT_BYTES} bytes, over ${hex(maxView)}`,
    p.count % 4 !== 0
      ? `slices start at unaligned addresses (count ${p.count} is not a multiple of 4): every workgroup takes the scalar path`
      : wsOffset % VECTOR_ALIGN_BYTES !== 0 || yOffset % (spec.vectorWidth * outBytes) !== 0
        ? `views are not aligned for vectors (wsOffsetBytes ${wsOffset} needs 16, yOffsetBytes ${yOffset} needs ${spec.vectorWidth * outBytes}): every workgroup takes the scalar path`
        : p.count % tile !== 0 || launches.some((l) => l.count % tile !== 0)
        ? `tail: the last workgroup of a launch whose count is not a multiple of ${tile} takes the scalar path`
        : `no tail: every workgroup takes the vector path`,
  ];
  return { spec, kernelName: name, identity: cacheIdentity(spec), launches, wsBytes, yBytes: p.count * outBytes, explain };
}
