import { helperSpecs } from '@rocke/split-reduce';
import { describe, expect, it } from 'vitest';
import { benchTrials, compiledSelection } from './bench-plan.js';
import { problemCandidates } from './candidates.js';
import type { Problem } from './problem.js';
import { splitTrials } from './ranking.js';
import { benchVariants, selectProblemSpecs } from './selection.js';
import { kernelName, withEpilogue } from './spec.js';
import { spillFilter } from './spill.js';

const SMALL: Problem = { N: 1, H: 14, W: 14, C: 256, K: 256, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
const helpers = helperSpecs('sm_90').map((spec) => ({ spec }));

describe('benchTrials', () => {
  it('is one launch sequence for dense, and one per trial split count for split_c, each with its reduce launches', () => {
    const dense = problemCandidates(SMALL, 'sm_90').valid[0]!;
    expect(benchTrials(dense, SMALL, [])).toHaveLength(1);
    const split = problemCandidates(SMALL, 'sm_90', { variant: 'split_c' }).valid[0]!;
    const trials = benchTrials(split, SMALL, helpers);
    expect(trials.map((t) => t.plan.splits)).toEqual(splitTrials(split, SMALL));
    for (const t of trials) expect(t.launches.map((l) => l.role)).toEqual(['conv', ...t.launches.slice(1).map(() => 'reduce')]);
    expect(trials.every((t) => t.launches.some((l) => l.role === 'reduce'))).toBe(true);
    expect(() => benchTrials(split, SMALL, helpers.filter((h) => h.spec.dtype !== 'bf16'))).toThrow(/no split-reduce helper kernel for bf16/);
  });
});

describe('compiledSelection', () => {
  it('with everything compiled but spillers, picks exactly what selectProblemSpecs picks, in its order', () => {
    const [selected] = selectProblemSpecs([{ name: 's', cls: null, problem: SMALL }], 'sm_90', { cap: 8 });
    const likely = new Set(benchVariants(SMALL).flatMap((variant) => spillFilter(problemCandidates(SMALL, 'sm_90', { variant }).valid).kept.map(kernelName)));
    const got = compiledSelection(SMALL, 'sm_90', 8, (s) => likely.has(kernelName(s)));
    expect(got.variants.map((v) => [v.variant, v.valid])).toEqual(selected!.variants.map((v) => [v.variant, v.valid]));
    const want = selected!.variants.flatMap((v) => v.specs.map((spec, i) => ({ name: kernelName(spec), us: v.predictedUs[i]! }))).sort((a, b) => a.us - b.us || (a.name < b.name ? -1 : 1));
    expect(got.picks.map((p) => p.kernelName)).toEqual(want.map((w) => w.name));
  });

  it('picks only compiled candidates, and counts a variant with none compiled', () => {
    const compiled = new Set(problemCandidates(SMALL, 'sm_90').valid.slice(0, 3).map(kernelName));
    const got = compiledSelection(SMALL, 'sm_90', 8, (s) => compiled.has(kernelName(s)));
    expect(got.picks.map((p) => p.kernelName).sort()).toEqual([...compiled].sort());
    expect(got.variants.find((v) => v.variant === 'split_c')?.compiled).toBe(0);
    expect(compiledSelection(SMALL, 'sm_90', 8, () => false).picks).toEqual([]);
  });
});

describe('withEpilogue', () => {
  it('puts the epilogue on the spec, except split_c (its reduce applies it)', () => {
    const epilogue = { act: 'relu', bias: 'fp32', residual: false } as const;
    const dense = problemCandidates(SMALL, 'sm_90').valid[0]!;
    const split = problemCandidates(SMALL, 'sm_90', { variant: 'split_c' }).valid[0]!;
    expect(withEpilogue(dense, epilogue)).toEqual({ ...dense, epilogue });
    expect(withEpilogue(split, epilogue)).toEqual(split);
    expect(withEpilogue(dense, undefined)).toEqual(dense);
  });
});
