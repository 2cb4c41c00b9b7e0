import { describe, expect, it } from 'vitest';
import { simulateKernel, type KernelSimulation } from '../test-support/simulated-kernel.js';
import { compare, toleranceFor } from './compare.js';
import { convForward, convForwardChunks, convSample } from './index.js';
import { decodeDtype, encodeDtype, fromDtypeBits, type Dtype } from './dtype.js';
import { makeProblem, type ConvProblem } from './problem.js';
import { randomTensor } from './random.js';
import { gather, outputPointOf } from './sample.js';

interface Case {
  name: string;
  problem: ConvProblem;
  min: number;
  max: number;
  /** A lost channel chunk of 16 channels, scaled to the case. */
  dropChannels: [number, number];
}

const cases: Case[] = [];
for (const dtype of ['bf16', 'fp16'] as Dtype[]) {
  cases.push(
    {
      name: `${dtype} C=256 K=64 3x3, inputs in [-1, 1]`,
      problem: makeProblem({ N: 1, H: 6, W: 6, C: 256, K: 64, R: 3, S: 3, padH: 1, padW: 1, dtype }),
      min: -1,
      max: 1,
      dropChannels: [16, 32],
    },
    {
      name: `${dtype} C=2048 3x3 (reduction of 18432), inputs in [-1, 1]`,
      problem: makeProblem({ N: 1, H: 4, W: 4, C: 2048, K: 8, R: 3, S: 3, padH: 1, padW: 1, dtype }),
      min: -1,
      max: 1,
      dropChannels: [1024, 1040],
    },
    {
      name: `${dtype} C=256 K=32 3x3, same-sign inputs in [0, 1]`,
      problem: makeProblem({ N: 1, H: 5, W: 5, C: 256, K: 32, R: 3, S: 3, padH: 1, padW: 1, dtype }),
      min: 0,
      max: 1,
      dropChannels: [240, 256],
    },
  );
}

function setup(c: Case, seed: number) {
  const p = c.problem;
  const x = randomTensor(p.N * p.H * p.W * p.C, p.dtype, seed, c.min, c.max);
  const w = randomTensor(p.K * p.R * p.S * (p.C / p.groups), p.dtype, seed + 1, c.min, c.max);
  const ref = convForward(p, x, w);
  const xs = decodeDtype(x, p.dtype);
  const ws = decodeDtype(w, p.dtype);
  const raw = (sim: KernelSimulation): Float32Array => simulateKernel(p, xs, ws, sim);
  const kernel = (sim: KernelSimulation): Uint16Array => encodeDtype(raw(sim), p.dtype);
  return { p, ref, raw, kernel };
}

describe('compare: the tolerance passes correct kernels and fails broken ones', () => {
  for (const c of cases) {
    it(c.name, () => {
      const { p, ref, raw, kernel } = setup(c, 100);
      const g = ref.geometry;
      // Correct kernels: fp32 accumulation in other orders (channel chunks of 16 and 64, split_c
      // over 4 ranges), rounded to the dtype. They really differ from the reference in fp32 ...
      const g32 = ref.y32;
      const rms = Math.sqrt(g32.reduce((acc, v) => acc + v * v, 0) / g32.length);
      const unit = 2 ** -24 * Math.sqrt(g.reductionLength) * rms;
      for (const sim of [{ ck: 16 }, { ck: 64, splits: 4 }]) {
        // The fp32-vs-fp64 sum difference, before any dtype rounding, stays well inside the 8 units
        // the atol term allows (the module comment of compare.ts quotes the measured range).
        const fp32 = raw(sim);
        let worst = 0;
        for (let i = 0; i < fp32.length; i++) worst = Math.max(worst, Math.abs((fp32[i] as number) - (g32[i] as number)));
        expect(worst).toBeGreaterThan(0);
        expect(worst / unit).toBeLessThan(4);
        const good = kernel(sim);
        const report = compare(good, ref.y, p.dtype, g);
        expect(report.pass, JSON.stringify(report)).toBe(true);
        expect(report.mismatches).toBe(0);
        expect(report.firstBad).toBeNull();
        expect(report.worstRatio).toBeLessThan(1);
        if (process.env.REFERENCE_TOLERANCE_STATS) console.log(c.name, 'good', JSON.stringify(sim), report.worstRatio.toFixed(3));
      }
      // ... broken kernels: one lost chunk of 16 channels, or one lost filter tap.
      for (const sim of [{ dropChannels: c.dropChannels }, { dropTap: [1, 2] as [number, number] }, { dropTap: [0, 0] as [number, number] }]) {
        const bad = kernel({ ck: 16, ...sim });
        const report = compare(bad, ref.y, p.dtype, g);
        expect(report.pass, `${JSON.stringify(sim)} passed`).toBe(false);
        // Not a borderline call: most outputs are off.
        expect(report.mismatches).toBeGreaterThan(g.yElements / 2);
        if (process.env.REFERENCE_TOLERANCE_STATS) console.log(c.name, 'bad', JSON.stringify(sim), report.mismatches, '/', g.yElements);
        const first = report.firstBad;
        expect(first).not.toBeNull();
        expect(outputPointOf(g, first?.index ?? -1)).toEqual({ n: first?.n, h: first?.h, w: first?.w, k: first?.k });
      }
    });
  }

  it('is not vacuous: correct simulated kernels differ from the reference in fp32, and after rounding', () => {
    for (const c of cases.filter((k) => k.min < 0 && k.problem.C === 256)) {
      const { p, ref, raw } = setup(c, 100);
      const y = raw({ ck: 16 });
      let fp32Differs = 0;
      for (let i = 0; i < y.length; i++) if (y[i] !== ref.y32[i]) fp32Differs++;
      expect(fp32Differs).toBeGreaterThan(y.length / 4);
      if (p.dtype === 'fp16') {
        // fp16 keeps 11 bits, so here some outputs land on the other side of a rounding boundary.
        const rounded = encodeDtype(y, 'fp16');
        let dtypeDiffers = 0;
        for (let i = 0; i < y.length; i++) if (rounded[i] !== ref.y[i]) dtypeDiffers++;
        expect(dtypeDiffers).toBeGreaterThan(0);
        expect(compare(rounded, ref.y, 'fp16', ref.geometry).pass).toBe(true);
      }
    }
  });
});

describe('compare: reporting', () => {
  const p = makeProblem({ N: 2, H: 3, W: 4, C: 8, K: 5, R: 1, S: 1, dtype: 'bf16' });
  const x = randomTensor(2 * 3 * 4 * 8, 'bf16', 3);
  const w = randomTensor(5 * 8, 'bf16', 4);
  const ref = convForward(p, x, w);
  const g = ref.geometry;

  it('reports identical outputs as a pass with zero error', () => {
    const report = compare(ref.y, ref.y, 'bf16', g);
    expect(report).toMatchObject({ count: g.yElements, maxAbs: 0, maxRel: 0, mismatches: 0, firstBad: null, worstRatio: 0, pass: true });
  });

  it('finds one element three units in the last place off, and names its (n, h, w, k)', () => {
    const bad = ref.y.slice();
    const index = 77; // (n=1, h=0, w=3, k=2) in [2, 3, 4, 5]
    bad[index] = (bad[index] as number) + 3;
    const report = compare(bad, ref.y, 'bf16', g);
    expect(report.pass).toBe(false);
    expect(report.mismatches).toBe(1);
    expect(report.firstBad).toEqual({
      index,
      n: 1,
      h: 0,
      w: 3,
      k: 2,
      actual: fromDtypeBits(bad[index] as number, 'bf16'),
      expected: fromDtypeBits(ref.y[index] as number, 'bf16'),
    });
    expect(report.maxAbs).toBe(Math.abs(fromDtypeBits(bad[index] as number, 'bf16') - fromDtypeBits(ref.y[index] as number, 'bf16')));
    expect(report.maxRel).toBeCloseTo(report.maxAbs / Math.abs(fromDtypeBits(ref.y[index] as number, 'bf16')), 12);
  });

  it('accepts fp32 actual values against dtype bits, and one unit in the last place', () => {
    const fp32 = compare(ref.y32, ref.y, 'bf16', g);
    expect(fp32.pass).toBe(true);
    expect(fp32.maxAbs).toBeGreaterThan(0);
    const oneUlp = ref.y.map((b) => (b & 0x7f) === 0x7f ? b : b + 1);
    expect(compare(oneUlp, ref.y, 'bf16', g).pass).toBe(true);
  });

  it('reports sampled comparisons by point', () => {
    const s = convSample(p, x, w, { count: 10, seed: 2 });
    const actual = gather(ref.y, s.indices);
    expect(compare(actual, s.y, 'bf16', s).pass).toBe(true);
    actual[4] = (actual[4] as number) ^ 0x8000; // flip a sign
    const report = compare(actual, s.y, 'bf16', s);
    expect(report.mismatches).toBe(1);
    expect(report.firstBad).toMatchObject({ index: 4, ...s.points[4] });
  });

  it('compares chunk by chunk with the chunk shape, counting n from the chunk start', () => {
    const per = g.yImageElements;
    const kernelY = ref.y.slice();
    kernelY[per + 7] = (kernelY[per + 7] as number) ^ 0x8000; // image 1, (h=0, w=1, k=2)
    const reports = [...convForwardChunks(p, x, w, { budgetBytes: 3 * 4 * 8 * 4 })].map((chunk) =>
      compare(kernelY.subarray(chunk.n0 * per, (chunk.n0 + chunk.count) * per), chunk.y, 'bf16', { ...g, N: chunk.count }),
    );
    expect(reports.map((r) => r.pass)).toEqual([true, false]);
    expect(reports[1]?.firstBad).toMatchObject({ index: 7, n: 0, h: 0, w: 1, k: 2 });
  });

  it('treats NaN and infinities: same matches, different mismatches with infinite error', () => {
    const e = Float32Array.of(1, NaN, Infinity, -Infinity);
    expect(compare(Float32Array.of(1, NaN, Infinity, -Infinity), e, 'fp16').pass).toBe(true);
    const r = compare(Float32Array.of(1, 0, Infinity, Infinity), e, 'fp16');
    expect(r).toMatchObject({ mismatches: 2, maxAbs: Infinity, pass: false, firstBad: { index: 1, actual: 0 } });
    expect(compare(Float32Array.of(NaN), Float32Array.of(1), 'bf16').pass).toBe(false);
  });

  it('documents its tolerance numbers', () => {
    expect(toleranceFor('bf16', 1, 0)).toEqual({ rtol: 1.125 * 2 ** -7, atol: 2 ** -133 });
    expect(toleranceFor('fp16', 2304, 2)).toEqual({ rtol: 1.125 * 2 ** -10, atol: 2 ** -24 + 8 * 2 ** -24 * 48 * 2 });
  });

  it('rejects mismatched lengths and shapes with reasons', () => {
    expect(() => compare(new Uint16Array(3), new Uint16Array(4), 'bf16')).toThrow(/actual has 3 elements, expected 4/);
    expect(() => compare(ref.y, ref.y, 'bf16', { N: 1, Ho: 3, Wo: 4, K: 5 })).toThrow(/\[N, Ho, Wo, K\] = \[1, 3, 4, 5\] has 60 elements, the values 120/);
    expect(() => compare(new Uint16Array(2), new Uint16Array(2), 'bf16', { points: [{ n: 0, h: 0, w: 0, k: 0 }] })).toThrow(/1 points for 2 values/);
    expect(() => compare([1] as unknown as Float32Array, Float32Array.of(1), 'bf16')).toThrow(/values must be a Uint16Array/);
    expect(() => toleranceFor('bf16', 0, 1)).toThrow(/reductionLength must be >= 1/);
  });
});
