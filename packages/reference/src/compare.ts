// Comparison of a kernel's output against the reference, with a per-dtype tolerance.
//
// Tolerance (element i passes when |a_i - e_i| <= rtol * |e_i| + atol):
//
//   rtol = 1.125 * 2^(1-p)            p = significand bits: fp16 11 -> 1.10e-3, bf16 8 -> 8.79e-3
//   atol = minSubnormal(dtype) + 8 * 2^-24 * sqrt(L) * rms(e)      L = R*S*C/groups
//
// Why: a correct kernel gets the same dtype-rounded inputs, sums the exact products in fp32 in its
// own order, and rounds the sum to the dtype. The reference rounds its (fp64) sum to fp32 and then
// to the dtype. Two roundings to the dtype of nearly equal numbers differ by at most one unit in
// the last place, which is <= 2^(1-p)*|e|; the 1/8 extra covers a binade edge between the two.
// What remains is the difference of the two fp32 sums. Summing L products in fp32 leaves an error
// that grows like 2^-24 * sqrt(L) * rms(y): a random walk of L roundings, each relative to a
// partial sum whose size is ~rms(y)*sqrt(i/L) for zero-mean data or ~rms(y)*i/L for same-sign
// data, which gives the same order either way. Measured on the test problems of compare.test.ts
// (L = 2304 and 18432, fp16 and bf16, zero-mean and same-sign data, three summation orders): the
// difference has an RMS of 0.04-0.28 and a maximum of 0.2-2.0 times 2^-24*sqrt(L)*rms(y). The
// factor 8 leaves about 4x over the largest seen; the term matters only for outputs near zero
// (cancellation), where rtol*|e| is tiny. minSubnormal covers outputs in fp16's subnormal range.
//
// What fails: a missing piece of the reduction shifts outputs by about sqrt(missing/L) * rms(y)
// (16 of 256 channels: ~25% of rms(y); one of 9 taps: ~33%), tens of times rtol*|e| for bf16 and
// hundreds for fp16, so almost every output mismatches. The tests prove both directions.
//
// Fused epilogues (epilogue.ts) keep rtol and replace rms(e) in atol by the epilogue's sumRms.

import { decodeDtype, minSubnormal, precisionBits, type Dtype } from './dtype.js';
import { ConvReferenceError, type ConvGeometry } from './problem.js';
import { outputPointOf, type OutputIndex, type OutputShape } from './sample.js';

/** Values to compare: 16-bit patterns of the dtype, or fp32/fp64 values. */
export type CompareValues = Uint16Array | Float32Array | Float64Array;

/**
 * Where the compared values sit, so a mismatch can be reported as (n, h, w, k), and how long the
 * reduction behind each value is. A {@link ConvGeometry} (full output) or a {@link SampleOutput}
 * (sampled points) can be passed as is. Without `reductionLength`, L = 1 (the strictest atol): fine
 * for values that are not sums, too strict for conv outputs.
 */
export type CompareLayout = (
  | (OutputShape & { reductionLength?: number })
  | { points: readonly OutputIndex[]; reductionLength?: number; geometry?: ConvGeometry }
) & {
  /**
   * The scale of the absolute tolerance in place of rms(expected): for epilogue outputs, the
   * `sumRms` that applyEpilogue() reports (what was rounded, times the activation's gain).
   */
  sumRms?: number;
};

/** The per-element tolerance |a - e| <= rtol * |e| + atol. */
export interface Tolerance {
  rtol: number;
  atol: number;
}

/** The first element that failed, with its position in y when known. */
export interface BadElement {
  index: number;
  actual: number;
  expected: number;
  n?: number;
  h?: number;
  w?: number;
  k?: number;
}

/** What {@link compare} found. */
export interface CompareReport {
  /** Elements compared. */
  count: number;
  /** Largest |a - e| (Infinity when a non-finite value disagrees). */
  maxAbs: number;
  /** Largest |a - e| / |e| over e != 0 (Infinity when a non-finite value disagrees). */
  maxRel: number;
  /** Elements outside the tolerance. */
  mismatches: number;
  firstBad: BadElement | null;
  /** Largest |a - e| / (rtol*|e| + atol): below 1 passes; how close the closest call came. */
  worstRatio: number;
  tolerance: Tolerance;
  pass: boolean;
}

/** The tolerance for `dtype`, a reduction of `reductionLength` terms and expected values of RMS `expectedRms`. */
export function toleranceFor(dtype: Dtype, reductionLength: number, expectedRms: number): Tolerance {
  if (!Number.isFinite(reductionLength) || reductionLength < 1) {
    throw new ConvReferenceError('invalid-argument', `reductionLength must be >= 1, got ${String(reductionLength)}`);
  }
  return {
    rtol: 1.125 * 2 ** (1 - precisionBits(dtype)),
    atol: minSubnormal(dtype) + 8 * 2 ** -24 * Math.sqrt(reductionLength) * expectedRms,
  };
}

/**
 * Compare `actual` against `expected` element by element under the tolerance of `dtype` (see the
 * module comment). Uint16Array inputs are read as 16-bit patterns of `dtype`. NaN matches NaN and
 * infinities match the same infinity; anything else non-finite is a mismatch.
 */
export function compare(actual: CompareValues, expected: CompareValues, dtype: Dtype, layout?: CompareLayout): CompareReport {
  if (actual.length !== expected.length) {
    throw new ConvReferenceError('buffer-mismatch', `compare: actual has ${actual.length} elements, expected ${expected.length}`);
  }
  if (layout && 'points' in layout && layout.points.length !== expected.length) {
    throw new ConvReferenceError('buffer-mismatch', `compare: ${layout.points.length} points for ${expected.length} values`);
  }
  if (layout && !('points' in layout)) {
    const size = layout.N * layout.Ho * layout.Wo * layout.K;
    if (size !== expected.length) {
      throw new ConvReferenceError(
        'buffer-mismatch',
        `compare: output shape [N, Ho, Wo, K] = [${layout.N}, ${layout.Ho}, ${layout.Wo}, ${layout.K}] has ${size} elements, the values ${expected.length}`,
      );
    }
  }
  const a = readValues(actual, dtype);
  const e = readValues(expected, dtype);
  const n = e.length;
  let sumSquares = 0;
  let finite = 0;
  for (let i = 0; i < n; i++) {
    const v = e[i] as number;
    if (Number.isFinite(v)) {
      sumSquares += v * v;
      finite++;
    }
  }
  const rms = finite > 0 ? Math.sqrt(sumSquares / finite) : 0;
  const reductionLength = reductionLengthOf(layout);
  const tolerance = toleranceFor(dtype, reductionLength, layout?.sumRms ?? rms);
  let maxAbs = 0;
  let maxRel = 0;
  let worstRatio = 0;
  let mismatches = 0;
  let firstBad = -1;
  for (let i = 0; i < n; i++) {
    const ai = a[i] as number;
    const ei = e[i] as number;
    if (!Number.isFinite(ai) || !Number.isFinite(ei)) {
      const same = ai === ei || (Number.isNaN(ai) && Number.isNaN(ei));
      if (!same) {
        maxAbs = Infinity;
        maxRel = Infinity;
        worstRatio = Infinity;
        mismatches++;
        if (firstBad < 0) firstBad = i;
      }
      continue;
    }
    const diff = Math.abs(ai - ei);
    const magnitude = Math.abs(ei);
    if (diff > maxAbs) maxAbs = diff;
    if (magnitude > 0 && diff / magnitude > maxRel) maxRel = diff / magnitude;
    const allowed = tolerance.rtol * magnitude + tolerance.atol;
    const ratio = diff / allowed;
    if (ratio > worstRatio) worstRatio = ratio;
    if (diff > allowed) {
      mismatches++;
      if (firstBad < 0) firstBad = i;
    }
  }
  return {
    count: n,
    maxAbs,
    maxRel,
    mismatches,
    firstBad: firstBad < 0 ? null : badElement(firstBad, a[firstBad] as number, e[firstBad] as number, layout),
    worstRatio,
    tolerance,
    pass: mismatches === 0,
  };
}

function readValues(v: CompareValues, dtype: Dtype): Float32Array | Float64Array {
  if (v instanceof Uint16Array) {
    return decodeDtype(v, dtype);
  }
  if (v instanceof Float32Array || v instanceof Float64Array) return v;
  throw new ConvReferenceError('invalid-argument', 'compare: values must be a Uint16Array (dtype bits), Float32Array or Float64Array');
}

function reductionLengthOf(layout: CompareLayout | undefined): number {
  if (!layout) return 1;
  if (layout.reductionLength !== undefined) return layout.reductionLength;
  if ('points' in layout) return layout.geometry?.reductionLength ?? 1;
  return 1;
}

function badElement(index: number, actual: number, expected: number, layout: CompareLayout | undefined): BadElement {
  if (!layout) return { index, actual, expected };
  const at = 'points' in layout ? layout.points[index] : outputPointOf(layout, index);
  return at ? { index, actual, expected, ...at } : { index, actual, expected };
}
