/**
 * Whole-map tiles (sm_90a wgmma, pixels on the MMA's N side, flat positions with shared padding):
 * the exact IR runs in the interpreter against the fp64 oracle. Maps that are not powers of two
 * (7×7, 3×3, 5×3), N not a multiple of tile_n, pixel runs over 256 (two wgmmas per tap), two
 * 64-channel m-blocks per warpgroup and two warpgroups, both X layouts (ck 32 planes, ck 64
 * swizzled rows), dense and split_c, a 5×5 filter, dilation, a K tail.
 */
import { describe, expect, it } from 'vitest';
import { launchGrid } from '../grid.js';
import { problemGeometry, type Problem } from '../problem.js';
import { kernelName, specFromJson, canonicalSpecJson, type Spec } from '../spec.js';
import { specFromKernelName } from '../ranker/spec-from-name.js';
import { problem3x3, wgmmaSpec } from '../test-fixtures.js';
import { splitSlice, splitUnit } from '../split-slices.js';
import { validate } from '../validate.js';
import { estimateCost } from '../cost-model.js';
import { wholeMapImages, wholeMapLayout } from '../whole-map.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { channelSlice, fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

const wm = (over: Partial<Spec>): Spec => wgmmaSpec({ whole_map: true, ...over });
const p3 = (o: Partial<Problem>) => problem3x3({ C: 64, K: 64, ...o });

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
}

const dense: Case[] = [
  { name: '4x4 map, tile_n 4, N 6 (last tile half empty), ck 32 planes', spec: wm({ tile_h: 4, tile_w: 4, tile_n: 4, ck: 32 }), problem: p3({ N: 6, H: 4, W: 4 }) },
  { name: '7x7 map, tile_n 2, N 3, ck 64 swizzled rows, two chunks', spec: wm({ tile_h: 7, tile_w: 7, tile_n: 2, ck: 64 }), problem: p3({ N: 3, H: 7, W: 7, C: 128 }) },
  { name: '3x3 map, tile_n 8, N 5, fp16, 2 m-blocks per warpgroup', spec: wm({ dtype: 'fp16', tile_h: 3, tile_w: 3, tile_n: 8, tile_k: 128, ck: 16 }), problem: p3({ N: 5, H: 3, W: 3, K: 128, dtype: 'fp16' }) },
  { name: '8x8 map, tile_n 4 (320 pixels: runs of 256 and 64), two warpgroups, K tail 72', spec: wm({ tile_h: 8, tile_w: 8, tile_n: 4, tile_k: 128, waves_m: 2, ck: 16, k_tail: true }), problem: p3({ N: 4, H: 8, W: 8, C: 32, K: 72 }) },
  { name: '5x5 filter, 5x3 map in a 6x4 tile, tile_n 2, N 3', spec: wm({ R: 5, S: 5, pad_h: 2, pad_w: 2, tile_h: 6, tile_w: 4, tile_n: 2, ck: 16 }), problem: p3({ N: 3, H: 5, W: 3, R: 5, S: 5, padH: 2, padW: 2, C: 32 }) },
  { name: 'dilation 2, pad 2, 6x6 map, tile_n 3, N 3', spec: wm({ dilation_h: 2, dilation_w: 2, pad_h: 2, pad_w: 2, tile_h: 6, tile_w: 6, tile_n: 3, ck: 32 }), problem: p3({ N: 3, H: 6, W: 6, dilationH: 2, dilationW: 2, padH: 2, padW: 2 }) },
  { name: 'valid padding (pad 0), 4x4 output of a 6x6 input, tile_n 2, N 3', spec: wm({ pad_h: 0, pad_w: 0, tile_h: 4, tile_w: 4, tile_n: 2, ck: 32 }), problem: p3({ N: 3, H: 6, W: 6, padH: 0, padW: 0 }) },
];

describe('whole-map tile layout', () => {
  it('shares one padding column between rows and one padding row between images (3x3 same, 4x4 map)', () => {
    const f = wholeMapLayout(wm({ tile_h: 4, tile_w: 4, tile_n: 8 }));
    expect([f.pitchW, f.pitchH, f.lead]).toEqual([5, 5, 6]);
    // 7 images of 25 positions, then 3 rows of 5 and the last row's 4 pixels.
    expect(f.outputs).toBe(7 * 25 + 3 * 5 + 4);
    expect([f.pixels, f.runs, f.staged]).toEqual([200, [200], 200 + 2 * 5 + 2 + 4]);
    // The cost model counts the flat pixel columns as computed work: 128 pixels of 200.
    expect(estimateCost(wm({ tile_h: 4, tile_w: 4, tile_n: 8 }), p3({ N: 8, H: 4, W: 4 })).facts.tileUtilization).toBeCloseTo(128 / 200, 12);
  });

  it('keeps images in as few tiles as the pixel budget allows, balanced', () => {
    const same = { R: 3, S: 3, pad_h: 1, pad_w: 1, dilation_h: 1, dilation_w: 1 };
    expect(wholeMapImages(4, 4, 8, same, 256)).toBe(8);
    // 8x8: 81 positions per image, so 3 images fit 256 pixels; N 4 takes two tiles of 2.
    expect(wholeMapImages(8, 8, 4, same, 256)).toBe(2);
    expect(wholeMapImages(16, 16, 1, same, 256)).toBeUndefined();
  });

  it('names whole-map specs with _wm and reads the name back', () => {
    const spec = wm({ tile_h: 4, tile_w: 4, tile_n: 8, variant: 'split_c', ck: 64 });
    expect(kernelName(spec)).toMatch(/_n8_wm$/);
    expect(specFromKernelName(kernelName(spec))).toEqual({ ok: true, spec });
    expect(specFromJson(canonicalSpecJson(spec))).toEqual({ ok: true, spec });
  });

  it('refuses what the flat positions cannot serve, with the reason', () => {
    const reason = (s: Spec, p?: Problem) => {
      const v = validate(s, p);
      return v.ok ? 'ok' : v.reason;
    };
    expect(reason(wm({ stride_h: 2, stride_w: 2, tile_h: 4, tile_w: 4 }))).toMatch(/need stride 1/);
    expect(reason(wm({ tile_h: 4, tile_w: 4, waves_n: 2 }))).toMatch(/use waves_n 1/);
    expect(reason(wm({ tile_h: 4, tile_w: 4, tile_k: 96, waves_m: 1 }))).toMatch(/64-channel m-blocks/);
    expect(reason(wgmmaSpec({ atom: 'm16n8k16', whole_map: true }))).toMatch(/warpgroup MMA/);
    expect(reason(wm({ tile_h: 4, tile_w: 4 }), p3({ H: 5, W: 4 }))).toMatch(/output map inside the tile/);
    // 16x16 map with 4 images: 4 runs of 256+ pixels → too many accumulators.
    expect(reason(wm({ tile_h: 16, tile_w: 16, tile_n: 4 }))).toMatch(/accumulators/);
  });
});

describe('whole-map dense numerics (interpreter vs naive fp64 conv)', () => {
  it.each(dense.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    const geo = problemGeometry(c.problem);
    const x = randomBits(geo.xBytes / 2, c.problem.dtype, 51);
    const w = randomBits(geo.wBytes / 2, c.problem.dtype, 53);
    const run = interpretConv(buildConvKernel(c.spec), c.problem, x, w);
    expect(run.plan.launches.map((l) => l.grid[0])).toEqual([launchGrid(c.spec, { ...c.problem, N: 1 }).workgroups * Math.ceil(c.problem.N / c.spec.tile_n)]);
    const y = Array.from(run.y, fromBits(c.problem.dtype));
    const bad = mismatches(y, naiveConv(c.problem, x, w), c.problem.dtype, c.problem.R * c.problem.S * c.problem.C);
    expect(bad).toEqual({ count: 0, first: null });
  });

  it('the oracle catches a dropped tap (a kernel without the last filter column fails)', () => {
    const c = dense[0]!;
    const geo = problemGeometry(c.problem);
    const x = randomBits(geo.xBytes / 2, c.problem.dtype, 51);
    const w = randomBits(geo.wBytes / 2, c.problem.dtype, 53);
    const y = Array.from(interpretConv(buildConvKernel(c.spec), c.problem, x, w).y, fromBits(c.problem.dtype));
    // The same weights with tap (2, 2) zeroed: the kernel's output must not match that conv.
    const dropped = w.slice();
    const RS = 9;
    for (let k = 0; k < c.problem.K; k++) dropped.fill(0, (k * RS + 8) * c.problem.C, (k * RS + 9) * c.problem.C);
    expect(mismatches(y, naiveConv(c.problem, x, dropped), c.problem.dtype, 9 * c.problem.C).count).toBeGreaterThan(100);
  });
});

const split: (Case & { readonly splits: number })[] = [
  { name: '4x4 map, tile_n 8, N 8, ck 64 swizzled, 4 chunks in 3 slices', spec: wm({ variant: 'split_c', tile_h: 4, tile_w: 4, tile_n: 8, ck: 64 }), problem: p3({ N: 8, H: 4, W: 4, C: 256 }), splits: 3 },
  { name: '7x7 map, tile_n 1, N 2, two warpgroups', spec: wm({ variant: 'split_c', tile_h: 7, tile_w: 7, tile_k: 128, waves_m: 2, ck: 32 }), problem: p3({ N: 2, H: 7, W: 7, K: 128 }), splits: 2 },
  { name: '3x3 map, tile_n 4, N 7, 4 chunks in 3 slices', spec: wm({ variant: 'split_c', tile_h: 3, tile_w: 3, tile_n: 4, ck: 16 }), problem: p3({ N: 7, H: 3, W: 3 }), splits: 3 },
  { name: '4x4 map, tile_n 4, N 4, channel tail C 40 (5 runs of 8) in 3 slices', spec: wm({ variant: 'split_c', tile_h: 4, tile_w: 4, tile_n: 4, ck: 16, c_tail: 8 }), problem: p3({ N: 4, H: 4, W: 4, C: 40 }), splits: 3 },
];

describe('whole-map split_c numerics (each fp32 slice is its channel range, uneven slices included)', () => {
  it.each(split.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const p = c.problem;
    expect(validate(c.spec, p, { splits: c.splits })).toEqual({ ok: true });
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 61);
    const w = randomBits(g.wBytes / 2, p.dtype, 67);
    const run = interpretConv(buildConvKernel(c.spec), p, x, w, { splits: c.splits });
    const ws = run.ws!;
    const slice = p.N * g.Ho * g.Wo * p.K;
    for (let s = 0; s < c.splits; s++) {
      const { c0, c1 } = splitSlice(p.C, splitUnit(c.spec), c.splits, s);
      const sub = channelSlice(p, x, w, c0, c1 - c0);
      expect(mismatches(ws.subarray(s * slice, (s + 1) * slice), naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * (c1 - c0))).toEqual({ count: 0, first: null });
    }
  });
});
