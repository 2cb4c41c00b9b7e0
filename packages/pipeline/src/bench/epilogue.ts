/**
 * The fused epilogue of a bench run: its shape, written `act[:b32|:bd][:res]` on the command line
 * (`silu:b32:res` = silu, fp32 bias, residual), the scalars every launch uses, and the bias and
 * residual data. bench-prep compiles every candidate with the shape (split_c: its split-reduce
 * helpers), the manifest records it, and the bench binds these buffers and verifies against
 * @rocke/reference's applyEpilogue; cudnn_baseline.py times cuDNN's conv followed by PyTorch's own
 * bias, residual add and activation for the same shape.
 */
import { ACTIVATIONS, type Activation, type Epilogue } from '@rocke/ir';
import { randomTensor, type EpilogueValues } from '@rocke/reference';
import type { Dtype } from '../planner.js';

/** The scalars of a bench run: what a network folds in (alpha 1, beta 1), PyTorch's leaky slope, a relu6-like clamp. */
export const BENCH_EPILOGUE_SCALARS = { alpha: 1, beta: 1, slope: 0.01, lo: 0, hi: 6 } as const;

/** Parses `act[:b32|:bd][:res]`; a bad word is a reason string. */
export function parseEpilogueShape(text: string): Epilogue | string {
  const [act, ...rest] = text.split(':');
  if (!(ACTIVATIONS as readonly string[]).includes(act ?? '')) return `epilogue: the activation must be one of ${ACTIVATIONS.join(', ')} (got '${act ?? ''}')`;
  let bias: Epilogue['bias'] = 'none';
  let residual = false;
  for (const word of rest) {
    if (word === 'b32' && bias === 'none') bias = 'fp32';
    else if (word === 'bd' && bias === 'none') bias = 'dtype';
    else if (word === 'res' && !residual) residual = true;
    else return `epilogue: '${word}' is not b32, bd or res (each at most once; one bias kind)`;
  }
  const e: Epilogue = { act: act as Activation, bias, residual };
  if (e.act === 'none' && bias === 'none' && !residual) return 'epilogue: none:… with neither bias nor residual is the bare conv';
  return e;
}

/** The epilogue's tag as `parseEpilogueShape` reads it. */
export function epilogueShapeText(e: Epilogue): string {
  return [e.act, ...(e.bias === 'fp32' ? ['b32'] : e.bias === 'dtype' ? ['bd'] : []), ...(e.residual ? ['res'] : [])].join(':');
}

/** Seeded bias (`channels` fp32 values or dtype bits) and residual (y's elements, dtype bits) in [-1, 1), and the reference's values. */
export function benchEpilogueData(e: Epilogue, dtype: Dtype, channels: number, yElements: number, seed: number): { bias?: Float32Array | Uint16Array; residual?: Uint16Array; values: EpilogueValues } {
  const biasBits = e.bias === 'none' ? undefined : randomTensor(channels, dtype, seed);
  const bias = biasBits && e.bias === 'fp32' ? Float32Array.from(biasBits, (_, i) => ((i * 37) % 101) / 50 - 1) : biasBits;
  const residual = e.residual ? randomTensor(yElements, dtype, seed + 1) : undefined;
  const s = BENCH_EPILOGUE_SCALARS;
  const values: EpilogueValues = {
    act: e.act,
    alpha: s.alpha,
    ...(bias ? { bias } : {}),
    ...(residual ? { residual, beta: s.beta } : {}),
    ...(e.act === 'leaky_relu' ? { slope: s.slope } : {}),
    ...(e.act === 'clamp' ? { lo: s.lo, hi: s.hi } : {}),
  };
  return { ...(bias ? { bias } : {}), ...(residual ? { residual } : {}), values };
}
