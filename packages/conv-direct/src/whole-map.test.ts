/**
 * Whole-map candidates and their place in the bench order: derived from the problem (map, N,
 * stride) and the target's register file, never offered where the map does not fit or the stride
 * is not 1, and first among the warpgroup-MMA split_c candidates of a tiny map.
 */
import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { selectProblemSpecs } from './selection.js';
import { problem3x3 } from './test-fixtures.js';
import { estimateCost } from './cost-model.js';
import { wholeMapLayout } from './whole-map.js';

const tiny = problem3x3({ N: 4, H: 4, W: 4, C: 2048, K: 2048 });

describe('whole-map candidates', () => {
  it('fit the tile to the map and put the whole batch in one image tile when the pixels allow', () => {
    const wm = problemCandidates(tiny, 'sm_90', { variant: 'split_c' }).valid.filter((s) => s.whole_map);
    expect(wm.length).toBeGreaterThan(0);
    for (const s of wm) expect([s.tile_h, s.tile_w, s.waves_n, s.atom]).toEqual([4, 4, 1, 'm64nNk16']);
    // One 64-channel m-block per warpgroup: all 4 images (96 pixel columns). Four m-blocks (tile_k 256
    // on one warpgroup) leave registers for 88 columns: 3 images fit, so two balanced tiles of 2.
    expect(new Set(wm.filter((s) => s.tile_k / s.waves_m === 64).map((s) => s.tile_n))).toEqual(new Set([4]));
    expect(new Set(wm.filter((s) => s.tile_k / s.waves_m === 256).map((s) => s.tile_n))).toEqual(new Set([2]));
  });

  it('balance the images over as few tiles as fit (8x8, N 5: 81 positions per image)', () => {
    const wm = problemCandidates(problem3x3({ N: 5, H: 8, W: 8, C: 256, K: 256 }), 'sm_90', { variant: 'split_c' }).valid.filter((s) => s.whole_map);
    // One wgmma per tap (256 pixels): 3 images per tile → 2 tiles → ceil(5/2) = 3; the register budget: 4 → 2 tiles → 3 as well, or 5 in one.
    const tileNs = new Set(wm.map((s) => s.tile_n));
    for (const n of tileNs) expect(wholeMapLayout(wm.find((s) => s.tile_n === n)!).pixels).toBeLessThanOrEqual(360);
    expect(tileNs.has(3)).toBe(true);
    expect(tileNs.has(4)).toBe(false);
  });

  it('are not offered for maps that do not fit, for stride 2, off sm_90 or for grouped convs', () => {
    const none = (p: ReturnType<typeof problem3x3>, target: 'sm_90' | 'gfx950', variant: 'dense' | 'split_c' | 'grouped') =>
      problemCandidates(p, target, { variant }).valid.filter((s) => s.whole_map).length;
    expect(none(problem3x3({ N: 1, H: 28, W: 28, C: 256, K: 256 }), 'sm_90', 'dense')).toBe(0);
    expect(none(problem3x3({ N: 4, H: 8, W: 8, C: 256, K: 256, strideH: 2, strideW: 2 }), 'sm_90', 'split_c')).toBe(0);
    expect(none(tiny, 'gfx950', 'split_c')).toBe(0);
    expect(none(problem3x3({ N: 4, H: 4, W: 4, C: 256, K: 256, groups: 8 }), 'sm_90', 'grouped')).toBe(0);
  });

  it('rank first among the warpgroup-MMA split_c specs of a tiny map (the flat pixels waste less than 8x8 m-blocks)', () => {
    const [shape] = selectProblemSpecs([{ name: 'tiny', cls: 'small-map', problem: tiny }], 'sm_90', { cap: 6 });
    const split = shape!.variants.find((v) => v.variant === 'split_c')!;
    const wgmma = split.specs.filter((s) => s.atom === 'm64nNk16');
    expect(wgmma[0]?.whole_map).toBe(true);
    // 4 images of 25 positions less the last image's padding: 94 → 96 pixel columns for 64 pixels.
    expect(estimateCost(wgmma[0]!, tiny).facts.tileUtilization).toBeCloseTo(64 / 96, 12);
  });
});
