/** Test support: a naive fp64 direct convolution and a tolerance check (conv-direct may not depend on @rocke/reference). */
import { bfloatFromBits, bfloatToBits, halfToBits, type Activation } from '@rocke/ir';
import type { EpilogueScalars } from '../abi.js';
import { problemGeometry, type Dtype, type Problem } from '../problem.js';

/** fp16 bits -> value. */
export function halfFromBits(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

export const fromBits = (dtype: Dtype) => (dtype === 'bf16' ? bfloatFromBits : halfFromBits);
export const toBits = (dtype: Dtype) => (dtype === 'bf16' ? bfloatToBits : halfToBits);

/** Deterministic values in [-1, 1) as dtype bits (xorshift32). */
export function randomBits(length: number, dtype: Dtype, seed: number): Uint16Array {
  let s = seed >>> 0 || 1;
  const enc = toBits(dtype);
  const out = new Uint16Array(length);
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = enc((s / 2 ** 32) * 2 - 1);
  }
  return out;
}

/** Naive NHWC x KRSC -> NHWK convolution in fp64 (dense or grouped, any stride and dilation). */
export function naiveConv(p: Problem, x: Uint16Array, w: Uint16Array): Float64Array {
  const g = problemGeometry(p);
  const dec = fromBits(p.dtype);
  const xv = Float64Array.from(x, dec);
  const wv = Float64Array.from(w, dec);
  const y = new Float64Array(p.N * g.Ho * g.Wo * p.K);
  for (let n = 0; n < p.N; n++)
    for (let oh = 0; oh < g.Ho; oh++)
      for (let ow = 0; ow < g.Wo; ow++)
        for (let k = 0; k < p.K; k++) {
          const grp = Math.floor(k / g.kpg);
          let sum = 0;
          for (let r = 0; r < p.R; r++) {
            const ih = oh * p.strideH - p.padH + r * p.dilationH;
            if (ih < 0 || ih >= p.H) continue;
            for (let s = 0; s < p.S; s++) {
              const iw = ow * p.strideW - p.padW + s * p.dilationW;
              if (iw < 0 || iw >= p.W) continue;
              const xo = ((n * p.H + ih) * p.W + iw) * p.C + grp * g.cpg;
              const wo = ((k * p.R + r) * p.S + s) * g.cpg;
              for (let c = 0; c < g.cpg; c++) sum += xv[xo + c]! * wv[wo + c]!;
            }
          }
          y[((n * g.Ho + oh) * g.Wo + ow) * p.K + k] = sum;
        }
  return y;
}

/**
 * First element whose kernel value is outside the fp32-accumulation tolerance, or null; plus the
 * count. `scaleRms` replaces rms(expected) in the absolute term (an epilogue's, see {@link withEpilogue}).
 */
export function mismatches(actual: ArrayLike<number>, expected: Float64Array, dtype: Dtype | 'fp32', reduction: number, scaleRms?: number): { count: number; first: { index: number; actual: number; expected: number } | null } {
  const bits = dtype === 'bf16' ? 8 : dtype === 'fp16' ? 11 : 24;
  let rms = 0;
  for (const v of expected) rms += v * v;
  rms = scaleRms ?? Math.sqrt(rms / Math.max(1, expected.length));
  const rtol = 1.125 * 2 ** (1 - bits);
  const atol = 2 ** -24 + 8 * 2 ** -24 * Math.sqrt(reduction) * rms;
  let count = 0;
  let first: { index: number; actual: number; expected: number } | null = null;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (!(Math.abs(a - e) <= rtol * Math.abs(e) + atol)) {
      count++;
      first ??= { index: i, actual: a, expected: e };
    }
  }
  return { count, first };
}

/** The problem restricted to channels [c0, c0 + cs) of x and w. */
export function channelSlice(p: Problem, x: Uint16Array, w: Uint16Array, c0: number, cs: number) {
  const xs = new Uint16Array((x.length / p.C) * cs);
  for (let i = 0; i < x.length / p.C; i++) xs.set(x.subarray(i * p.C + c0, i * p.C + c0 + cs), i * cs);
  const ws = new Uint16Array((w.length / p.C) * cs);
  for (let i = 0; i < w.length / p.C; i++) ws.set(w.subarray(i * p.C + c0, i * p.C + c0 + cs), i * cs);
  return { p: { ...p, C: cs }, x: xs, w: ws };
}

/** The fused epilogue's activations in fp64 (the tanh form of gelu). */
export function activate64(act: Activation, z: number, p: EpilogueScalars): number {
  switch (act) {
    case 'none': return z;
    case 'relu': return Math.max(z, 0);
    case 'relu6': return Math.min(Math.max(z, 0), 6);
    case 'leaky_relu': return z > 0 ? z : p.slope! * z;
    case 'silu': return z / (1 + Math.exp(-z));
    case 'hard_swish': return (z * Math.min(Math.max(z + 3, 0), 6)) / 6;
    case 'gelu': return 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3)));
    case 'sigmoid': return 1 / (1 + Math.exp(-z));
    case 'clamp': return Math.min(Math.max(z, p.lo!), p.hi!);
  }
}

/** Largest slope of each activation (how much an error in its input can grow). */
const GAIN: Record<Activation, number> = { none: 1, relu: 1, relu6: 1, leaky_relu: 1, silu: 1.1, hard_swish: 1.5, gelu: 1.13, sigmoid: 0.25, clamp: 1 };

/**
 * act(alpha*conv + bias[k] + beta*r) in fp64 over a naive conv's sums (NHWK), and the scale of the
 * tolerance's absolute term: gain * rms(|alpha*conv| + |bias| + |beta*r|), what a kernel rounds in fp32.
 */
export function withEpilogue(
  conv: Float64Array,
  K: number,
  dtype: Dtype,
  e: { act: Activation; scalars: EpilogueScalars; bias?: Float32Array | Uint16Array; residual?: Uint16Array },
): { expected: Float64Array; scaleRms: number } {
  const dec = fromBits(dtype);
  const alpha = e.scalars.alpha ?? 1;
  const beta = e.scalars.beta ?? 1;
  const expected = new Float64Array(conv.length);
  let squares = 0;
  for (let i = 0; i < conv.length; i++) {
    const a = alpha * conv[i]!;
    const b = e.bias ? (e.bias instanceof Float32Array ? e.bias[i % K]! : dec(e.bias[i % K]!)) : 0;
    const r = e.residual ? beta * dec(e.residual[i]!) : 0;
    expected[i] = activate64(e.act, a + b + r, e.scalars);
    squares += (Math.abs(a) + Math.abs(b) + Math.abs(r)) ** 2;
  }
  const gain = e.act === 'leaky_relu' ? Math.max(1, Math.abs(e.scalars.slope!)) : GAIN[e.act];
  return { expected, scaleRms: gain * Math.sqrt(squares / Math.max(1, conv.length)) };
}
