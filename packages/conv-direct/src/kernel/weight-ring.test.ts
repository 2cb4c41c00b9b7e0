/**
 * The per-tap weight ring (weight_ring, sm_90a wgmma): the exact IR runs in the interpreter against
 * the fp64 oracle — stride 2 with partial tiles, both operand layouts (ck 16/32 core-matrix planes,
 * ck 64 swizzled rows), a 2x2 stride-2 filter (4 taps), several chunks so the ring wraps across
 * chunks, a channel tail, an output-channel tail, split_c, two warpgroups; stride 1 with a wgmma
 * N of 128 and 256 at ck 64 (the small-map tiles only the ring holds). A kernel that skips one tap
 * per chunk fails the same check.
 */
import { TARGETS } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { problemCandidates } from '../candidates.js';
import { problemGeometry, type Problem } from '../problem.js';
import { canonicalSpecJson, kernelName, specFromJson, specGeometry, weightRing, wgmmaLds, type Spec } from '../spec.js';
import { specFromKernelName } from '../ranker/spec-from-name.js';
import { problem3x3, wgmmaSpec } from '../test-fixtures.js';
import { registerEstimate, spillReason } from '../spill.js';
import { splitSlice, splitUnit } from '../split-slices.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { channelSlice, fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

const ring = (over: Partial<Spec>): Spec => wgmmaSpec({ stride_h: 2, stride_w: 2, weight_ring: true, ...over });
const s2 = (o: Partial<Problem>) => problem3x3({ N: 1, strideH: 2, strideW: 2, C: 64, K: 64, ...o });

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
}

const dense: Case[] = [
  { name: 'stride 2, ck 16 planes, 4 chunks, 9x9 output in 8x8 tiles', spec: ring({ ck: 16 }), problem: s2({ H: 17, W: 17 }) },
  { name: 'stride 2, ck 64 swizzled rows, 2 chunks, tile 8x16, two warpgroups along the m-blocks', spec: ring({ ck: 64, tile_w: 16, waves_n: 2 }), problem: s2({ H: 15, W: 30, C: 128 }) },
  { name: 'stride 2, ck 32, tile_k 128 over two warpgroups, fp16, N 2', spec: ring({ dtype: 'fp16', ck: 32, tile_k: 128, waves_m: 2 }), problem: s2({ N: 2, H: 12, W: 12, K: 128, dtype: 'fp16' }) },
  { name: '2x2 stride-2 filter, pad 0 (4 taps), ck 32, 3 chunks', spec: ring({ R: 2, S: 2, pad_h: 0, pad_w: 0, ck: 32 }), problem: s2({ R: 2, S: 2, padH: 0, padW: 0, H: 16, W: 14, C: 96 }) },
  { name: 'channel tail (C 40, ck 32: a partial second chunk) and output-channel tail (K 72)', spec: ring({ ck: 32, c_tail: 8, k_tail: true, tile_k: 128 }), problem: s2({ H: 10, W: 10, C: 40, K: 72 }) },
  { name: 'stride 1, ck 16, 3 chunks', spec: ring({ stride_h: 1, stride_w: 1 }), problem: problem3x3({ N: 1, H: 9, W: 8, C: 48, K: 64 }) },
  // Whole-map tiles: the ring streams the MMA's A operand (64 output channels of a tap per m-block).
  { name: 'whole map 4x4, tile_n 4, N 3, ck 64 swizzled, 3 chunks (the ring wraps across chunks)', spec: ring({ stride_h: 1, stride_w: 1, whole_map: true, tile_h: 4, tile_w: 4, tile_n: 4, ck: 64 }), problem: problem3x3({ N: 3, H: 4, W: 4, C: 192, K: 64 }) },
  { name: 'whole map 3x3, tile_n 8, N 5, ck 16 planes, two m-blocks per warpgroup, channel tail (C 40) and K tail (72)', spec: ring({ stride_h: 1, stride_w: 1, whole_map: true, tile_h: 3, tile_w: 3, tile_n: 8, tile_k: 128, ck: 16, c_tail: 8, k_tail: true }), problem: problem3x3({ N: 5, H: 3, W: 3, C: 40, K: 72 }) },
  { name: 'stride 1, ck 64 swizzled, tile_k 256 over two warpgroups (wgmma N 128), partial 7x7 map, K tail 200', spec: ring({ stride_h: 1, stride_w: 1, ck: 64, tile_k: 256, waves_m: 2, k_tail: true }), problem: problem3x3({ N: 1, H: 7, W: 7, C: 128, K: 200 }) },
];

const run = (c: Case, options: Parameters<typeof buildConvKernel>[1] = {}) => {
  const geo = problemGeometry(c.problem);
  const x = randomBits(geo.xBytes / 2, c.problem.dtype, 71);
  const w = randomBits(geo.wBytes / 2, c.problem.dtype, 73);
  const y = Array.from(interpretConv(buildConvKernel(c.spec, options), c.problem, x, w).y, fromBits(c.problem.dtype));
  return mismatches(y, naiveConv(c.problem, x, w), c.problem.dtype, c.problem.R * c.problem.S * c.problem.C);
};

describe('weight ring layout', () => {
  it('gives the halo two stages and the ring one tap of weights per stage', () => {
    const s = ring({ ck: 32, tile_h: 16, tile_w: 16, tile_k: 128, waves_n: 2 });
    const L = wgmmaLds(s);
    // 33x33 halo, columns by phase padded to 34; 4 planes of 16-byte rows.
    expect(L.xStageBytes).toBe(33 * 34 * 16 * 4);
    expect(L.wStageBytes).toBe(128 * 32 * 2);
    expect(L.stages).toBe(2);
    expect(L.ring).toEqual({ stages: L.wStages, ahead: L.wStages - 2 });
    expect(specGeometry(s).ldsBytes).toBe(2 * L.xStageBytes + L.wStages * L.wStageBytes);
    // Without the ring the same tile's 9 taps of weights share each halo stage: over the 227 KiB limit.
    const { weight_ring: _, ...allTaps } = s;
    expect(validate(allTaps)).toMatchObject({ ok: false, reason: expect.stringMatching(/LDS \d+ bytes exceed/) });
    expect(validate(s)).toEqual({ ok: true });
  });

  it('derives the depth from the LDS: two workgroups per SM when 3 stages fit beside the halo there, else the block alone; at most taps + 1', () => {
    const kib = 1024;
    // sm_90: 228 KiB per SM, 1 KiB reserved per block, 227 KiB per block.
    expect(weightRing('sm_90', 9, 40 * kib, 8 * kib)).toEqual({ stages: 9, ahead: 7 });
    expect(weightRing('sm_90', 9, 10 * kib, 8 * kib)).toEqual({ stages: 10, ahead: 8 });
    expect(weightRing('sm_90', 4, 10 * kib, 8 * kib)).toEqual({ stages: 5, ahead: 3 });
    // 100 KiB of halo: only 1 stage fits in half the SM; alone, 15 would, capped at taps + 1.
    expect(weightRing('sm_90', 9, 100 * kib, 8 * kib)).toEqual({ stages: 10, ahead: 8 });
    expect(weightRing('sm_90', 9, 200 * kib, 8 * kib)).toEqual({ stages: 3, ahead: 1 });
    // Every depth satisfies the schedule's constraints (see spec.ts weightRing).
    for (const taps of [2, 4, 9, 25])
      for (const fixed of [0, 50, 100, 150, 200])
        for (const stage of [2, 8, 16, 32]) {
          const r = weightRing('sm_90', taps, fixed * kib, stage * kib);
          expect(r.ahead).toBeGreaterThanOrEqual(1);
          expect(r.ahead).toBeLessThanOrEqual(taps - 1);
          expect(r.stages).toBe(r.ahead + 2);
        }
  });

  it('the spill heuristic counts the hoisted staging slots of a ring kernel', () => {
    // ptxas 13, sm_90a: 208 registers, no spills; and 255 registers with 252 bytes spilled (36 halo slots per thread).
    expect(spillReason(ring({ ck: 32, tile_h: 16, tile_w: 16, tile_k: 128, waves_n: 2 }))).toBeNull();
    expect(spillReason(ring({ ck: 64, tile_h: 16, tile_w: 8, tile_k: 128 }))).toMatch(/slots 88\) exceed the budget/);
    expect(registerEstimate(wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 8, tile_k: 128 })).slots).toBe(0);
  });

  it('names ring specs with _wr and reads the name back', () => {
    const s = ring({ ck: 32, variant: 'split_c' });
    expect(kernelName(s)).toMatch(/_wr$/);
    expect(specFromKernelName(kernelName(s))).toEqual({ ok: true, spec: s });
    const wm = ring({ variant: 'split_c', stride_h: 1, stride_w: 1, whole_map: true, tile_h: 4, tile_w: 4, tile_n: 4, ck: 64 });
    expect(kernelName(wm)).toMatch(/_n4_wm_wr$/);
    expect(specFromKernelName(kernelName(wm))).toEqual({ ok: true, spec: wm });
    expect(specFromJson(canonicalSpecJson(s))).toEqual({ ok: true, spec: s });
    expect(specFromJson(JSON.stringify({ ...s, weight_ring: false }))).toMatchObject({ ok: false });
  });

  it('refuses what has no ring, with the reason', () => {
    const reason = (s: Spec) => {
      const v = validate(s);
      return v.ok ? 'ok' : v.reason;
    };
    expect(reason(ring({ atom: 'm16n8k16', tile_w: 16, tile_k: 32 }))).toMatch(/^weight_ring: .* warpgroup MMA .*not m16n8k16/);
    expect(reason(ring({ stride_h: 1, stride_w: 1, R: 1, S: 1, pad_h: 0, pad_w: 0 }))).toMatch(/^weight_ring: a 1x1 filter has one tap/);
    expect(reason(ring({ variant: 'grouped', group_merge: 1 }))).toMatch(/grouped variant has no warpgroup-MMA kernel/);
  });
});

/**
 * Runs a split_c spec at two splits (validated first) and checks each fp32 workspace slice against
 * the fp64 conv of the channel range `range(s)` gives it.
 */
function expectSlicesAreChannelRanges(spec: Spec, p: Problem, seeds: readonly [number, number], range: (s: number) => { c0: number; c1: number }): void {
  expect(validate(spec, p, { splits: 2 })).toEqual({ ok: true });
  const g = problemGeometry(p);
  const x = randomBits(g.xBytes / 2, p.dtype, seeds[0]);
  const w = randomBits(g.wBytes / 2, p.dtype, seeds[1]);
  const ws = interpretConv(buildConvKernel(spec), p, x, w, { splits: 2 }).ws!;
  const slice = p.N * g.Ho * g.Wo * p.K;
  for (let s = 0; s < 2; s++) {
    const { c0, c1 } = range(s);
    const sub = channelSlice(p, x, w, c0, c1 - c0);
    expect(mismatches(ws.subarray(s * slice, (s + 1) * slice), naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * (c1 - c0))).toEqual({ count: 0, first: null });
  }
}

describe('weight ring numerics (interpreter vs naive fp64 conv)', () => {
  it.each(dense.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    expect(run(c)).toEqual({ count: 0, first: null });
  });

  it('a kernel that skips the last tap of every chunk fails (m-block and whole-map tiles)', () => {
    expect(run(dense[0]!, { mutation: { dropTap: true } }).count).toBeGreaterThan(100);
    const wholeMap = dense.find((c) => c.spec.whole_map)!;
    expect(run(wholeMap, { mutation: { dropTap: true } }).count).toBeGreaterThan(100);
  });

  it('split_c at stride 1, ck 64, wgmma N 128, channel tail (C 136 in 17 runs of 8), 3 uneven slices: each fp32 slice is its channel range', () => {
    const spec = ring({ variant: 'split_c', stride_h: 1, stride_w: 1, ck: 64, tile_k: 128, c_tail: 8 });
    const p = problem3x3({ N: 2, H: 8, W: 8, C: 136, K: 128 });
    const splits = 3;
    expect(validate(spec, p, { splits })).toEqual({ ok: true });
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 89);
    const w = randomBits(g.wBytes / 2, p.dtype, 97);
    const ws = interpretConv(buildConvKernel(spec), p, x, w, { splits }).ws!;
    const slice = p.N * g.Ho * g.Wo * p.K;
    for (let s = 0; s < splits; s++) {
      const { c0, c1 } = splitSlice(p.C, splitUnit(spec), splits, s);
      expect(c1 - c0).toBeLessThan(64 + 1); // each slice ends in a partial chunk
      const sub = channelSlice(p, x, w, c0, c1 - c0);
      expect(mismatches(ws.subarray(s * slice, (s + 1) * slice), naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * (c1 - c0))).toEqual({ count: 0, first: null });
    }
  });

  it('split_c whole map with the ring (4x4, N 4, ck 64, C 320 in 5 chunks, 2 uneven slices): each fp32 slice is its channel range', () => {
    const spec = ring({ variant: 'split_c', stride_h: 1, stride_w: 1, whole_map: true, tile_h: 4, tile_w: 4, tile_n: 4, ck: 64 });
    const p = problem3x3({ N: 4, H: 4, W: 4, C: 320, K: 64 });
    expectSlicesAreChannelRanges(spec, p, [101, 103], (s) => splitSlice(p.C, splitUnit(spec), 2, s));
  });

  it('split_c with the ring: each fp32 slice is its channel range', () => {
    const spec = ring({ variant: 'split_c', ck: 32 });
    const p = s2({ H: 12, W: 12, C: 128 });
    expectSlicesAreChannelRanges(spec, p, [79, 83], (s) => ({ c0: s * 64, c1: s * 64 + 64 }));
  });
});

describe('weight ring candidates', () => {
  const ringsOf = (p: Problem, variant: 'dense' | 'split_c') => problemCandidates(p, 'sm_90', { variant }).valid.filter((s) => s.weight_ring);
  const allTapLds = ({ weight_ring: _, ...allTaps }: Spec) => specGeometry(allTaps).ldsBytes;

  it('stride 1: only where the weights outweigh the input; m-block tiles whose all-tap stages exceed the LDS (tile_k 128 and 256 at ck 64), crowded whole-map tiles', () => {
    const tiny = problem3x3({ N: 4, H: 8, W: 8, C: 1280, K: 1280 }); // 29.5 MB of weights, 0.65 MB of input
    for (const variant of ['dense', 'split_c'] as const) {
      const rings = ringsOf(tiny, variant);
      expect(rings.length).toBeGreaterThan(0);
      for (const s of rings.filter((r) => !r.whole_map)) expect(allTapLds(s)).toBeGreaterThan(TARGETS.sm_90.ldsBytes);
      const wide = new Set(rings.filter((s) => s.ck === 64 && s.tile_n === 1 && s.tile_h * s.tile_w === 64).map((s) => s.tile_k));
      expect(wide).toEqual(new Set([128, 256]));
    }
    // Whole-map tiles: a copy of each whose all-tap stages are crowded (4x4 at N 4, C 2048: ck 64's two stages of 93 KiB).
    const fourByFour = problemCandidates(problem3x3({ N: 4, H: 4, W: 4, C: 2048, K: 2048 }), 'sm_90', { variant: 'split_c' }).valid;
    const wholeRings = fourByFour.filter((s) => s.whole_map && s.weight_ring);
    expect(wholeRings.length).toBeGreaterThan(0);
    for (const s of wholeRings) {
      const { weight_ring: _, ...allTaps } = s;
      expect(wgmmaLds(allTaps).stages < 3 || allTapLds(s) > TARGETS.sm_90.ldsBytes).toBe(true);
    }
    expect(wholeRings.some((s) => s.ck === 64 && s.tile_k === 64 && s.tile_n === 4)).toBe(true);
    // N 32 14x14 C 256: 3.2 MB of input against 1.2 MB of weights; none at stride 1, the strided form still gets its copies.
    const deep = problem3x3({ N: 32, H: 14, W: 14, C: 256, K: 256 });
    expect(ringsOf(deep, 'dense')).toHaveLength(0);
    expect(ringsOf({ ...deep, strideH: 2, strideW: 2 }, 'dense').length).toBeGreaterThan(0);
  });
});
