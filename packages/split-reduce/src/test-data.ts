/** Deterministic test inputs for the interpreter tests (not exported from the package). */

/** mulberry32: a small deterministic PRNG (uniform in [0, 1)). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A `[splits, count]` workspace whose fold depends on the order of the additions. A quarter of the
 * elements cancel: slice 0 holds +L and slice 1 holds -L (L up to 2^26), the rest small values,
 * so the fixed order keeps the small ones exactly while any other order loses them to rounding
 * at L's magnitude. The others mix magnitudes 2^-20..2^20 of both signs, sums past the fp16
 * range, fp16 subnormals and fp32 denormals. Never NaN or Inf.
 */
export function partialSums(count: number, splits: number, seed: number): Float32Array {
  const r = rng(seed);
  const out = new Float32Array(count * splits);
  const sign = () => (r() < 0.5 ? -1 : 1);
  for (let i = 0; i < count; i++) {
    const cancel = splits >= 3 && r() < 0.25;
    const big = sign() * 2 ** (20 + Math.floor(r() * 7));
    for (let s = 0; s < splits; s++) {
      const kind = r();
      let v: number;
      if (cancel && s < 2) v = s === 0 ? big : -big;
      else if (cancel) v = sign() * (1 + r()) * 2 ** Math.floor(r() * 6 - 3);
      else if (kind < 0.02) v = sign() * 1e-40; // fp32 denormal
      else if (kind < 0.05) v = sign() * (1 + r()) * 2 ** -20; // fp16 subnormal range
      else v = sign() * (1 + r()) * 2 ** Math.floor(r() * 41 - 20);
      out[s * count + i] = v;
    }
  }
  return out;
}
