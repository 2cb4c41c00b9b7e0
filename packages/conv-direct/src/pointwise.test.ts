/**
 * The pointwise variant on the host: its reasons, its staged geometry (no halo at any stride), its
 * launch grid over flat pixel tiles, its candidates and their place in the selection.
 */
import { describe, expect, it } from 'vitest';
import { aotCandidates, defaultVariant, problemCandidates } from './candidates.js';
import { launchGrid } from './grid.js';
import { pointwisePixelUtilization } from './pointwise.js';
import { estimateCost } from './cost-model.js';
import { scoreCandidate } from './ranking.js';
import { benchVariants, selectProblemSpecs } from './selection.js';
import { kernelName, specGeometry, wgmmaLds } from './spec.js';
import { TARGET_NAMES } from './targets.js';
import { gfx950Spec, pointwiseSpec, problem1x1, problem3x3, sm90Spec, wgmmaSpec } from './test-fixtures.js';
import { validate } from './validate.js';

const pw = pointwiseSpec(gfx950Spec());

describe('pointwise spec rules', () => {
  it('refuse filters, padding, dilation and image tiles a flat 1x1 GEMM has no use for, with reasons', () => {
    expect(validate({ ...pw, R: 3, S: 3 })).toEqual({ ok: false, reason: 'the pointwise variant is a 1x1 conv (got filter 3x3)' });
    expect(validate({ ...pw, pad_h: 1 })).toMatchObject({ ok: false, reason: expect.stringMatching(/^the pointwise variant takes no padding \(got 1x0\)/) });
    expect(validate({ ...pw, dilation_h: 2 })).toMatchObject({ ok: false, reason: expect.stringMatching(/^dilation 2x1 means nothing for a 1x1 filter/) });
    expect(validate({ ...pw, tile_n: 2 })).toMatchObject({ ok: false, reason: expect.stringMatching(/^tile_n 2: a pointwise tile already spans images/) });
    expect(validate(pw, problem1x1({ C: 64, K: 64, groups: 2 }))).toEqual({ ok: false, reason: 'the pointwise variant needs groups == 1 (got 2); use the grouped variant' });
    expect(validate(pw, problem3x3())).toEqual({ ok: false, reason: 'problem filter 3x3 does not match the spec\'s baked 1x1' });
  });

  it('name the variant and the stride, and stage a halo-free tile at stride 2', () => {
    const s2 = { ...pw, stride_h: 2, stride_w: 2 };
    expect(kernelName(s2)).toMatch(/^rocke_direct_pointwise_gfx950_bf16_r1s1_u2v2_p0q0_t8x32x64_/);
    const g = specGeometry(s2);
    expect([g.ldsInH, g.ldsInW]).toEqual([s2.tile_h, s2.tile_w]);
    expect(g.ldsBytes).toBe(specGeometry(pw).ldsBytes);
    const w = pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 16 }), { stride_h: 2, stride_w: 2 });
    expect(wgmmaLds(w).xStageBytes).toBe(16 * 8 * 128);
  });
});

describe('pointwise launches and ranking', () => {
  it('tile the flat N·Ho·Wo pixels: only the batch\'s last tile pads', () => {
    const p = problem1x1({ N: 8, H: 7, W: 7, C: 960, K: 160 });
    const s = pointwiseSpec(wgmmaSpec({ tile_h: 8, tile_k: 64 }));
    expect(launchGrid(s, p)).toMatchObject({ wTiles: Math.ceil(392 / 64), hTiles: 1, nTiles: 1, kTiles: 3, workgroups: 7 * 3 });
    expect(pointwisePixelUtilization(s, p)).toBeCloseTo(392 / 448);
    // The windowed 8x8 tile of the same size computes 8 x 8 x 8 = 512 pixels for the 392.
    expect(scoreCandidate(s, p).cost.facts.tileUtilization).toBeGreaterThan(scoreCandidate({ ...s, variant: 'dense' }, p).cost.facts.tileUtilization);
    const s2 = problem1x1({ N: 2, H: 14, W: 14, strideH: 2, strideW: 2 });
    expect(launchGrid(s, s2).wTiles).toBe(Math.ceil((2 * 7 * 7) / 64));
  });
});

describe('pointwise candidates and selection', () => {
  const shapes = [
    problem1x1({ N: 8, H: 56, W: 56, C: 64, K: 256 }),
    problem1x1({ N: 8, H: 7, W: 7, C: 960, K: 160 }),
    problem1x1({ N: 1, H: 28, W: 28, C: 40, K: 24 }),
    problem1x1({ N: 1, H: 56, W: 56, C: 72, K: 120, strideH: 2, strideW: 2 }),
  ];

  it('is the default variant of unpadded 1x1 convs, and benched first beside dense (and split_c on small maps)', () => {
    expect(defaultVariant(shapes[0]!)).toBe('pointwise');
    expect(defaultVariant(problem1x1({ padH: 1, padW: 1 }))).toBe('dense');
    expect(defaultVariant(problem1x1({ C: 64, K: 64, groups: 2 }))).toBe('grouped');
    expect(benchVariants(shapes[0]!)).toEqual(['pointwise', 'dense']);
    expect(benchVariants(shapes[1]!)).toEqual(['pointwise', 'dense', 'split_c']);
  });

  it.each(TARGET_NAMES.map((t) => [t] as const))('%s: every shape has valid pointwise candidates (tails where C or K need them) and the selection keeps some', (target) => {
    for (const p of shapes) {
      const set = problemCandidates(p, target);
      expect(set.valid.length, `C ${p.C} K ${p.K}`).toBeGreaterThan(0);
      for (const s of set.valid) expect([s.variant, s.R, s.stride_h, s.k_tail]).toEqual(['pointwise', 1, p.strideH, p.K % 8 !== 0]);
      const sel = selectProblemSpecs([{ name: 'pw', cls: 'dense', problem: p }], target, { cap: 6 })[0]!;
      expect(sel.variants[0]!.variant).toBe('pointwise');
      expect(sel.variants[0]!.specs.length).toBeGreaterThan(0);
    }
  });

  it('offer wgmma tiles of 64 to 256 flat pixels on sm_90, one m-block wide', () => {
    const wg = problemCandidates(shapes[0]!, 'sm_90').valid.filter((s) => s.atom === 'm64nNk16');
    expect(new Set(wg.map((s) => s.tile_w))).toEqual(new Set([8]));
    expect(new Set(wg.map((s) => s.tile_h * s.tile_w))).toEqual(new Set([64, 128, 256]));
    expect(problemCandidates(shapes[0]!, 'sm_90').valid.some((s) => s.atom === 'm16n8k16')).toBe(true);
    expect(validate(pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true })), shapes[0]!)).toEqual({ ok: true });
  });
});

describe('pointwise in the cost model', () => {
  it('reads the flat-pixel utilization: no tile waste when the tiles divide N·Ho·Wo', () => {
    const p = problem1x1({ N: 2, H: 8, W: 8, C: 64, K: 64 });
    const spec = pointwiseSpec(wgmmaSpec({ tile_h: 16 }));
    expect(estimateCost(spec, p).facts.tileUtilization).toBeCloseTo(1, 12);
    // The windowed twin computes 2 images of 16 x 8 rows for 8 x 8 maps: half of it is padding.
    expect(estimateCost({ ...spec, variant: 'dense' }, p).facts.tileUtilization).toBeCloseTo(0.5, 12);
  });
});

describe('pointwise AOT grid', () => {
  it('is the pointwise tiles of unpadded 1x1 at strides 1 and 2', () => {
    const aot = aotCandidates('sm_90', 'bf16', 'pointwise').valid;
    expect(aot.length).toBeGreaterThan(0);
    expect(new Set(aot.map((s) => `${s.variant} ${s.R}x${s.S} s${s.stride_h} p${s.pad_h}`))).toEqual(new Set(['pointwise 1x1 s1 p0', 'pointwise 1x1 s2 p0']));
  });
});
