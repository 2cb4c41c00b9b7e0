/** Deterministic test inputs for the interpreter tests (not exported from the package). */
import type { Activation } from '@rocke/ir';

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

/** The store epilogue's arithmetic on the host, operation for operation as @rocke/ir emits it (fp32 after each). */
export interface HostEpilogue {
  act: Activation;
  alpha: number;
  beta: number;
  slope: number;
  lo: number;
  hi: number;
}

const f = Math.fround;
const maxnum = (a: number, b: number) => (a !== a ? b : b !== b ? a : Math.max(a, b));
const minnum = (a: number, b: number) => (a !== a ? b : b !== b ? a : Math.min(a, b));

/** act(alpha*sum + bias + beta*r) in fp32; `bias`/`r` undefined when absent. */
export function hostEpilogue(e: HostEpilogue, sum: number, bias: number | undefined, r: number | undefined): number {
  let z = f(sum * f(e.alpha));
  if (bias !== undefined) z = f(z + bias);
  if (r !== undefined) z = f(z + f(r * f(e.beta)));
  const exp2 = (x: number) => f(2 ** x);
  const over = (num: number, power: number) => f(num / f(exp2(power) + 1));
  switch (e.act) {
    case 'none': return z;
    case 'relu': return maxnum(z, 0);
    case 'relu6': return minnum(maxnum(z, 0), 6);
    case 'leaky_relu': return z > 0 ? z : f(z * f(e.slope));
    case 'clamp': return minnum(maxnum(z, f(e.lo)), f(e.hi));
    case 'hard_swish': return f(f(z * minnum(maxnum(f(z + 3), 0), 6)) * f(1 / 6));
    case 'sigmoid': return over(1, f(z * f(-Math.LOG2E)));
    case 'silu': return over(z, f(z * f(-Math.LOG2E)));
    case 'gelu': {
      const k1 = f(-2 * Math.LOG2E * Math.sqrt(2 / Math.PI));
      const k2 = f(0.044715 * (-2 * Math.LOG2E * Math.sqrt(2 / Math.PI)));
      return over(z, f(z * f(f(f(z * z) * k2) + k1)));
    }
  }
}
