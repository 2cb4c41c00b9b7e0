// Seeded, platform-independent random numbers for test data and sampled output points.
// xoshiro128** (Blackman & Vigna) seeded through splitmix32: the same seed gives the same stream in
// every process, on every machine, in the main thread and in workers.

import { encodeDtype, type Dtype } from './dtype.js';

/** A deterministic pseudo-random stream. */
export interface Rng {
  /** Next uniform 32-bit unsigned integer. */
  nextUint32(): number;
  /** Next uniform double in [0, 1) with 53 random bits. */
  nextFloat(): number;
  /** Next uniform integer in [0, bound), bound a positive safe integer (may exceed 2^32). */
  nextInt(bound: number): number;
}

/** A seeded xoshiro128** stream. `seed` must be a safe integer (negative is fine). */
export function createRng(seed: number): Rng {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`createRng: seed must be a safe integer, got ${String(seed)}`);
  // splitmix32 over the low and high halves of the seed fills the 128-bit state.
  let sm = (seed >>> 0) ^ Math.imul(Math.floor(seed / 0x100000000) >>> 0, 0x9e3779b9);
  const splitmix = (): number => {
    sm = (sm + 0x9e3779b9) | 0;
    let z = sm;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let s0 = splitmix();
  let s1 = splitmix();
  let s2 = splitmix();
  let s3 = splitmix();
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1; // the all-zero state is a fixed point
  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
  const nextFloat = (): number => ((nextUint32() >>> 5) * 0x4000000 + (nextUint32() >>> 6)) / 2 ** 53;
  const nextInt = (bound: number): number => {
    if (!Number.isSafeInteger(bound) || bound < 1) throw new RangeError(`nextInt: bound must be a positive safe integer, got ${String(bound)}`);
    // Rejection keeps the draw unbiased: only accept floats below the largest multiple of bound.
    const limit = Math.floor(2 ** 53 / bound) * bound;
    for (;;) {
      const r = nextFloat() * 2 ** 53;
      if (r < limit) return r % bound;
    }
  };
  return { nextUint32, nextFloat, nextInt };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/**
 * `length` values drawn uniformly from [min, max) with a seeded stream, rounded to `dtype` (RNE),
 * as 16-bit patterns. The default range is [-1, 1), the range the upstream tests use.
 */
export function randomTensor(length: number, dtype: Dtype, seed: number, min = -1, max = 1): Uint16Array {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`randomTensor: length must be a non-negative safe integer, got ${String(length)}`);
  if (!Number.isFinite(min) || !Number.isFinite(max) || !(min < max)) {
    throw new RangeError(`randomTensor: need finite min < max, got [${String(min)}, ${String(max)})`);
  }
  const rng = createRng(seed);
  const values = new Float64Array(length);
  const span = max - min;
  for (let i = 0; i < length; i++) values[i] = min + span * rng.nextFloat();
  return encodeDtype(values, dtype);
}
