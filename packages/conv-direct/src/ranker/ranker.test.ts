import { describe, expect, it } from 'vitest';
import { problemCandidates } from '../candidates.js';
import type { Problem } from '../problem.js';
import { kernelName, type Spec } from '../spec.js';
import { spillFilter } from '../spill.js';
import { TARGET_NAMES } from '../targets.js';
import { RANKER_FEATURES, rankerFeatures } from './features.js';
import { fitRanker, leaveOneShapeOut, rowsFromBenchDetails, type RankerRows } from './fit.js';
import { splitTrials } from '../ranking.js';
import { rankerExplain, rankerOrder, rankerScore, type RankerModel } from './model.js';
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

/** A known linear "truth" over the features, so the fit has something to recover. */
const TRUTH: Partial<Record<(typeof RANKER_FEATURES)[number], number>> = {
  tileWaste: 1,
  roundLoss: 0.8,
  underfill: 0.6,
  xStagedPerFlop: 0.3,
  wStagedPerFlop: 0.2,
  workspaceTraffic: 0.5,
  reduceLaunch: 0.15,
  swizzledRows: -0.5,
};

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
        const f = rankerFeatures(spec, problem, splits);
        const log2 = RANKER_FEATURES.reduce((s, k, i) => s + (TRUTH[k] ?? 0) * f[i]!, -6 + si * 0.5) + noiseLog2 * rnd();
        candidates.push({ kernelName: kernelName(spec), ...(spec.variant === 'split_c' ? { splits } : {}), medianMs: 2 ** log2 });
      }
    }
    return { name, problem, candidates };
  });
  return { format: 1, device: 'synthetic', target: 'sm_90', source: 'ranker.test.ts', shapes };
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

describe('rankerFeatures', () => {
  const spec = problemCandidates(SHAPES['dense']!, 'sm_90').valid.find((s) => s.tile_h === 14 || s.tile_h === 7) ?? problemCandidates(SHAPES['dense']!, 'sm_90').valid[0]!;
  const f = (s: Spec, p: Problem, splits = 1) => Object.fromEntries(RANKER_FEATURES.map((k, i) => [k, rankerFeatures(s, p, splits)[i]!]));

  it('counts tile waste: one more output row than a tile adds the waste of a whole extra tile row', () => {
    const p = { ...SHAPES['dense']!, H: spec.tile_h, W: spec.tile_w };
    expect(f(spec, p)['tileWaste']).toBeCloseTo(-Math.log2(spec.tile_k >= p.K ? p.K / spec.tile_k : 1), 9);
    const grown = f(spec, { ...p, H: spec.tile_h + 1 })['tileWaste']!;
    expect(grown).toBeCloseTo(f(spec, p)['tileWaste']! + Math.log2((2 * spec.tile_h) / (spec.tile_h + 1)), 9);
  });

  it('charges split_c its workspace and reduce launch, more with more slices', () => {
    const sc = problemCandidates(SHAPES['small']!, 'sm_90', { variant: 'split_c' }).valid[0]!;
    const counts = splitTrials(sc, SHAPES['small']!).sort((a, b) => a - b);
    const lo = f(sc, SHAPES['small']!, counts[0]);
    const hi = f(sc, SHAPES['small']!, counts[counts.length - 1]);
    expect(lo['reduceLaunch']).toBe(1);
    expect(hi['workspaceTraffic']!).toBeGreaterThan(lo['workspaceTraffic']!);
    expect(hi['chunks']!).toBeLessThan(lo['chunks']!);
    expect(f(spec, SHAPES['dense']!)['workspaceTraffic']).toBe(0);
  });
});

describe('fit and leave-one-shape-out', () => {
  it('recovers a known linear cost: held-out picks within 3% of the best on every shape', () => {
    // Unclamped: the truth is linear in the features over the whole range.
    const rows = syntheticRows(0.02);
    const loso = leaveOneShapeOut(rows, { clampLog2: 50 });
    expect(loso.shapes).toHaveLength(Object.keys(SHAPES).length);
    expect(loso.worst).toBeLessThan(1.03);
    const model = fitRanker(rows, { clampLog2: 50 });
    const w = Object.fromEntries(model.features.map((k, i) => [k, model.weights[i]!]));
    expect(w['tileWaste']!).toBeGreaterThan(0.5);
    expect(w['swizzledRows']!).toBeLessThan(-0.2);
  });

  it('is deterministic: the same rows give the same model, byte for byte', () => {
    const rows = syntheticRows(0.1);
    expect(JSON.stringify(fitRanker(rows))).toBe(JSON.stringify(fitRanker(structuredClone(rows))));
  });

  it('a model that ignores the features picks badly on the same rows (the evaluation can fail)', () => {
    const rows = syntheticRows(0.02);
    const model = fitRanker(rows);
    const blind: RankerModel = { ...model, weights: model.weights.map((v, i) => (RANKER_FEATURES[i] === 'swizzledRows' ? -v : 0)) };
    const ratios = rows.shapes.map((s) => {
      const scored = s.candidates.map((c) => ({ c, score: rankerScore(blind, specFromKernelName(c.kernelName).ok ? (specFromKernelName(c.kernelName) as { spec: Spec }).spec : (null as never), s.problem, c.splits ?? 1) }));
      scored.sort((a, b) => a.score - b.score || (a.c.kernelName < b.c.kernelName ? -1 : 1));
      return scored[0]!.c.medianMs / Math.min(...s.candidates.map((c) => c.medianMs));
    });
    expect(Math.max(...ratios)).toBeGreaterThan(1.1);
  });

  it('rankerOrder orders by the model and explains the first choice', () => {
    const rows = syntheticRows(0);
    const model = fitRanker(rows);
    const specs = sample(SHAPES['small']!, 24);
    const ranked = rankerOrder(specs, SHAPES['small']!, model);
    expect(ranked.length).toBe(specs.length);
    expect(ranked[0]!.relative).toBe(1);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i]!.score).toBeGreaterThanOrEqual(ranked[i - 1]!.score);
    expect(rankerExplain(ranked, model)).toMatch(/^ranker: rocke_direct_.* lowest predicted time of \d+ candidate/);
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
    const rows = rowsFromBenchDetails(details, { device: 'd', target: 'sm_90', source: 's' });
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
