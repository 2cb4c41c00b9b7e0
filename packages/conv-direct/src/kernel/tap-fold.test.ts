/**
 * The tap fold (`fold_s`, tap-fold.ts): interpreter numerics on gfx950 (MFMA), gfx942 and sm_90
 * (mma.sync, register prefetch and cp.async) against the fp64 oracle — the C = 3 7x7 stride-2
 * stem, C = 8, dilation 2 — and a kernel whose staging folds (s, c) in the wrong order must fail.
 */
import { describe, expect, it } from 'vitest';
import { problemCandidates } from '../candidates.js';
import { problemGeometry, type Problem } from '../problem.js';
import { kernelName, specGeometry, stagedSpec, type Spec } from '../spec.js';
import { spillReason } from '../spill.js';
import { gfx950Spec, problem3x3, sm90Spec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel, type BuildMutation } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
}

const filter = (f: number, stride: number, pad: number, dilation = 1) => ({
  spec: { R: f, S: f, stride_h: stride, stride_w: stride, pad_h: pad, pad_w: pad, dilation_h: dilation, dilation_w: dilation, fold_s: true as const },
  problem: { R: f, S: f, strideH: stride, strideW: stride, padH: pad, padW: pad, dilationH: dilation, dilationW: dilation },
});
const stem = filter(7, 2, 3);
const same3 = filter(3, 1, 1);
const dil = filter(3, 1, 2, 2);
const prob = (o: Partial<Problem>) => problem3x3({ N: 1, ...o });
/** gfx950 32x32x16: 2 rows x 32 columns x 32 channels; ck 16 makes the folded axis (21 or 24) two chunks, the last partial. */
const amd = (o: Partial<Spec>) => gfx950Spec({ tile_h: 2, tile_w: 32, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, ...o });
/** sm_90 m16n8k16: 2 rows x 16 columns x 32 channels. */
const nv = (o: Partial<Spec>) => sm90Spec({ tile_h: 2, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, ...o });

const cases: Case[] = [
  { name: 'gfx950 C=3 7x7 s2 stem', spec: amd({ ...stem.spec, c_tail: 1 }), problem: prob({ ...stem.problem, H: 11, W: 13, C: 3, K: 16 }) },
  { name: 'gfx942 C=3 7x7 s2 stem (32x32x8, ck 8)', spec: amd({ ...stem.spec, target: 'gfx942', atom: '32x32x8', ck: 8, num_xcds: 8, c_tail: 1 }), problem: prob({ ...stem.problem, H: 11, W: 13, C: 3, K: 16 }) },
  { name: 'sm_90 C=3 7x7 s2 stem (register prefetch)', spec: nv({ ...stem.spec, c_tail: 1, double_buffer: true }), problem: prob({ ...stem.problem, H: 11, W: 13, C: 3, K: 16 }) },
  { name: 'gfx950 C=8 3x3 (runs of 8)', spec: amd({ ...same3.spec, c_tail: 8 }), problem: prob({ ...same3.problem, H: 5, W: 9, C: 8, K: 32 }) },
  { name: 'sm_90 C=8 3x3 (cp.async zero-fill)', spec: nv({ ...same3.spec, c_tail: 8, double_buffer: true }), problem: prob({ ...same3.problem, H: 5, W: 9, C: 8, K: 32 }) },
  { name: 'sm_90 C=6 3x3 dilation 2, K=20 (runs of 2, k_tail)', spec: nv({ ...dil.spec, c_tail: 2, k_tail: true }), problem: prob({ ...dil.problem, H: 6, W: 11, C: 6, K: 20 }) },
];

function run(c: Case, mutation?: BuildMutation) {
  const g = problemGeometry(c.problem);
  const x = randomBits(g.xBytes / 2, c.problem.dtype, 29);
  const w = randomBits(g.wBytes / 2, c.problem.dtype, 31);
  const out = interpretConv(buildConvKernel(c.spec, mutation ? { mutation } : {}), c.problem, x, w);
  const ref = naiveConv(c.problem, x, w);
  return mismatches(Array.from(out.y, fromBits(c.problem.dtype)), ref, c.problem.dtype, c.problem.R * c.problem.S * g.cpg);
}

describe('tap fold numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    expect(run(c)).toEqual({ count: 0, first: null });
  });

  it('a kernel that stages the folded axis as (s, c) = (q % S, q / S) fails the check', () => {
    for (const name of ['gfx950 C=3 7x7 s2 stem', 'sm_90 C=3 7x7 s2 stem (register prefetch)']) {
      const c = cases.find((k) => k.name === name)!;
      expect(run(c, { transposeTapFold: true }).count, name).toBeGreaterThan(100);
    }
  });
});

describe('tap fold specs', () => {
  it('stage R x 1 taps over output columns: no halo along W, and the folded axis in chunks', () => {
    const s = nv({ ...stem.spec, c_tail: 1, tile_h: 8 });
    expect(stagedSpec(s)).toMatchObject({ S: 1, stride_w: 1, pad_w: 0, dilation_w: 1, R: 7, stride_h: 2 });
    const g = specGeometry(s);
    expect([g.ldsInH, g.ldsInW]).toEqual([(8 - 1) * 2 + 7, 16]);
    expect(kernelName(s)).toMatch(/_ct1_fs$/);
  });

  it.each([
    [{ variant: 'split_c' as const }, /dense only/],
    [{ atom: 'm64nNk16' as const, tile_h: 8, tile_w: 8, tile_k: 64, waves_m: 1, waves_n: 1, lds_pad: 0 }, /cannot gather folded taps/],
    [{ R: 1, S: 1, pad_h: 0, pad_w: 0 }, /no filter taps along W/],
    [{ c_tail: 0 }, /c_tail must be/],
  ])('are refused with a reason: %o', (over, reason) => {
    const v = validate(nv({ ...stem.spec, c_tail: 1, ...over }));
    expect(v.ok).toBe(false);
    expect(!v.ok && v.reason).toMatch(reason);
  });

  it('a C = 3 stem gets folded candidates on every target, on sm_90 some the spill heuristic keeps', () => {
    const p = prob({ ...stem.problem, H: 224, W: 224, C: 3, K: 64 });
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const) {
      const folded = problemCandidates(p, target).valid.filter((s) => s.fold_s);
      expect(folded.length, target).toBeGreaterThan(0);
      // The folded axis is 21: chunks that pad it least for the atom (32, or 24 with K-8 atoms).
      for (const s of folded) expect(Math.ceil(21 / s.ck) * s.ck, kernelName(s)).toBeLessThanOrEqual(32);
      if (target === 'sm_90') expect(folded.filter((s) => spillReason(s) === null).length).toBeGreaterThan(0);
    }
  });
});
