import { describe, expect, it } from 'vitest';
import { kernelEpilogue, type KernelEpilogue } from '../test-support/simulated-epilogue.js';
import { simulateKernel } from '../test-support/simulated-kernel.js';
import { compare } from './compare.js';
import { convForward } from './conv.js';
import { decodeDtype, encodeDtype, type Dtype } from './dtype.js';
import { ACTIVATIONS, activate, activationGain, applyEpilogue, type Activation, type EpilogueValues } from './epilogue.js';
import { makeProblem } from './problem.js';
import { randomTensor } from './random.js';
import { convSample, gather } from './sample.js';

const PARAMS = { slope: 0.1, lo: -1.5, hi: 2.5 };

describe('activate: the activations in fp64', () => {
  it('computes known values', () => {
    expect(activate('none', -3)).toBe(-3);
    expect(activate('relu', -1)).toBe(0);
    expect(activate('relu', 2)).toBe(2);
    expect(activate('relu6', 7)).toBe(6);
    expect(activate('relu6', -7)).toBe(0);
    expect(activate('leaky_relu', -2, { slope: 0.1 })).toBeCloseTo(-0.2, 15);
    expect(activate('silu', 1)).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
    expect(activate('hard_swish', 1)).toBeCloseTo(4 / 6, 15);
    expect(activate('hard_swish', -4)).toBe(-0);
    expect(activate('hard_swish', 4)).toBe(4);
    expect(activate('gelu', 1)).toBeCloseTo(0.8411919906082768, 14);
    expect(activate('sigmoid', 0)).toBe(0.5);
    expect(activate('clamp', 5, { lo: -1, hi: 2 })).toBe(2);
    expect(activate('clamp', -5, { lo: -1, hi: 2 })).toBe(-1);
  });

  it('gives each activation a gain that bounds its slope, and tightly', () => {
    for (const act of ACTIVATIONS) {
      let steepest = 0;
      for (let z = -12; z < 12; z += 1 / 256) {
        const h = 1e-6;
        steepest = Math.max(steepest, Math.abs(activate(act, z + h, PARAMS) - activate(act, z - h, PARAMS)) / (2 * h));
      }
      const gain = activationGain(act, PARAMS.slope);
      expect(steepest, act).toBeLessThanOrEqual(gain * (1 + 1e-6));
      expect(steepest, act).toBeGreaterThan(gain * 0.99);
    }
  });
});

/** A conv with an epilogue whose pre-activation values spread over [-12, 12] (rms ~4.5). */
function setup(dtype: Dtype, biasKind: 'fp32' | 'dtype') {
  const p = makeProblem({ N: 2, H: 6, W: 6, C: 64, K: 32, R: 3, S: 3, padH: 1, padW: 1, dtype });
  const x = randomTensor(p.N * p.H * p.W * p.C, dtype, 11);
  const w = randomTensor(p.K * 9 * p.C, dtype, 12);
  const ref = convForward(p, x, w);
  const g = ref.geometry;
  const biasBits = randomTensor(p.K, dtype, 13, -2, 2);
  const bias = biasKind === 'fp32' ? Float32Array.from(decodeDtype(biasBits, dtype), (v, i) => v + (i % 3) * 2 ** -12) : biasBits;
  const residual = randomTensor(g.yElements, dtype, 14, -2, 2);
  const acc = simulateKernel(p, decodeDtype(x, dtype), decodeDtype(w, dtype), { ck: 16 });
  const values = (act: Activation): EpilogueValues => ({ act, alpha: 0.5, beta: 0.75, ...PARAMS, bias, residual });
  const raw = (act: Activation, drop: { bias?: boolean; residual?: boolean } = {}): Float32Array => {
    const e: KernelEpilogue = {
      act,
      alpha: 0.5,
      beta: 0.75,
      ...PARAMS,
      bias: drop.bias ? undefined : bias instanceof Uint16Array ? decodeDtype(bias, dtype) : bias,
      residual: drop.residual ? undefined : decodeDtype(residual, dtype),
    };
    return kernelEpilogue(acc, p.K, e);
  };
  const kernel = (act: Activation, drop: { bias?: boolean; residual?: boolean } = {}): Uint16Array => encodeDtype(raw(act, drop), dtype);
  return { p, x, w, ref, g, values, raw, kernel };
}

describe('compare with an epilogue: passes correct kernels, fails a dropped bias or a wrong activation', () => {
  for (const dtype of ['bf16', 'fp16'] as Dtype[]) {
    for (const biasKind of ['fp32', 'dtype'] as const) {
      it(`${dtype}, ${biasKind} bias, residual, alpha and beta: every activation`, () => {
        const { g, ref, values, raw, kernel } = setup(dtype, biasKind);
        for (const act of ACTIVATIONS) {
          const expected = applyEpilogue(g, ref.y32, values(act));
          const layout = { ...g, sumRms: expected.sumRms };
          const good = compare(kernel(act), expected.y, dtype, layout);
          expect(good.pass, `${act}: ${JSON.stringify(good)}`).toBe(true);
          if (process.env.REFERENCE_TOLERANCE_STATS) console.log(dtype, biasKind, act, good.worstRatio.toFixed(3));
          // Not vacuous: the fp32 kernel differs from the fp64 reference before rounding to the dtype.
          const fp32 = raw(act);
          expect(fp32.filter((v, i) => v !== expected.y32[i]).length, act).toBeGreaterThan(g.yElements / 4);
          for (const drop of [{ bias: true }, { residual: true }]) {
            const bad = compare(kernel(act, drop), expected.y, dtype, layout);
            expect(bad.pass, `${act} without ${Object.keys(drop)[0]} passed`).toBe(false);
            expect(bad.mismatches, act).toBeGreaterThan(g.yElements / 4);
          }
          for (const other of ACTIVATIONS) {
            if (other === act) continue;
            const bad = compare(kernel(other), expected.y, dtype, layout);
            expect(bad.pass, `${other} in place of ${act} passed`).toBe(false);
            expect(bad.mismatches, `${other} for ${act}`).toBeGreaterThan(g.yElements / 50);
          }
        }
      });
    }
  }

  it('applies to sampled points the same values as to the whole output', () => {
    const { p, x, w, g, ref, values } = setup('bf16', 'dtype');
    const s = convSample(p, x, w, { count: 200, seed: 3 });
    const whole = applyEpilogue(g, ref.y32, values('gelu'));
    const sampled = applyEpilogue(g, s.y32, values('gelu'), s.indices);
    expect(Array.from(sampled.y)).toEqual(Array.from(gather(whole.y, s.indices)));
    expect(compare(gather(whole.y, s.indices), sampled.y, 'bf16', { ...s, sumRms: sampled.sumRms }).pass).toBe(true);
  });

  it('uses the sum scale, not the squeezed output, for the absolute tolerance', () => {
    const { g, ref, values } = setup('bf16', 'fp32');
    const out = applyEpilogue(g, ref.y32, values('sigmoid'));
    const outRms = Math.sqrt(out.y32.reduce((a, v) => a + v * v, 0) / out.y32.length);
    expect(out.sumRms).toBeGreaterThan(outRms);
  });
});

describe('applyEpilogue: bad input', () => {
  const { g, ref } = setup('bf16', 'dtype');
  it('names what is wrong', () => {
    expect(() => applyEpilogue(g, ref.y32, { act: 'leaky_relu' })).toThrow(/leaky_relu needs a slope/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'clamp', lo: 2, hi: 1 })).toThrow(/clamp needs lo <= hi/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'swish' as Activation })).toThrow(/act must be one of/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'relu', beta: 2 })).toThrow(/beta scales the residual/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'relu', alpha: NaN })).toThrow(/alpha must be a finite number/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'relu', bias: new Float32Array(3) })).toThrow(/bias holds 3 elements but the problem needs K = 32/);
    expect(() => applyEpilogue(g, ref.y32, { act: 'relu', residual: new Uint16Array(3) })).toThrow(/residual holds 3 elements/);
    expect(() => applyEpilogue(g, ref.y32.subarray(1), { act: 'relu' })).toThrow(/sums holds/);
  });
});
