import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { parseProblem } from './problem.js';
import { orderCandidates } from './ranking.js';
import { benchVariants, DEFAULT_PROBLEMS, DEFAULT_SHAPE_CAP, orderAcrossVariants, retypeProblems, selectProblemSpecs, variantReserve } from './selection.js';
import { rankerOrder } from './ranker/model.js';
import { kernelName } from './spec.js';
import { spillFilter, spillReason } from './spill.js';
import { validate } from './validate.js';

/** sm_8x8_1280 of the public suite: N 4, 8x8, C = K = 1280. */
const SM_8X8_1280 = (() => {
  const r = parseProblem({ N: 4, H: 8, W: 8, C: 1280, K: 1280, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' });
  if (!r.ok) throw new Error(r.reason);
  return { name: 'sm_8x8_1280', cls: 'small-map', problem: r.problem };
})();

describe('DEFAULT_PROBLEMS', () => {
  it('re-types to other dtypes, keeping the set own dtype unrenamed', () => {
    const both = retypeProblems(DEFAULT_PROBLEMS, ['bf16', 'fp16']);
    expect(both.map((p) => `${p.name}:${p.problem.dtype}`)).toEqual([
      'sm_14x14_1024:bf16',
      'g_28_c512_g32:bf16',
      'd_14_c256:bf16',
      'sm_14x14_1024_fp16:fp16',
      'g_28_c512_g32_fp16:fp16',
      'd_14_c256_fp16:fp16',
    ]);
    expect(both[3]!.problem).toEqual({ ...DEFAULT_PROBLEMS[0]!.problem, dtype: 'fp16' });
  });
});

describe('selectProblemSpecs', () => {
  const selected = selectProblemSpecs(DEFAULT_PROBLEMS, 'gfx950');

  it('takes the apt variants, fills the cap across them (each keeps its reserve) and keeps only valid, non-spilling specs of the shape', () => {
    expect(selected.map((s) => [s.name, s.variants.map((v) => v.variant)])).toEqual([
      ['sm_14x14_1024', ['dense', 'split_c']],
      ['g_28_c512_g32', ['grouped']],
      ['d_14_c256', ['dense', 'split_c']],
    ]);
    for (const s of selected) {
      expect(s.cap).toBe(DEFAULT_SHAPE_CAP);
      expect(s.variants.reduce((n, v) => n + v.specs.length, 0)).toBe(DEFAULT_SHAPE_CAP);
      for (const v of s.variants) {
        expect(v.specs.length).toBe(v.share);
        expect(v.share).toBeGreaterThanOrEqual(variantReserve(DEFAULT_SHAPE_CAP, s.variants.length));
        const valid = problemCandidates(s.problem, 'gfx950', { variant: v.variant }).valid;
        expect(v.valid).toBe(valid.length);
        expect(v.spillHeuristic).toBe(valid.filter((x) => spillReason(x) !== null).length);
        expect(v.spillHeuristic).toBeGreaterThan(0);
        const names = new Set(valid.map(kernelName));
        for (const spec of v.specs) {
          expect(spec.variant).toBe(v.variant);
          expect(names.has(kernelName(spec))).toBe(true);
          expect(validate(spec, s.problem).ok).toBe(true);
          expect(spillReason(spec)).toBeNull();
        }
        expect(new Set(v.specs.map(kernelName)).size).toBe(v.specs.length);
      }
    }
  });

  it('is deterministic, honours --variant with a note, and rejects a bad cap', () => {
    expect(selectProblemSpecs(DEFAULT_PROBLEMS, 'gfx950')).toEqual(selected);
    const dense = selectProblemSpecs(DEFAULT_PROBLEMS, 'sm_90', { cap: 6, variants: ['dense'] });
    expect(dense.map((s) => s.variants.map((v) => `${v.variant}:${v.specs.length}`))).toEqual([['dense:6'], [], ['dense:6']]);
    expect(dense[0]!.notes).toEqual(['split_c: apt, not selected (--variant)']);
    expect(dense[1]!.notes).toEqual(['grouped: apt, not selected (--variant)', 'no selected variant is apt for this shape (apt: grouped)']);
    // A small cap: every variant still keeps its reserve of one.
    const five = selectProblemSpecs([DEFAULT_PROBLEMS[0]!], 'gfx942', { cap: 5 })[0]!.variants.map((v) => v.specs.length);
    expect(five.reduce((a, b) => a + b, 0)).toBe(5);
    expect(Math.min(...five)).toBeGreaterThanOrEqual(1);
    expect(() => selectProblemSpecs(DEFAULT_PROBLEMS, 'gfx950', { cap: 0 })).toThrow(/cap must be a positive integer/);
  });
});

describe('selectProblemSpecs: one order across variants and atoms', () => {
  it('keeps the lowest predicted times over all variants, past each variant reserve', () => {
    for (const cap of [DEFAULT_SHAPE_CAP, 10, 7]) {
      for (const shape of selectProblemSpecs(DEFAULT_PROBLEMS, 'sm_90', { cap })) {
        const reserve = variantReserve(cap, shape.variants.length);
        const kept = shape.variants.flatMap((v) => v.predictedUs.map((us, i) => ({ us, spec: v.specs[i]!, own: i })));
        // Each variant's list is in predicted order.
        for (const v of shape.variants) for (let i = 1; i < v.predictedUs.length; i++) expect(v.predictedUs[i]!).toBeGreaterThanOrEqual(v.predictedUs[i - 1]!);
        // Any candidate left out predicts no faster than every kept one beyond the reserves.
        const pools = shape.variants.map((v) => spillFilter(problemCandidates(shape.problem, 'sm_90', { variant: v.variant }).valid).kept);
        const all = orderAcrossVariants(pools, shape.problem, Number.MAX_SAFE_INTEGER);
        const names = new Set(kept.map((k) => kernelName(k.spec)));
        const worstJoint = Math.max(...kept.filter((k) => k.own >= reserve).map((k) => k.us), 0);
        const firstLeftOut = all.find((o) => !names.has(o.score.kernelName));
        if (firstLeftOut && worstJoint > 0) expect(firstLeftOut.score.predictedUs).toBeGreaterThanOrEqual(worstJoint);
        // What the cap left out follows as back-fill, in the joint predicted order.
        expect(shape.backfill.map((b) => kernelName(b.spec))).toEqual(all.filter((o) => !names.has(o.score.kernelName)).map((o) => o.score.kernelName));
      }
    }
  });

  it('puts the ranker choice first: the bench capped at one times what the ranker would run', () => {
    for (const shape of DEFAULT_PROBLEMS) {
      const [sel] = selectProblemSpecs([shape], 'sm_90', { cap: DEFAULT_SHAPE_CAP });
      const first = sel!.variants.flatMap((v) => v.specs.map((spec, i) => ({ spec, us: v.predictedUs[i]! }))).sort((a, b) => a.us - b.us)[0]!;
      const pool = benchVariants(shape.problem).flatMap((variant) => spillFilter(problemCandidates(shape.problem, 'sm_90', { variant }).valid).kept);
      expect(kernelName(first.spec)).toBe(rankerOrder(pool, shape.problem)[0]!.kernelName);
    }
  });

  it('orders one variant with orderCandidates (the same model), whatever the input order', () => {
    const shape = DEFAULT_PROBLEMS[2]!; // d_14_c256
    const valid = problemCandidates(shape.problem, 'sm_90').valid;
    const a = orderCandidates(valid, shape.problem, { cap: 8 }).map((o) => o.score.kernelName);
    expect(orderCandidates([...valid].reverse(), shape.problem, { cap: 8 }).map((o) => o.score.kernelName)).toEqual(a);
  });
});

describe('selectProblemSpecs: tile_n candidates', () => {
  it('sends multi-image tiles of sm_8x8_1280 (N 4, 8x8) to the H200 bench, mma.sync and wgmma, each scored with its image padding', () => {
    const shape = SM_8X8_1280;
    const [sel] = selectProblemSpecs([shape], 'sm_90');
    const tiled = (v: string) => sel!.variants.find((x) => x.variant === v)!.specs.filter((s) => s.tile_n > 1);
    // split_c gets both degrees; dense at least tile_n 2 (tile_n 4 leaves 40 workgroups for 132 SMs).
    expect(new Set(tiled('split_c').map((s) => s.tile_n))).toEqual(new Set([2, 4]));
    expect(tiled('dense').length).toBeGreaterThan(0);
    expect(new Set(tiled('split_c').map((s) => s.atom))).toEqual(new Set(['m16n8k16', 'm64nNk16']));
    for (const s of [...tiled('dense'), ...tiled('split_c')]) {
      expect([s.tile_h, s.tile_w]).toEqual([8, 8]);
      expect(validate(s, shape.problem)).toEqual({ ok: true });
    }
  });
});
