import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { parseProblem } from './problem.js';
import { orderCandidates } from './ranking.js';
import { DEFAULT_PROBLEMS, DEFAULT_SHAPE_CAP, retypeProblems, selectProblemSpecs } from './selection.js';
import { kernelName, type Spec } from './spec.js';
import { spillReason } from './spill.js';
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

  it('takes the apt variants, shares the cap evenly and keeps only valid, non-spilling specs of the shape', () => {
    expect(selected.map((s) => [s.name, s.variants.map((v) => `${v.variant}:${v.specs.length}`)])).toEqual([
      ['sm_14x14_1024', ['dense:20', 'split_c:20']],
      ['g_28_c512_g32', ['grouped:40']],
      ['d_14_c256', ['dense:20', 'split_c:20']],
    ]);
    for (const s of selected) {
      expect(s.cap).toBe(DEFAULT_SHAPE_CAP);
      for (const v of s.variants) {
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
    // An odd cap: the first variant gets the remainder.
    expect(selectProblemSpecs([DEFAULT_PROBLEMS[0]!], 'gfx942', { cap: 5 })[0]!.variants.map((v) => v.specs.length)).toEqual([3, 2]);
    expect(() => selectProblemSpecs(DEFAULT_PROBLEMS, 'gfx950', { cap: 0 })).toThrow(/cap must be a positive integer/);
  });
});

describe('selectProblemSpecs: one share per MMA atom', () => {
  // sm_90 offers mma.sync (m16n8k16) and wgmma (m64nNk16); the host score does not model their
  // throughputs, so each atom gets an even share of its variant's cap (remainder to the first).
  const count = (specs: readonly Spec[], atom: string) => specs.filter((s) => s.atom === atom).length;

  it('keeps both sm_90 atoms in every dense and split_c selection, shares adding up to the cap', () => {
    for (const cap of [DEFAULT_SHAPE_CAP, 10, 7]) {
      for (const shape of selectProblemSpecs(DEFAULT_PROBLEMS, 'sm_90', { cap })) {
        expect(shape.variants.reduce((n, v) => n + v.specs.length, 0)).toBe(cap);
        for (const v of shape.variants) {
          expect(v.specs.length).toBe(v.share);
          if (v.variant === 'grouped') {
            // No grouped wgmma kernel: the whole share goes to mma.sync.
            expect(count(v.specs, 'm16n8k16')).toBe(v.share);
          } else {
            expect([count(v.specs, 'm16n8k16'), count(v.specs, 'm64nNk16')]).toEqual([Math.ceil(v.share / 2), Math.floor(v.share / 2)]);
          }
          // Within an atom, specs stay in score order.
          for (const atom of ['m16n8k16', 'm64nNk16']) {
            const scores = v.specs.flatMap((spec, i) => (spec.atom === atom ? [v.scores[i]!] : []));
            for (let i = 1; i < scores.length; i++) expect(scores[i - 1]!).toBeGreaterThanOrEqual(scores[i]!);
          }
        }
      }
    }
  });

  it('each atom share is that atom own capped order, so one atom cannot crowd out the other', () => {
    const shape = DEFAULT_PROBLEMS[2]!; // d_14_c256
    const [sel] = selectProblemSpecs([shape], 'sm_90', { cap: 4, variants: ['dense'] });
    const valid = problemCandidates(shape.problem, 'sm_90').valid;
    const own = (atom: string) => orderCandidates(valid.filter((s) => s.atom === atom), shape.problem, { cap: 2 }).map((c) => kernelName(c.spec));
    expect(sel!.variants[0]!.specs.map(kernelName)).toEqual([...own('m16n8k16'), ...own('m64nNk16')]);
    // Ordered jointly, one atom would take more than its half of the top 4 on this shape (since
    // 14-row mma.sync tiles fit the 14x14 map, mma.sync takes all four).
    expect(orderCandidates(valid, shape.problem, { cap: 4 }).filter((c) => c.spec.atom === 'm64nNk16').length).not.toBe(2);
  });

  it('shares the cap between the two MFMA atoms on AMD too', () => {
    const [sm] = selectProblemSpecs([DEFAULT_PROBLEMS[0]!], 'gfx950', { cap: 6, variants: ['dense'] });
    expect([count(sm!.variants[0]!.specs, '32x32x16'), count(sm!.variants[0]!.specs, '16x16x32')]).toEqual([3, 3]);
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
