import { TARGETS } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { depthwiseGeometry, depthwiseLdsPad, depthwiseReadConflicts, depthwiseWeightStoreConflicts } from './depthwise-geometry.js';
import { DEPTHWISE_BLOCKS, DEPTHWISE_IMAGE_TILED, DEPTHWISE_MAX_SPECS, DEPTHWISE_MAX_TILE_K, DEPTHWISE_TILE_IMAGES, depthwiseBlocks, depthwiseGrid, depthwiseIssueCost, depthwiseRegisterBudget, depthwiseTileKs, isDepthwiseProblem } from './depthwise.js';
import { plan } from './plan.js';
import { residency } from './residency.js';
import { canonicalSpecJson, kernelName, specFromJson } from './spec.js';
import { spillReason } from './spill.js';

import { depthwiseSpec, gfx950Spec, problem3x3 } from './test-fixtures.js';
import { validate } from './validate.js';
import type { Problem } from './problem.js';

const dw = (o: Partial<Problem> = {}): Problem => problem3x3({ N: 8, H: 56, W: 56, C: 96, K: 96, groups: 96, ...o });
const reasonOf = (spec: unknown, problem?: unknown): string => {
  const v = validate(spec, problem);
  return v.ok ? 'ok' : v.reason;
};

describe('depthwise problems and specs', () => {
  it('recognises groups = C with multipliers 1, 2, 4 only', () => {
    expect(isDepthwiseProblem(dw())).toBe(true);
    expect(isDepthwiseProblem(dw({ K: 384 }))).toBe(true);
    expect(isDepthwiseProblem(dw({ K: 288 }))).toBe(false);
    expect(isDepthwiseProblem(dw({ groups: 32 }))).toBe(false);
    expect(isDepthwiseProblem(problem3x3({ C: 1, K: 1, groups: 1 }))).toBe(false);
  });

  it('round-trips through the strict schema and names every knob', () => {
    const s = depthwiseSpec({ target: 'sm_90' });
    expect(specFromJson(canonicalSpecJson(s))).toEqual({ ok: true, spec: s });
    expect(kernelName(s)).toBe('rocke_direct_depthwise_sm_90_bf16_r3s3_u1v1_p1q1_t2x8x16_ck8_w4x1_afma_lp0_cs0x1x64_wgm8');
  });

  it('rejects specs with reasons', () => {
    expect(reasonOf(depthwiseSpec({ atom: '32x32x16' }))).toBe('the depthwise kernel uses no MMA: its atom is fma (got 32x32x16)');
    expect(reasonOf(gfx950Spec({ atom: 'fma' }))).toBe('atom fma is not available on gfx950 (it has 32x32x16, 16x16x32)');
    expect(reasonOf(depthwiseSpec({ ck: 16 }))).toBe('ck 16: depthwise ck is 8 / channel multiplier (8, 4 or 2 for multipliers 1, 2, 4)');
    expect(reasonOf(depthwiseSpec({ tile_k: 12 }))).toBe('tile_k 12 is not a multiple of 8 (whole 16-byte channel vectors)');
    expect(reasonOf(depthwiseSpec({ ck: 2, tile_k: 16 }))).toBe('tile_k 16 / multiplier 4 = 4 input channels are not a multiple of 8 (16-byte staging)');
    expect(reasonOf(depthwiseSpec({ waves_m: 3 }))).toBe('tile_w 8 is not a multiple of waves_m 3 (depthwise: output columns per thread)');
    expect(reasonOf(depthwiseSpec({ waves_n: 4 }))).toBe('tile_h 2 is not a multiple of waves_n 4 (depthwise: output rows per thread)');
    expect(reasonOf(depthwiseSpec({ R: 9, S: 9 }))).toBe('filter 9x9: the depthwise kernel takes sides up to 7');
    expect(reasonOf(depthwiseSpec({ double_buffer: true }))).toBe('depthwise specs need double_buffer false (the tile is the whole reduction; image tiles, tile_n > 1, double-buffer the halo by themselves)');
    expect(reasonOf(depthwiseSpec({ tile_n: 5 }))).toBe('tile_n 5: a depthwise workgroup takes up to 4 images (its image loop is unrolled)');
    expect(reasonOf(depthwiseSpec({ tile_n: 0 }))).toBe('tile_n must be >= 1 (got 0)');
    expect(reasonOf(depthwiseSpec({ tile_n: 4 }), dw({ N: 6 }))).toBe('ok');
    expect(reasonOf(depthwiseSpec({ target: 'sm_90', chiplet_swizzle: true }))).toBe('sm_90 has no chiplets (XCDs); chiplet_swizzle must be false');
    expect(reasonOf(depthwiseSpec({ tile_h: 64, tile_w: 64, tile_k: 64, waves_m: 1 }))).toMatch(/^131072 threads per workgroup \(tile_k\/2 x tile_h\/waves_n x tile_w\/waves_m\) exceed 1024 on gfx950$/);
  });

  it('rejects problems it cannot serve, with reasons', () => {
    const s = depthwiseSpec();
    expect(reasonOf(s, dw())).toBe('ok');
    expect(reasonOf(s, dw({ groups: 48 }))).toBe('the depthwise variant needs groups == C (got groups 48, C 96)');
    expect(reasonOf(s, dw({ K: 192 }))).toBe("channel multiplier K/C = 192/96 does not match the spec's 1 (ck 8 = 8 / multiplier)");
    expect(reasonOf(depthwiseSpec({ ck: 4 }), dw({ K: 192 }))).toBe('ok');
    expect(reasonOf(s, dw({ dilationH: 2 }))).toBe("problem dilation 2x1 does not match the spec's baked 1x1");
    expect(reasonOf(depthwiseSpec({ dilation_h: 2 }), dw({ dilationH: 2 }))).toBe('depthwise specs need dilation 1x1');
  });

  it('derives threads, LDS and registers from the tile', () => {
    const g = depthwiseGeometry(depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8 }));
    // 16 channel pairs x 4 row groups x 4 column groups; each thread reads a 4 x 6 window for its 2 x 4 block.
    expect([g.threads, g.ldsInH, g.ldsInW, g.pixelStride, g.xVectors, g.xPasses, g.accPerLane, g.rowsRead, g.columnsRead]).toEqual([256, 10, 18, 40, 720, 3, 16, 4, 6]);
    expect([g.weightRegisters, g.pairInChannels]).toEqual([18, 2]);
    expect(g.ldsBytes).toBe(10 * 18 * 40 * 2 + 9 * 32 * 2);
    // Multiplier 4: 64 output channels read 16 staged input channels, one per pair.
    const m4 = depthwiseGeometry(depthwiseSpec({ ck: 2, tile_k: 64 }));
    expect([m4.inChannels, m4.pairInChannels]).toEqual([16, 1]);
  });

  it('picks the LDS pad that removes the tap loop read conflicts', () => {
    // 32 channels (64 bytes) per pixel, 16 pairs: lanes 16 apart read 4 pixels (256 bytes) apart, the same banks.
    const fields = { ...depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4 }), lds_pad: 0 };
    expect(depthwiseReadConflicts(fields)).toBeGreaterThan(1);
    const pad = depthwiseLdsPad(fields);
    expect(pad).toBe(8);
    expect(depthwiseReadConflicts({ ...fields, lds_pad: pad })).toBe(1);
  });
});

describe('depthwise weight staging', () => {
  it('stores the weights with consecutive lanes along tile_k: no bank conflict at any channel tile or filter', () => {
    // A layout with lanes a tap apart ([tap][tile_k] filled along w's [K][R*S]) would put 32 lanes
    // of a 3x3 tile_k 64 tile on a few banks (16- to 32-way); lanes along the channels use all 32.
    for (const tile_k of [16, 32, 64])
      for (const R of [3, 5, 7]) {
        const fields = { ...depthwiseSpec({ R, S: R, pad_h: (R - 1) / 2, pad_w: (R - 1) / 2, tile_h: 4, tile_w: 8, tile_k, waves_m: 2, waves_n: 2 }), lds_pad: 0 };
        expect(depthwiseWeightStoreConflicts(fields)).toBe(1);
      }
  });
});

describe('depthwise candidates and plans', () => {
  it('offers valid, non-spilling candidates for every target, multiplier and filter', () => {
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const)
      for (const [m, R] of [[1, 3], [2, 5], [4, 7]] as const) {
        const p = dw({ K: 96 * m, R, S: R, padH: (R - 1) / 2, padW: (R - 1) / 2 });
        const set = problemCandidates(p, target);
        expect(set.valid.length).toBeGreaterThan(0);
        for (const s of set.valid) {
          expect(s.variant).toBe('depthwise');
          expect(s.ck).toBe(8 / m);
          expect(spillReason(s)).toBeNull();
          expect(depthwiseGeometry(s).threads).toBeLessThanOrEqual(TARGETS[target].maxThreadsPerBlock);
          expect(residency(s).perUnit).toBeGreaterThanOrEqual(2);
        }
      }
  });

  it('budgets registers so that two workgroups and 256 threads stay resident', () => {
    expect([64, 128, 256].map((n) => depthwiseRegisterBudget('sm_90', n))).toEqual([255, 255, 128]);
    // gfx950: 4 waves put one wave on each SIMD, 8 waves two: half of a 512-register file per workgroup.
    expect([256, 512].map((n) => depthwiseRegisterBudget('gfx950', n))).toEqual([256, 128]);
  });

  it('offers channel tiles of whole 16-byte input vectors: the octave tops without K, the least-padding width per octave given K', () => {
    expect(depthwiseTileKs(1)).toEqual([16, 32, 64]);
    expect(depthwiseTileKs(2)).toEqual([16, 32, 64]);
    expect(depthwiseTileKs(4)).toEqual([32, 64]);
    // K 72 = 9 vectors: 24 and 72 divide it, 40 pads it least among 33..64; 72 holds it whole, so no wider octave.
    expect(depthwiseTileKs(1, 72)).toEqual([16, 24, 40, 72]);
    expect(depthwiseTileKs(1, 120)).toEqual([16, 24, 40, 120]);
    expect(depthwiseTileKs(1, 240)).toEqual([16, 24, 48, 120]);
    expect(depthwiseTileKs(1, 672)).toEqual([16, 32, 56, 112]);
    expect(depthwiseTileKs(1, 384)).toEqual([16, 32, 64, 128]);
    expect(depthwiseTileKs(1, 16)).toEqual([16]);
    // Multiplier 2: widths of whole input vectors are multiples of 16 output channels (K 144 = C 72 x 2).
    expect(depthwiseTileKs(2, 144)).toEqual([16, 32, 48, 80]);
    expect(depthwiseTileKs(4, 96)).toEqual([32, 64, 96]);
    for (const [m, k] of [[1, 72], [1, 200], [2, 144], [4, 40]] as const) {
      for (const w of depthwiseTileKs(m, k)) {
        expect(w % (8 * m)).toBe(0);
        expect(w).toBeLessThanOrEqual(DEPTHWISE_MAX_TILE_K);
      }
    }
  });

  it('costs tiles by FMAs over whole tiles, window reads and staged bytes', () => {
    const base = depthwiseSpec({ target: 'sm_90', R: 7, S: 7, pad_h: 3, pad_w: 3, tile_h: 2, tile_w: 14, tile_k: 64, waves_m: 2, waves_n: 2 });
    // A 2 x 14 tile covers the 14-wide map exactly; a 2 x 16 one pays for 2 padded columns of 49 taps.
    expect(depthwiseIssueCost(base, 14, 14, 384)).toBeLessThan(depthwiseIssueCost({ ...base, tile_w: 16 }, 14, 14, 384));
    // K 80 in tiles of 64 computes 128 channels; tiles of 16 compute 80.
    expect(depthwiseIssueCost({ ...base, tile_k: 16 }, 14, 14, 80)).toBeLessThan(depthwiseIssueCost(base, 14, 14, 80));
    // Same outputs per tile, taller tile: fewer staged halo bytes per output.
    const flat = depthwiseSpec({ target: 'sm_90', tile_h: 2, tile_w: 32, tile_k: 16, waves_m: 4, waves_n: 2 });
    expect(depthwiseIssueCost({ ...flat, tile_h: 8, tile_w: 8 }, 64, 64, 16)).toBeLessThan(depthwiseIssueCost(flat, 64, 64, 16));
    // Unknown K: the cost per output channel.
    expect(depthwiseIssueCost(base, 14, 14, null)).toBeCloseTo(depthwiseIssueCost(base, 14, 14, 64) / 64);
  });

  it('offers the cheapest tiles per output block and per channel-tile width, at most DEPTHWISE_MAX_SPECS', () => {
    const cap = { R: 7, S: 7, stride_h: 1, stride_w: 1, pad_h: 3, pad_w: 3, dilation_h: 1, dilation_w: 1 };
    const specs = depthwiseGrid('sm_90', { dtype: 'bf16', capability: cap, wo: 14, ho: 14, channels: { C: 384, K: 384 } });
    expect(specs.length).toBeGreaterThan(0);
    expect(specs.length).toBeLessThanOrEqual(DEPTHWISE_MAX_SPECS);
    // Every channel-tile width is timed, not only the one the issue cost prefers.
    for (const [p, c] of [[{ ho: 14, wo: 14, C: 384 }, cap], [{ ho: 56, wo: 56, C: 64 }, { ...cap, R: 3, S: 3, stride_h: 2, stride_w: 2, pad_h: 1, pad_w: 1 }], [{ ho: 56, wo: 56, C: 72 }, { ...cap, R: 3, S: 3, pad_h: 1, pad_w: 1 }]] as const) {
      for (const target of ['sm_90', 'gfx950'] as const) {
        const grid = depthwiseGrid(target, { dtype: 'bf16', capability: c, wo: p.wo, ho: p.ho, channels: { C: p.C, K: p.C } });
        expect(new Set(grid.map((s) => s.tile_k))).toEqual(new Set(depthwiseTileKs(1, p.C)));
        expect(grid.length).toBeLessThanOrEqual(DEPTHWISE_MAX_SPECS);
      }
    }
    expect(new Set(specs.map((s) => s.ck))).toEqual(new Set([8]));
    expect(depthwiseGrid('sm_90', { dtype: 'bf16', capability: cap, wo: 14, ho: 14, channels: { C: 384, K: 384 } })).toEqual(specs);
    for (const s of specs) expect(depthwiseGeometry(s).threads).toBeLessThanOrEqual(256);
    // The shape-independent grid offers every multiplier.
    const aot = depthwiseGrid('gfx950', { dtype: 'bf16', capability: { ...cap, R: 3, S: 3, pad_h: 1, pad_w: 1 } });
    expect(new Set(aot.map((s) => s.ck))).toEqual(new Set([8, 4, 2]));
  });

  it('offers image tiles of the cheapest tiles on a batch where copies are async (sm_90), and plans their halved grid', () => {
    const cap = { R: 3, S: 3, stride_h: 1, stride_w: 1, pad_h: 1, pad_w: 1, dilation_h: 1, dilation_w: 1 };
    const grid = (target: 'sm_90' | 'gfx950', images: number) => depthwiseGrid(target, { dtype: 'bf16', capability: cap, wo: 56, ho: 56, channels: { C: 72, K: 72 }, images });
    const tiled = grid('sm_90', 32).filter((s) => s.tile_n > 1);
    expect(tiled.length).toBe(DEPTHWISE_IMAGE_TILED);
    expect(grid('sm_90', 32).length).toBeLessThanOrEqual(DEPTHWISE_MAX_SPECS);
    for (const s of tiled) {
      expect(s.tile_n).toBe(DEPTHWISE_TILE_IMAGES);
      // Each is a one-image tile of the grid, over two images.
      expect(grid('sm_90', 32).some((o) => kernelName(o) === kernelName({ ...s, tile_n: 1 }))).toBe(true);
      const g = depthwiseGeometry(s);
      expect(g.ldsBytes).toBe(2 * g.xBytes + g.wBytes);
      expect(spillReason(s)).toBeNull();
      expect(residency(s).perUnit).toBeGreaterThanOrEqual(2);
      const p = plan(s, dw({ N: 5, C: 72, K: 72, groups: 72 }), 'sm_90');
      const one = plan({ ...s, tile_n: 1 }, dw({ N: 5, C: 72, K: 72, groups: 72 }), 'sm_90');
      // Images 0-1, 2-3 and 4 (the last tile's second image is past N).
      expect(p.launches[0]!.grid[0]).toBe((one.launches[0]!.grid[0] / 5) * 3);
      expect(p.launches[0]!.sharedBytes).toBe(g.ldsBytes);
    }
    // One image, or staging through registers (no overlap): none.
    expect(grid('sm_90', 1).some((s) => s.tile_n > 1)).toBe(false);
    expect(grid('gfx950', 32).some((s) => s.tile_n > 1)).toBe(false);
  });

  it('adds whole-row blocks where the fixed blocks do not divide the row', () => {
    expect(depthwiseBlocks(56)).toEqual(DEPTHWISE_BLOCKS);
    expect(depthwiseBlocks(28)).toEqual(DEPTHWISE_BLOCKS);
    expect(depthwiseBlocks(null)).toEqual(DEPTHWISE_BLOCKS);
    // 7 wide: one 7-column block per row; 14 wide: two; 10 wide: two of 5.
    expect(depthwiseBlocks(7).slice(DEPTHWISE_BLOCKS.length)).toEqual([[1, 7], [2, 7]]);
    expect(depthwiseBlocks(14).slice(DEPTHWISE_BLOCKS.length)).toEqual([[1, 7], [2, 7]]);
    expect(depthwiseBlocks(10).slice(DEPTHWISE_BLOCKS.length)).toEqual([[1, 5], [2, 5]]);
  });

  it('on a small map with many channels, puts first a tile over the whole map with channels as the parallel axis', () => {
    // 7x7 map, C 960, 5x5: tiles of 4 columns compute 8 per row or stage the row's halo twice.
    const cap = { R: 5, S: 5, stride_h: 1, stride_w: 1, pad_h: 2, pad_w: 2, dilation_h: 1, dilation_w: 1 };
    for (const target of ['sm_90', 'gfx950'] as const) {
      const specs = depthwiseGrid(target, { dtype: 'bf16', capability: cap, wo: 7, ho: 7, channels: { C: 960, K: 960 } });
      const cost = (s: (typeof specs)[number]) => depthwiseIssueCost(s, 7, 7, 960);
      const cheapest = specs.reduce((a, s) => (cost(s) < cost(a) ? s : a));
      expect(cheapest.tile_w).toBe(7);
      expect(cheapest.tile_h).toBeGreaterThanOrEqual(7);
      expect(cheapest.waves_m).toBe(7);
      // A partial last wave is allowed and costed as a whole one.
      expect(specs.some((s) => depthwiseGeometry(s).threads % TARGETS[target].waveSize !== 0)).toBe(true);
    }
  });

  it('plans a launch: grid over images, spatial tiles and channel tiles; block and LDS from the spec', () => {
    const s = depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8 });
    const p = plan(s, dw(), 'sm_90');
    expect(p.variant).toBe('depthwise');
    expect(p.launches).toHaveLength(1);
    const l = p.launches[0]!;
    expect(l.grid).toEqual([8 * 7 * 4 * 3, 1, 1]);
    expect(l.block).toEqual([256, 1, 1]);
    expect(l.sharedBytes).toBe(depthwiseGeometry(s).ldsBytes);
    expect(l.kernargs).toHaveLength(20);
  });
});
