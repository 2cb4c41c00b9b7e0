// Single-threaded forward convolution, chunked over the batch under a byte budget.

import { DEFAULT_BUDGET_BYTES, planChunks, type BatchChunk } from './chunks.js';
import { decodeDtype, encodeDtype, type Dtype } from './dtype.js';
import { convRows, type KernelShape } from './kernel.js';
import { ConvReferenceError, checkBufferLength, convGeometry, type ConvGeometry, type ConvProblem } from './problem.js';

/**
 * An operand as handed to the reference: 16-bit patterns of the problem's dtype (what a GPU buffer
 * holds), or fp32 values, which are rounded to the dtype first (RNE) so the reference always
 * convolves dtype-representable inputs.
 */
export type Operand = Uint16Array | Float32Array;

/** Options of the chunked reference. */
export interface ConvOptions {
  /** Bytes allowed for each fp32 operand chunk (x and y); default 2^31. */
  budgetBytes?: number;
}

/** The output of one batch chunk: images [n0, n0 + count). */
export interface ConvChunkOutput extends BatchChunk {
  /** fp64 sums rounded to fp32, NHWK. */
  y32: Float32Array;
  /** y32 rounded to the dtype (RNE), as 16-bit patterns. */
  y: Uint16Array;
}

/** The whole output of a reference convolution. */
export interface ConvOutput {
  geometry: ConvGeometry;
  /** The batch chunks it was computed in. */
  chunks: BatchChunk[];
  /** fp64 sums rounded to fp32, NHWK [N, Ho, Wo, K]. */
  y32: Float32Array;
  /** y32 rounded to the dtype (RNE): what a correct fp32-accumulating kernel stores, up to its summation order. */
  y: Uint16Array;
}

/** A validated problem with its weights decoded, ready for any execution path. */
export interface PreparedConv {
  geometry: ConvGeometry;
  shape: KernelShape;
  dtype: Dtype;
  x: Operand;
  /** Weights as fp32 values of the dtype, KRSC. */
  w32: Float32Array;
}

/** Validate problem and buffers and decode the weights. Throws {@link ConvReferenceError}. */
export function prepareConv(problem: ConvProblem, x: Operand, w: Operand): PreparedConv {
  const geometry = convGeometry(problem);
  const p = geometry.problem;
  checkOperandType('x', x);
  checkOperandType('w', w);
  checkBufferLength('x', x.length, geometry.xElements, `N*H*W*C = ${p.N}*${p.H}*${p.W}*${p.C}`);
  checkBufferLength('w', w.length, geometry.wElements, `K*R*S*(C/groups) = ${p.K}*${p.R}*${p.S}*${geometry.Cg}`);
  const w32 = new Float32Array(geometry.wElements);
  operandValues(w, p.dtype, 0, w.length, w32);
  return { geometry, shape: kernelShape(geometry), dtype: p.dtype, x, w32 };
}

/** {@link prepareConv} and the batch chunks under `options.budgetBytes`: how every chunked path starts. */
export function prepareChunked(problem: ConvProblem, x: Operand, w: Operand, options: ConvOptions): { prepared: PreparedConv; plan: BatchChunk[] } {
  const prepared = prepareConv(problem, x, w);
  // `??`, not the parameter default: a null budget from JavaScript also means the default.
  return { prepared, plan: planChunks(prepared.geometry, options.budgetBytes ?? DEFAULT_BUDGET_BYTES) };
}

/** The plain-number shape the inner loop takes. */
export function kernelShape(geometry: ConvGeometry): KernelShape {
  const p = geometry.problem;
  return {
    H: p.H,
    W: p.W,
    C: p.C,
    K: p.K,
    R: p.R,
    S: p.S,
    Cg: geometry.Cg,
    Kg: geometry.Kg,
    groups: p.groups,
    Ho: geometry.Ho,
    Wo: geometry.Wo,
    strideH: p.strideH,
    strideW: p.strideW,
    padH: p.padH,
    padW: p.padW,
    dilationH: p.dilationH,
    dilationW: p.dilationW,
  };
}

/** Write the dtype-rounded fp32 values of src[start, start + count) into `out` (length count). */
export function operandValues(src: Operand, dtype: Dtype, start: number, count: number, out: Float32Array): void {
  if (src instanceof Uint16Array) {
    decodeDtype(src.subarray(start, start + count), dtype, out);
  } else {
    decodeDtype(encodeDtype(src.subarray(start, start + count), dtype), dtype, out);
  }
}

function checkOperandType(name: string, v: unknown): void {
  if (!(v instanceof Uint16Array) && !(v instanceof Float32Array)) {
    const got = v === null ? 'null' : typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v;
    throw new ConvReferenceError('invalid-argument', `${name} must be a Uint16Array (dtype bits) or a Float32Array, got ${got}`);
  }
}

/**
 * Forward convolution chunk by chunk (single thread): yields each batch chunk's output as soon as it
 * is computed, so a caller can compare chunk by chunk without holding the whole fp32 result.
 * Validation and the budget check happen before the first chunk is computed.
 */
export function convForwardChunks(
  problem: ConvProblem,
  x: Operand,
  w: Operand,
  options: ConvOptions = {},
): Generator<ConvChunkOutput, void, undefined> {
  const { prepared, plan } = prepareChunked(problem, x, w, options);
  return runChunks(prepared, plan);
}

function* runChunks(prepared: PreparedConv, plan: BatchChunk[]): Generator<ConvChunkOutput, void, undefined> {
  const { geometry } = prepared;
  const xChunk = new Float32Array(largestChunk(plan) * geometry.xImageElements);
  for (const { n0, count } of plan) {
    const y32 = new Float32Array(count * geometry.yImageElements);
    computeChunk(prepared, n0, count, xChunk, y32);
    yield { n0, count, y32, y: encodeDtype(y32, prepared.dtype) };
  }
}

/** Images in the largest chunk (balanced plans put it first). */
export function largestChunk(plan: readonly BatchChunk[]): number {
  let largest = 0;
  for (const c of plan) largest = Math.max(largest, c.count);
  return largest;
}

/** Decode the chunk's x into `xChunk` and compute its output into `y32` (single thread). */
function computeChunk(prepared: PreparedConv, n0: number, count: number, xChunk: Float32Array, y32: Float32Array): void {
  const { geometry, shape } = prepared;
  const xCount = count * geometry.xImageElements;
  const xView = xChunk.subarray(0, xCount);
  operandValues(prepared.x, prepared.dtype, n0 * geometry.xImageElements, xCount, xView);
  convRows(xView, prepared.w32, y32, shape, 0, count * geometry.Ho);
}

/**
 * Forward convolution of the whole batch on this thread, computed in batch chunks under
 * `options.budgetBytes`. fp64 accumulation over the dtype-rounded inputs; see {@link ConvOutput}.
 */
export function convForward(problem: ConvProblem, x: Operand, w: Operand, options: ConvOptions = {}): ConvOutput {
  const { prepared, plan } = prepareChunked(problem, x, w, options);
  const { geometry } = prepared;
  const y32 = new Float32Array(geometry.yElements);
  const xChunk = new Float32Array(largestChunk(plan) * geometry.xImageElements);
  for (const { n0, count } of plan) {
    const start = n0 * geometry.yImageElements;
    computeChunk(prepared, n0, count, xChunk, y32.subarray(start, start + count * geometry.yImageElements));
  }
  return { geometry, chunks: plan, y32, y: encodeDtype(y32, prepared.dtype) };
}
