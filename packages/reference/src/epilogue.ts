// The fused epilogue a kernel applies at its store, in fp64:
//
//   y = act(alpha * conv + bias[k] + beta * r)
//
// with a per-output-channel bias, a residual r in y's layout (NHWK) and one activation. The
// reference applies it to its convolution sums and reports the scale its tolerance must use.
//
// Why the tolerance changes: a kernel computes z = alpha*acc + bias + beta*r in fp32 from its fp32
// sum, then act(z) in fp32, then rounds to the dtype. Its z differs from the fp64 z by the conv's
// fp32 summation error (scaled by alpha) plus a few fp32 roundings of the terms; act passes that
// on multiplied by at most its largest slope (its Lipschitz constant, ACTIVATION_GAIN). So the
// absolute tolerance is that of the bare conv with rms(expected) replaced by
// gain * rms(|alpha*conv| + |bias| + |beta*r|): the size of what was rounded, not of what came
// out (a sigmoid squeezes large sums into (0, 1) but not their errors' origin). The kernel's
// fp32 exp (1-2 ulp hardware approximations) moves act(z) by a relative 2^-22, far inside rtol.

import { decodeDtype, encodeDtype, type Dtype } from './dtype.js';
import { ConvReferenceError, checkBufferLength, type ConvGeometry } from './problem.js';
import type { Operand } from './conv.js';

/** The activations of the fused epilogue. */
export const ACTIVATIONS = ['none', 'relu', 'relu6', 'leaky_relu', 'silu', 'hard_swish', 'gelu', 'sigmoid', 'clamp'] as const;
export type Activation = (typeof ACTIVATIONS)[number];

/** The epilogue of one launch: its activation, scalars and tensors. */
export interface EpilogueValues {
  act: Activation;
  /** Scale of the convolution sum; default 1. */
  alpha?: number;
  /** Scale of the residual; default 1. Needs `residual`. */
  beta?: number;
  /** leaky_relu: the slope for negative inputs (required there). */
  slope?: number;
  /** clamp: the bounds, lo <= hi (required there). */
  lo?: number;
  hi?: number;
  /** Per output channel, length K: fp32 values used as they are, or 16-bit patterns of the problem's dtype. */
  bias?: Float32Array | Uint16Array;
  /** In y's layout [N, Ho, Wo, K]: dtype bits, or fp32 values rounded to the dtype first. */
  residual?: Operand;
}

/** What {@link applyEpilogue} computed. */
export interface EpilogueOutput {
  /** The fp64 epilogue rounded to fp32. */
  y32: Float32Array;
  /** y32 rounded to the dtype (RNE). */
  y: Uint16Array;
  /** The scale for compare()'s absolute tolerance: gain * rms(|alpha*conv| + |bias| + |beta*r|). */
  sumRms: number;
}

/** Largest |act'(z)| over z: how much an input error can grow through the activation. */
export function activationGain(act: Activation, slope = 0): number {
  switch (act) {
    case 'leaky_relu': return Math.max(1, Math.abs(slope));
    case 'silu': return 1.1; // max of silu' is 1.0998 (z = 2.40)
    case 'gelu': return 1.13; // max of the tanh form's slope is 1.1289 (z = 1.45)
    case 'hard_swish': return 1.5; // (2z + 3) / 6 at z = 3
    case 'sigmoid': return 0.25;
    default: return 1;
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** act(z) in fp64. `slope`, `lo`, `hi` as in {@link EpilogueValues}. */
export function activate(act: Activation, z: number, p: { slope?: number; lo?: number; hi?: number } = {}): number {
  switch (act) {
    case 'none': return z;
    case 'relu': return z > 0 ? z : 0;
    case 'relu6': return z > 0 ? Math.min(z, 6) : 0;
    case 'leaky_relu': return z > 0 ? z : (p.slope as number) * z;
    case 'silu': return z / (1 + Math.exp(-z));
    case 'hard_swish': return (z * Math.min(Math.max(z + 3, 0), 6)) / 6;
    case 'gelu': return 0.5 * z * (1 + Math.tanh(GELU_C * (z + 0.044715 * z * z * z)));
    case 'sigmoid': return 1 / (1 + Math.exp(-z));
    case 'clamp': return Math.min(Math.max(z, p.lo as number), p.hi as number);
  }
}

/**
 * The epilogue over convolution sums of `geometry`: the whole output (`sums` of length
 * yElements), or the outputs at flat indices `indices` (a sample's). Throws
 * {@link ConvReferenceError} on a missing parameter or a buffer of the wrong length.
 */
export function applyEpilogue(geometry: ConvGeometry, sums: Float32Array | Float64Array, epilogue: EpilogueValues, indices?: ArrayLike<number>): EpilogueOutput {
  const dtype = geometry.problem.dtype;
  checkEpilogue(epilogue);
  if (indices) checkBufferLength('sums', sums.length, indices.length, 'one per index');
  else checkBufferLength('sums', sums.length, geometry.yElements, 'N*Ho*Wo*K');
  const bias = epilogue.bias ? biasValues(epilogue.bias, geometry.K, dtype) : undefined;
  const residual = epilogue.residual ? residualValues(epilogue.residual, geometry.yElements, dtype) : undefined;
  const alpha = epilogue.alpha ?? 1;
  const beta = epilogue.beta ?? 1;
  const out = new Float64Array(sums.length);
  let sumSquares = 0;
  for (let i = 0; i < sums.length; i++) {
    const at = indices ? (indices[i] as number) : i;
    const scaled = alpha * (sums[i] as number);
    const b = bias ? (bias[at % geometry.K] as number) : 0;
    const r = residual ? beta * (residual[at] as number) : 0;
    out[i] = activate(epilogue.act, scaled + b + r, epilogue);
    const size = Math.abs(scaled) + Math.abs(b) + Math.abs(r);
    sumSquares += size * size;
  }
  const y32 = Float32Array.from(out);
  const rms = sums.length > 0 ? Math.sqrt(sumSquares / sums.length) : 0;
  return { y32, y: encodeDtype(y32, dtype), sumRms: activationGain(epilogue.act, epilogue.slope) * rms };
}

function checkEpilogue(e: EpilogueValues): void {
  const bad = (why: string): never => {
    throw new ConvReferenceError('invalid-argument', `epilogue: ${why}`);
  };
  if (!(ACTIVATIONS as readonly string[]).includes(e.act)) bad(`act must be one of ${ACTIVATIONS.join(', ')}, got ${String(e.act)}`);
  for (const key of ['alpha', 'beta', 'slope', 'lo', 'hi'] as const) {
    const v = e[key];
    if (v !== undefined && !Number.isFinite(v)) bad(`${key} must be a finite number, got ${String(v)}`);
  }
  if (e.act === 'leaky_relu' && e.slope === undefined) bad('leaky_relu needs a slope');
  if (e.act === 'clamp' && (e.lo === undefined || e.hi === undefined || !(e.lo <= e.hi))) bad(`clamp needs lo <= hi, got lo ${String(e.lo)}, hi ${String(e.hi)}`);
  if (e.beta !== undefined && !e.residual) bad('beta scales the residual; there is none');
}

function biasValues(bias: Float32Array | Uint16Array, K: number, dtype: Dtype): Float32Array {
  if (!(bias instanceof Float32Array) && !(bias instanceof Uint16Array)) {
    throw new ConvReferenceError('invalid-argument', 'epilogue: bias must be a Float32Array (fp32) or a Uint16Array (dtype bits)');
  }
  checkBufferLength('bias', bias.length, K, 'K');
  return bias instanceof Uint16Array ? decodeDtype(bias, dtype) : bias;
}

function residualValues(residual: Operand, yElements: number, dtype: Dtype): Float32Array {
  if (!(residual instanceof Float32Array) && !(residual instanceof Uint16Array)) {
    throw new ConvReferenceError('invalid-argument', 'epilogue: residual must be a Uint16Array (dtype bits) or a Float32Array');
  }
  checkBufferLength('residual', residual.length, yElements, 'N*Ho*Wo*K');
  return decodeDtype(residual instanceof Uint16Array ? residual : encodeDtype(residual, dtype), dtype);
}
