// Sampled mode: exact reference values at chosen output points, for problems too large to convolve
// whole. Each point is summed in the same order as the full path (see kernel.ts), so a sampled value
// equals the full result at that point bit for bit.

import { dtypeValueTable, encodeDtype, roundToDtype } from './dtype.js';
import { prepareConv, type Operand } from './conv.js';
import { createRng } from './random.js';
import { ConvReferenceError, type ConvGeometry, type ConvProblem } from './problem.js';

/** One output element of y (NHWK): image n, output row h, output column w, output channel k. */
export interface OutputIndex {
  n: number;
  h: number;
  w: number;
  k: number;
}

/** The extents of y: [N, Ho, Wo, K]. A {@link ConvGeometry} is one. */
export interface OutputShape {
  N: number;
  Ho: number;
  Wo: number;
  K: number;
}

/** Which points to sample: an explicit list, or `count` distinct points drawn with `seed`. */
export type SampleSpec = readonly OutputIndex[] | { count: number; seed: number };

/** Reference values at the sampled points, in the order of `points`. */
export interface SampleOutput {
  geometry: ConvGeometry;
  points: OutputIndex[];
  /** Flat NHWK index of each point, to gather a kernel's output at the same places. */
  indices: Float64Array;
  /** fp64 sums rounded to fp32. */
  y32: Float32Array;
  /** y32 rounded to the dtype (RNE), as 16-bit patterns. */
  y: Uint16Array;
}

/** Flat NHWK index of an output point. */
export function flatOutputIndex(shape: OutputShape, p: OutputIndex): number {
  return ((p.n * shape.Ho + p.h) * shape.Wo + p.w) * shape.K + p.k;
}

/** The output point of a flat NHWK index. */
export function outputPointOf(shape: OutputShape, index: number): OutputIndex {
  const k = index % shape.K;
  let rest = (index - k) / shape.K;
  const w = rest % shape.Wo;
  rest = (rest - w) / shape.Wo;
  const h = rest % shape.Ho;
  const n = (rest - h) / shape.Ho;
  return { n, h, w, k };
}

/** `count` distinct output points drawn uniformly with a seeded stream, in draw order. */
export function samplePoints(shape: OutputShape, count: number, seed: number): OutputIndex[] {
  const total = shape.N * shape.Ho * shape.Wo * shape.K;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ConvReferenceError('invalid-argument', `sample count must be a non-negative integer, got ${String(count)}`);
  }
  if (count > total) throw new ConvReferenceError('invalid-argument', `cannot draw ${count} distinct points from an output of ${total} elements`);
  const rng = createRng(seed);
  const seen = new Set<number>();
  const points: OutputIndex[] = [];
  while (points.length < count) {
    const index = rng.nextInt(total);
    if (seen.has(index)) continue;
    seen.add(index);
    points.push(outputPointOf(shape, index));
  }
  return points;
}

/** Pick `values[indices[i]]` for every i (e.g. a kernel's output at sampled points). */
export function gather<T extends Uint16Array | Float32Array>(values: T, indices: ArrayLike<number>): T {
  const out = new (values.constructor as new (n: number) => T)(indices.length);
  for (let i = 0; i < indices.length; i++) {
    const index = indices[i] as number;
    if (!Number.isInteger(index) || index < 0 || index >= values.length) {
      throw new ConvReferenceError('invalid-argument', `gather: index ${index} (entry ${i}) is outside the ${values.length} values`);
    }
    out[i] = values[index] as number;
  }
  return out;
}

/**
 * Exact reference values at the given output points (or `count` seeded random ones). Reads only
 * the receptive field of each point, so x may be arbitrarily large.
 */
export function convSample(problem: ConvProblem, x: Operand, w: Operand, at: SampleSpec): SampleOutput {
  const prepared = prepareConv(problem, x, w);
  const { geometry, shape, w32 } = prepared;
  const dtype = prepared.dtype;
  const points = Array.isArray(at) ? (at as readonly OutputIndex[]).map((p, i) => checkedPoint(geometry, p, i)) : randomPoints(geometry, at);
  // x values on demand: a table lookup for dtype bits, RNE rounding for fp32 input.
  const table = dtypeValueTable(dtype);
  const xs = prepared.x;
  const xValue = xs instanceof Uint16Array ? (i: number) => table[xs[i] as number] as number : (i: number) => roundToDtype(xs[i] as number, dtype);
  const { H, W, C, R, S, Cg, Kg } = shape;
  const y32 = new Float32Array(points.length);
  const indices = new Float64Array(points.length);
  points.forEach((pt, i) => {
    const cBase = Math.floor(pt.k / Kg) * Cg;
    const wK = pt.k * R * S * Cg;
    let acc = 0;
    for (let r = 0; r < R; r++) {
      const hi = pt.h * shape.strideH - shape.padH + r * shape.dilationH;
      if (hi < 0 || hi >= H) continue;
      for (let s = 0; s < S; s++) {
        const wi = pt.w * shape.strideW - shape.padW + s * shape.dilationW;
        if (wi < 0 || wi >= W) continue;
        const xo = ((pt.n * H + hi) * W + wi) * C + cBase;
        const wo = wK + (r * S + s) * Cg;
        for (let c = 0; c < Cg; c++) acc += xValue(xo + c) * (w32[wo + c] as number);
      }
    }
    y32[i] = acc;
    indices[i] = flatOutputIndex(geometry, pt);
  });
  return { geometry, points, indices, y32, y: encodeDtype(y32, dtype) };
}

function randomPoints(geometry: ConvGeometry, at: SampleSpec): OutputIndex[] {
  const spec = at as { count?: unknown; seed?: unknown };
  if (typeof spec !== 'object' || spec === null || typeof spec.count !== 'number' || typeof spec.seed !== 'number') {
    throw new ConvReferenceError('invalid-argument', 'sample spec must be an array of {n, h, w, k} points or {count, seed}');
  }
  if (!Number.isSafeInteger(spec.seed)) throw new ConvReferenceError('invalid-argument', `sample seed must be a safe integer, got ${spec.seed}`);
  return samplePoints(geometry, spec.count, spec.seed);
}

function checkedPoint(geometry: ConvGeometry, p: OutputIndex, i: number): OutputIndex {
  const limits: [keyof OutputIndex, number][] = [
    ['n', geometry.N],
    ['h', geometry.Ho],
    ['w', geometry.Wo],
    ['k', geometry.K],
  ];
  for (const [key, limit] of limits) {
    const v = p?.[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= limit) {
      throw new ConvReferenceError(
        'invalid-argument',
        `sample point ${i} ${JSON.stringify(p)}: ${key} must be an integer in [0, ${limit}) for output [N, Ho, Wo, K] = [${geometry.N}, ${geometry.Ho}, ${geometry.Wo}, ${geometry.K}]`,
      );
    }
  }
  return { n: p.n, h: p.h, w: p.w, k: p.k };
}
