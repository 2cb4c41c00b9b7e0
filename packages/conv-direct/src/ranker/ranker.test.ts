import { describe, expect, it } from 'vitest';
import { problemCandidates } from '../candidates.js';
import type { Problem } from '../problem.js';
import { kernelName, type Spec } from '../spec.js';
import { spillFilter } from '../spill.js';
import { TARGET_NAMES } from '../targets.js';
import { estimateCost } from '../cost-model.js';
import { evaluateRanker, fitRanker, leaveOneClassOut, leaveOneShapeOut, rowsFromBenchDetails, type RankerRows } from './fit.js';
import { splitTrials } from '../ranking.js';
import { defaultRankerModel, rankerExplain, rankerOrder, type RankerModel } from './model.js';
import { specFromKernelName } from './spec-from-name.js';
import { chooseConv } from './choose.js';

const base: Problem = { N: 1, H: 14, W: 14, C: 256, K: 256, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
const SHAPES: Record<string, Problem> = {
  small: { ...base, H: 7, W: 7, C: 512, K: 512 },
  batch: { ...base, N: 4, H: 8, W: 8, C: 640, K: 640 },
  dense: base,
  wide: { ...base, N: 2, H: 56, W: 56, C: 64, K: 64 },
  strided: { ...base, H: 56, W: 56, C: 128, K: 128, strideH: 2, strideW: 2 },
  grouped: { ...base, N: 8, H: 28, W: 28, C: 512, K: 512, groups: 32 },
  grouped2: { ...base, N: 4, H: 56, W: 56, C: 128, K: 128, groups: 8 },
};

/** Up to `n` candidates spread over the spill-filtered grid (every variant that applies). */
function sample(problem: Problem, n: number): Spec[] {
  const variants = problem.groups > 1 ? (['grouped'] as const) : (['dense', 'split_c'] as const);
  const out: Spec[] = [];
  for (const variant of variants) {
    const kept = spillFilter(problemCandidates(problem, 'sm_90', { variant }).valid).kept;
    const step = Math.max(1, Math.floor(kept.length / n));
    for (let i = 0; i < kept.length && out.length < n * variants.length; i += step) out.push(kept[i]!);
  }
  return out;
}

/** Known coefficients of the cost model ("truth"), so the fit has something to recover. */
const TRUTH: Readonly<Record<string, number>> = { 'mma:mma.sync': 2.5, 'mma:wgmma': 1.2, 'mma:wgmma-unswizzled': 3, latency: 2, stage: 1.5, store: 1, lds: 1, dram: 1.3, launch: 1 };

/** Deterministic pseudo-random noise in [-1, 1). */
function noise(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

function syntheticRows(noiseLog2: number): RankerRows {
  const rnd = noise(7);
  const shapes = Object.entries(SHAPES).map(([name, problem], si) => {
    const candidates: RankerRows['shapes'][number]['candidates'] = [];
    for (const spec of sample(problem, 24)) {
      for (const splits of spec.variant === 'split_c' ? splitTrials(spec, problem) : [1]) {
        // Each shape off the model by its own factor: only the order inside a shape is fitted.
        const us = estimateCost(spec, problem, splits, TRUTH).us * 2 ** (si * 0.3 - 1 + noiseLog2 * rnd());
        candidates.push({ kernelName: kernelName(spec), ...(spec.variant === 'split_c' ? { splits } : {}), medianMs: us / 1000 });
      }
    }
    return { name, run: 'synthetic', problem, candidates };
  });
  return { format: 2, device: 'synthetic', target: 'sm_90', runs: [{ id: 'synthetic', source: 'ranker.test.ts' }], shapes };
}

describe('specFromKernelName', () => {
  it('reads every candidate name of every target back into its spec', () => {
    let n = 0;
    for (const target of TARGET_NAMES) {
      for (const problem of [SHAPES['small']!, SHAPES['batch']!, SHAPES['grouped']!]) {
        for (const variant of problem.groups > 1 ? (['grouped'] as const) : (['dense', 'split_c'] as const)) {
          for (const spec of problemCandidates(problem, target, { variant }).valid) {
            const r = specFromKernelName(kernelName(spec));
            expect(r.ok && r.spec).toEqual(spec);
            n++;
          }
        }
      }
    }
    expect(n).toBeGreaterThan(500);
  });

  it('refuses names that are not conv-direct kernels or not canonical', () => {
    expect(specFromKernelName('rocke_split_reduce_bf16').ok).toBe(false);
    const name = kernelName(problemCandidates(SHAPES['dense']!, 'sm_90').valid[0]!);
    expect(specFromKernelName(name.replace('_ck', '_ck0')).ok).toBe(false);
    const r = specFromKernelName(`${name}_n1`);
    expect(r.ok).toBe(false);
  });
});

describe('the cost model as ranker', () => {
  it('charges split_c its workspace and reduce launch, more with more slices, and a shorter loop', () => {
    const sc = problemCandidates(SHAPES['small']!, 'sm_90', { variant: 'split_c' }).valid[0]!;
    const counts = splitTrials(sc, SHAPES['small']!).sort((a, b) => a - b);
    const lo = estimateCost(sc, SHAPES['small']!, counts[0]);
    const hi = estimateCost(sc, SHAPES['small']!, counts[counts.length - 1]);
    expect(lo.facts.launches).toBe(2);
    expect(hi.terms.dram).toBeGreaterThan(lo.terms.dram);
    expect(hi.facts.chunks).toBeLessThan(lo.facts.chunks);
    const dense = problemCandidates(SHAPES['small']!, 'sm_90').valid[0]!;
    expect(estimateCost(dense, SHAPES['small']!).facts.launches).toBe(1);
  });
});

describe('fit and leave-one-out', () => {
  it('recovers known coefficients: held-out picks within 3% of the best on every shape', () => {
    const rows = syntheticRows(0.02);
    const loso = leaveOneShapeOut(rows, { lambda: 1e-6 });
    expect(loso.shapes).toHaveLength(Object.keys(SHAPES).length);
    expect(loso.worst).toBeLessThan(1.03);
    const model = fitRanker(rows, { lambda: 1e-6 });
    // The scale is free (each shape has its own factor); ratios between coefficients are not.
    const c = model.coefficients;
    expect(c['mma:mma.sync']! / c['mma:wgmma']!).toBeCloseTo(TRUTH['mma:mma.sync']! / TRUTH['mma:wgmma']!, 0);
    expect(c['latency']! / c['mma:wgmma']!).toBeGreaterThan(1.2);
  });

  it('is deterministic: the same rows give the same model, byte for byte', () => {
    const rows = syntheticRows(0.1);
    expect(JSON.stringify(fitRanker(rows))).toBe(JSON.stringify(fitRanker(structuredClone(rows))));
  });

  it('a model with wrong coefficients picks badly on the same rows (the evaluation can fail)', () => {
    const rows = syntheticRows(0.02);
    const model = fitRanker(rows);
    const wrong: RankerModel = { ...model, coefficients: { ...model.coefficients, 'mma:mma.sync': 0.01, latency: 0.01, 'mma:wgmma-unswizzled': 0.01 } };
    expect(evaluateRanker(rows, wrong).worst).toBeGreaterThan(1.1);
    expect(evaluateRanker(rows, model).worst).toBeLessThan(1.05);
  });

  it('leave-one-class-out holds out every shape of a class together', () => {
    const rows = syntheticRows(0.02);
    const e = leaveOneClassOut(rows, { lambda: 1e-6 });
    expect(new Set(e.shapes.map((s) => s.cls))).toEqual(new Set(['small-map', 'dense', 'grouped']));
    expect(e.worst).toBeLessThan(1.05);
  });

  it('rankerOrder orders by predicted time and explains the first choice with its cost terms', () => {
    const model = fitRanker(syntheticRows(0));
    const specs = sample(SHAPES['small']!, 24);
    const ranked = rankerOrder(specs, SHAPES['small']!, model);
    expect(ranked.length).toBe(specs.length);
    expect(ranked[0]!.relative).toBe(1);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i]!.score).toBeGreaterThanOrEqual(ranked[i - 1]!.score);
    const lines = rankerExplain(ranked, model);
    expect(lines[0]).toMatch(/^ranker: rocke_direct_.* lowest predicted time of \d+ candidate/);
    expect(lines[1]).toMatch(/chosen: [\d.]+ us predicted \(mma [\d.]+, stage/);
  });

  it('ranks a target without rows on roofline coefficients, saying so', () => {
    const model = defaultRankerModel();
    const specs = problemCandidates(SHAPES['small']!, 'gfx950').valid;
    const ranked = rankerOrder(specs, SHAPES['small']!, model);
    expect(ranked[0]!.cost.us).toBeCloseTo(estimateCost(ranked[0]!.spec, SHAPES['small']!, ranked[0]!.splits ?? 1, {}).us, 9);
    expect(rankerExplain(ranked, model)[0]).toMatch(/roofline coefficients \(no rows for gfx950\)/);
  });
});

describe('rowsFromBenchDetails', () => {
  it('keeps timed, unfailed candidates, one row per split count', () => {
    const spec = problemCandidates(SHAPES['small']!, 'sm_90', { variant: 'split_c' }).valid[0]!;
    const dense = problemCandidates(SHAPES['small']!, 'sm_90').valid[0]!;
    const details = {
      shapes: [
        {
          name: 'small',
          problem: SHAPES['small'],
          candidates: [
            { kernelName: kernelName(spec), medianMs: 0.01, splits: 4, splitTimes: [{ splits: 4, medianMs: 0.01 }, { splits: 2, medianMs: 0.012345678 }] },
            { kernelName: kernelName(dense), medianMs: 0.02, verify: { pass: false } },
            { kernelName: kernelName(dense), error: 'boom' },
            { kernelName: kernelName(dense), medianMs: 0.03 },
          ],
        },
      ],
    };
    const rows = rowsFromBenchDetails(details, { device: 'd', target: 'sm_90', run: { id: 'r', source: 's' } });
    expect(rows.shapes[0]!.candidates).toEqual([
      { kernelName: kernelName(spec), splits: 4, medianMs: 0.01 },
      { kernelName: kernelName(spec), splits: 2, medianMs: 0.0123457 },
      { kernelName: kernelName(dense), medianMs: 0.03 },
    ]);
  });
});

describe('chooseConv', () => {
  const problem = SHAPES['small']!;
  const specs = problemCandidates(problem, 'sm_90').valid;
  const record = { spec: specs[3]!, launch: {}, timeMs: 0.0123, device: 'NVIDIA H200', date: '2026-12-03T00:00:00Z' };

  it('takes the tuning record when it still serves the problem', () => {
    const c = chooseConv(problem, 'sm_90', { record });
    expect('spec' in c && c.chosenBy).toBe('record');
    expect('spec' in c && c.spec).toEqual(specs[3]);
    expect('spec' in c && c.explain[0]).toMatch(/^record: .* \(12\.3 us on NVIDIA H200/);
  });

  it('falls back to the ranker, saying why, when the record is for another target or not available', () => {
    const other = chooseConv(problem, 'gfx950', { record });
    expect('spec' in other && other.chosenBy).toBe('ranker');
    expect('spec' in other && other.explain[0]).toMatch(/record ignored: the tuning record is for sm_90, not gfx950/);
    const only = kernelName(specs[5]!);
    const c = chooseConv(problem, 'sm_90', { record, available: (n) => n === only });
    expect('spec' in c && [c.chosenBy, c.kernelName]).toEqual(['ranker', only]);
    expect(chooseConv(problem, 'sm_90', { available: () => false })).toEqual({ reason: expect.stringMatching(/none available/) });
  });

  it('weighs split_c at its split counts and returns the count it chose', () => {
    const c = chooseConv(problem, 'sm_90', { variants: ['split_c'] });
    expect('spec' in c && c.spec.variant).toBe('split_c');
    expect('spec' in c && c.splits).toBeGreaterThanOrEqual(1);
  });
});
