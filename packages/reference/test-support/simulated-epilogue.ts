// Test-only: the fused epilogue as a kernel computes it, in fp32 on the fp32 sum. Every operation
// rounds to fp32; exp is exp2 of a rounded product whose result is then off by a relative 2^-22
// (as bad as the hardware approximations get), and the smooth activations use the forms a kernel
// can lower with exp alone: sigmoid(z) = 1/(1 + 2^(-z*log2 e)), silu(z) = z/(1 + 2^(-z*log2 e)),
// gelu(z) = z/(1 + 2^(z*(k1 + k2*z^2))) (the tanh form rewritten: 0.5*(1 + tanh u) = 1/(1 + e^-2u)).
// `dropBias` and `act` overrides inject the bugs the tolerance must catch.
import type { Activation } from '../src/epilogue.js';

export interface KernelEpilogue {
  act: Activation;
  alpha: number;
  beta: number;
  slope: number;
  lo: number;
  hi: number;
  /** fp32 values per output channel, or none. */
  bias?: Float32Array;
  /** fp32 values in y's layout, or none. */
  residual?: Float32Array;
}

const f = Math.fround;
const LOG2E = Math.LOG2E;
const K1 = -2 * Math.LOG2E * Math.sqrt(2 / Math.PI);
const K2 = K1 * 0.044715;

/** 2^t in fp32, off by a relative 2^-22 in a sign that alternates with the input's bits. */
function exp2Approx(t: number): number {
  const exact = f(2 ** t);
  const bits = new Uint32Array(Float32Array.of(t).buffer)[0] as number;
  return f(exact * (1 + ((bits & 1) === 0 ? 2 ** -22 : -(2 ** -22))));
}

export function kernelActivate(act: Activation, z: number, e: KernelEpilogue): number {
  switch (act) {
    case 'none': return z;
    case 'relu': return Math.max(z, 0);
    case 'relu6': return Math.min(Math.max(z, 0), 6);
    case 'leaky_relu': return z > 0 ? z : f(e.slope * z);
    case 'clamp': return Math.min(Math.max(z, e.lo), e.hi);
    case 'hard_swish': return f(f(z * Math.min(Math.max(f(z + 3), 0), 6)) * f(1 / 6));
    case 'sigmoid': return f(1 / f(1 + exp2Approx(f(-z * f(LOG2E)))));
    case 'silu': return f(z / f(1 + exp2Approx(f(-z * f(LOG2E)))));
    case 'gelu': return f(z / f(1 + exp2Approx(f(z * f(f(K1) + f(f(K2) * f(z * z)))))));
  }
}

/** y = act(alpha*acc + bias[k] + beta*r) in fp32 over fp32 sums `acc` [..., K]. */
export function kernelEpilogue(acc: Float32Array, K: number, e: KernelEpilogue): Float32Array {
  const out = new Float32Array(acc.length);
  for (let i = 0; i < acc.length; i++) {
    let z = f(e.alpha * (acc[i] as number));
    if (e.bias) z = f(z + (e.bias[i % K] as number));
    if (e.residual) z = f(z + f(e.beta * (e.residual[i] as number)));
    out[i] = kernelActivate(e.act, z, e);
  }
  return out;
}
