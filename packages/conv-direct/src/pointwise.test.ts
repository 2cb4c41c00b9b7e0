/**
 * The pointwise variant on the host: its reasons, its staged geometry (no halo at any stride), its
 * launch grid over flat pixel tiles, its candidates and their place in the selection.
 */
import { describe, expect, it } from 'vitest';
import { aotCandidates, defaultVariant, problemCandidates } from './candidates.js';
import { launchGrid } from './grid.js';
import { pointwisePixelUtilization, streamSlots, streamTilesPerWorkgroup } from './pointwise.js';
import { residency } from './residency.js';
import { outputStaging } from './store-path.js';
import { estimateCost } from './cost-model.js';
import { scoreCandidate } from './ranking.js';
import { benchVariants, selectProblemSpecs } from './selection.js';
import { kernelName, specGeometry, streamLds, wgmmaLds } from './spec.js';
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

describe('streaming pointwise (stream)', () => {
  const st = (base: Parameters<typeof pointwiseSpec>[0], workgroups: number, chunks: number) => pointwiseSpec(base, { stream: { workgroups, chunks } });
  const mmaSync = sm90Spec({ tile_w: 16, tile_k: 128, ck: 64, waves_n: 4, double_buffer: true });

  it('refuses other variants, the warpgroup MMA, the wrong X staging and too few resident chunks, with reasons', () => {
    expect(validate({ ...gfx950Spec(), stream: { workgroups: 8, chunks: 1 } })).toEqual({ ok: false, reason: 'stream: the dense variant has no streaming schedule (pointwise only)' });
    expect(validate(st(wgmmaSpec(), 8, 1))).toMatchObject({ ok: false, reason: expect.stringMatching(/^stream: the warpgroup-MMA kernel has no streaming schedule/) });
    expect(validate(st({ ...mmaSync, double_buffer: false }, 8, 1))).toMatchObject({ ok: false, reason: expect.stringMatching(/^stream: sm_90 streams with cp.async/) });
    expect(validate(st({ ...gfx950Spec(), double_buffer: true }, 8, 1))).toEqual({ ok: false, reason: 'stream: the register prefetch streams through one X stage (double_buffer false)' });
    expect(validate(st(mmaSync, 0, 1))).toMatchObject({ ok: false, reason: expect.stringMatching(/^stream: workgroups and chunks must be >= 1/) });
    expect(validate(st(mmaSync, 8, 1), problem1x1({ C: 128, K: 128 }))).toEqual({ ok: false, reason: 'stream: C 128 is 2 chunks of ck 64; the spec keeps 1 resident' });
    expect(validate(st(mmaSync, 8, 2), problem1x1({ C: 128, K: 128 }))).toEqual({ ok: true });
  });

  it('lays out X stages, one weight stage per chunk and its own output region, and names it', () => {
    const s = st(mmaSync, 264, 3);
    expect(kernelName(s)).toMatch(/_st264x3$/);
    const l = streamLds(s);
    // The one-tile kernel's two X and two W stages (scratch tails included), plus one more W stage.
    expect(2 * l.xStageBytes + 2 * l.wStageBytes).toBe(specGeometry(pointwiseSpec(mmaSync)).ldsBytes);
    expect(l.outOffset).toBe(2 * l.xStageBytes + 3 * l.wStageBytes);
    expect(l.outBytes).toBe(128 * (128 + 8) * 2);
    expect(specGeometry(s).ldsBytes).toBe(l.outOffset + l.outBytes);
    expect(outputStaging(s)).toMatchObject({ passes: 1, bytes: l.outBytes });
  });

  it('launches min(pixel tiles, workgroups / channel tiles) workgroups per channel tile, each striding over the pixel tiles', () => {
    const p = problem1x1({ N: 8, H: 56, W: 56, C: 64, K: 256 });
    const s = st(mmaSync, 264, 1);
    expect(launchGrid(s, p)).toMatchObject({ wTiles: 132, kTiles: 2, workgroups: 264 });
    expect(streamTilesPerWorkgroup(s, p)).toBe(2);
    expect(streamSlots(5, 3, 2)).toBe(2);
    expect(streamSlots(1, 3, 2)).toBe(1);
    expect(streamSlots(100, 3, 2)).toBe(3);
  });

  it('prices tiles in one chunk sequence, the weights staged once, each store but the last overlapped', () => {
    const p = problem1x1({ N: 8, H: 56, W: 56, C: 128, K: 256 });
    const one = estimateCost(pointwiseSpec(mmaSync), p);
    const s = estimateCost(st(mmaSync, 132, 2), p);
    const tiles = streamTilesPerWorkgroup(st(mmaSync, 132, 2), p);
    // 196 pixel tiles over 132 / 2 = 66 workgroups per channel tile.
    expect(tiles).toBe(3);
    expect(s.facts.chunks).toBe(tiles * one.facts.chunks);
    expect(s.facts.storeRounds).toBe(s.facts.rounds * tiles);
    expect(one.facts.storeRounds).toBe(one.facts.rounds);
    // Weights once: less staged than `tiles` one-tile workgroups.
    expect(s.facts.stagedPerFlop).toBeLessThan(one.facts.stagedPerFlop);
  });

  it('is offered on request as copies of the per-wave pointwise specs where each workgroup gets two or more tiles, and not by default', () => {
    const big = problem1x1({ N: 8, H: 56, W: 56, C: 64, K: 256 });
    const streams = problemCandidates(big, 'sm_90', { variant: 'pointwise', stream: true }).valid.filter((s) => s.stream);
    expect(streams.length).toBeGreaterThan(0);
    for (const s of streams) {
      expect(s.atom).toBe('m16n8k16');
      expect(s.stream!.chunks).toBe(Math.ceil(64 / s.ck));
      expect(s.stream!.workgroups).toBe(residency(s).slots);
      expect(streamTilesPerWorkgroup(s, big)).toBeGreaterThanOrEqual(2);
    }
    expect(problemCandidates(problem1x1({ N: 1, H: 14, W: 14, C: 64, K: 64 }), 'sm_90', { variant: 'pointwise', stream: true }).valid.some((s) => s.stream)).toBe(false);
    expect(problemCandidates(big, 'gfx950', { variant: 'pointwise', stream: true }).valid.some((s) => s.stream)).toBe(true);
    expect(problemCandidates(big, 'sm_90', { variant: 'pointwise' }).valid.some((s) => s.stream)).toBe(false);
    const sel = selectProblemSpecs([{ name: 'pw_56_c64_k256', cls: 'pointwise', problem: big }], 'sm_90', { cap: 6 })[0]!;
    expect(sel.variants.find((v) => v.variant === 'pointwise')!.specs.some((s) => s.stream)).toBe(false);
  });
});
