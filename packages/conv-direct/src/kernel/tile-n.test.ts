/**
 * tile_n: one workgroup tile over the same spatial window of tile_n images (halo tiles stacked
 * along LDS rows, the waves splitting tile_n * tile_h virtual rows). The exact IR of each lowering
 * runs in the interpreter against the fp64 oracle, with N not a multiple of tile_n so the last
 * image tile is partial; both epilogues, both staging schedules on sm_90, waves inside one image
 * and waves over whole images, dense and split_c.
 */
import { describe, expect, it } from 'vitest';
import { launchGrid } from '../grid.js';
import { problemGeometry, type Problem } from '../problem.js';
import { specGeometry, type Spec } from '../spec.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { channelSlice, fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
  readonly epilogue: 'lds-staged' | 'direct';
  /** How a wave's rows sit: inside one image, or over whole images. */
  readonly waveImages: number;
}

const p3 = (o: Partial<Problem>) => problem3x3({ C: 32, K: 32, ...o });
const amd16 = { atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1 } as const;

const dense: Case[] = [
  { name: 'gfx950 bf16 tile_n 2, N 3, 6x6 map, one wave per image', spec: gfx950Spec({ ...amd16, waves_n: 2, tile_n: 2 }), problem: p3({ N: 3, H: 6, W: 6 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'gfx950 fp16 tile_n 4, N 5, 7x5 map, waves over two whole images', spec: gfx950Spec({ dtype: 'fp16', tile_n: 4 }), problem: p3({ N: 5, H: 7, W: 5, K: 64, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'gfx950 bf16 tile_n 2, N 3, two waves per image (bands), double buffer, 3 chunks', spec: gfx950Spec({ ...amd16, tile_h: 4, waves_n: 4, tile_n: 2, double_buffer: true }), problem: p3({ N: 3, H: 4, W: 10, C: 96 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'gfx950 fp16 s2 tile_n 2, N 5, partial map', spec: gfx950Spec({ ...amd16, stride_h: 2, stride_w: 2, waves_n: 2, tile_n: 2, dtype: 'fp16' }), problem: p3({ N: 5, H: 9, W: 13, strideH: 2, strideW: 2, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'gfx950 bf16 1x1 tile_k 128 tile_n 2, N 3, staged in bands', spec: gfx950Spec({ R: 1, S: 1, pad_h: 0, pad_w: 0, tile_k: 128, ck: 16, tile_n: 2 }), problem: p3({ N: 3, H: 5, W: 30, R: 1, S: 1, padH: 0, padW: 0, K: 128 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'sm_90 bf16 t8x8 tile_n 2, N 5, 7x7 map, cp.async', spec: sm90Spec({ tile_w: 8, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true, tile_n: 2 }), problem: p3({ N: 5, H: 7, W: 7 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'sm_90 fp16 tile_n 4, N 3, register prefetch, waves over two whole images', spec: sm90Spec({ dtype: 'fp16', tile_w: 16, tile_k: 64, ck: 16, tile_n: 4 }), problem: p3({ N: 3, H: 6, W: 12, K: 64, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90 bf16 tile_n 4, N 5, one wave per image (w1x4), 2 chunks', spec: sm90Spec({ tile_h: 4, tile_w: 8, tile_k: 32, ck: 16, waves_m: 1, waves_n: 4, double_buffer: true, tile_n: 4 }), problem: p3({ N: 5, H: 4, W: 8 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'sm_90 fp16 5x5 tile_n 2, N 3, bands of 2 rows', spec: sm90Spec({ R: 5, S: 5, pad_h: 2, pad_w: 2, dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 4, tile_h: 4, double_buffer: true, tile_n: 2 }), problem: p3({ N: 3, H: 3, W: 9, R: 5, S: 5, padH: 2, padW: 2, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 1 },
  // sm_90a wgmma: one 8x8 m-block per image of the tile, m-blocks over warpgroups.
  { name: 'sm_90a wgmma bf16 t8x8 tile_n 4 w1x2 (two images per warpgroup), N 5, 7x7 map', spec: wgmmaSpec({ tile_n: 4, waves_n: 2 }), problem: p3({ N: 5, H: 7, W: 7 }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90a wgmma fp16 t8x16 tile_n 2 w2x1, N 3, K 128 over two warpgroups', spec: wgmmaSpec({ dtype: 'fp16', tile_w: 16, tile_k: 128, waves_m: 2, tile_n: 2 }), problem: p3({ N: 3, H: 6, W: 13, K: 128, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90a wgmma ck64 swizzled bf16 t8x8 tile_n 2 w1x2, N 3', spec: wgmmaSpec({ ck: 64, tile_n: 2, waves_n: 2 }), problem: p3({ N: 3, H: 7, W: 8, C: 128 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'sm_90a wgmma bf16 s2 tile_n 2, N 3, stride-2 planes', spec: wgmmaSpec({ stride_h: 2, stride_w: 2, tile_n: 2 }), problem: p3({ N: 3, H: 15, W: 13, strideH: 2, strideW: 2 }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90 bf16 1x1 tile_k 128 tile_n 2, N 5, staged in bands', spec: sm90Spec({ R: 1, S: 1, pad_h: 0, pad_w: 0, tile_w: 16, tile_k: 128, ck: 16, tile_n: 2 }), problem: p3({ N: 5, H: 6, W: 14, R: 1, S: 1, padH: 0, padW: 0, K: 128 }), epilogue: 'lds-staged', waveImages: 1 },
];

describe('tile_n dense numerics (interpreter vs naive fp64 conv)', () => {
  it.each(dense.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    expect(specGeometry(c.spec).waveImages).toBe(c.waveImages);
    const geo = problemGeometry(c.problem);
    const x = randomBits(geo.xBytes / 2, c.problem.dtype, 31);
    const w = randomBits(geo.wBytes / 2, c.problem.dtype, 37);
    const kernel = buildConvKernel(c.spec);
    expect(kernel.epilogue).toBe(c.epilogue);
    const run = interpretConv(kernel, c.problem, x, w);
    // One workgroup per image tile: ceil(N / tile_n) of them per spatial and channel tile.
    const perImageTile = launchGrid(c.spec, { ...c.problem, N: 1 }).workgroups;
    expect(run.plan.launches.map((l) => l.grid[0])).toEqual([perImageTile * Math.ceil(c.problem.N / c.spec.tile_n)]);
    const y = Array.from(run.y, fromBits(c.problem.dtype));
    const bad = mismatches(y, naiveConv(c.problem, x, w), c.problem.dtype, c.problem.R * c.problem.S * c.problem.C);
    expect(bad).toEqual({ count: 0, first: null });
  });

  it('the oracle catches images swapped inside a tile (the check sees which image each output belongs to)', () => {
    const c = dense[0]!;
    const geo = problemGeometry(c.problem);
    const x = randomBits(geo.xBytes / 2, c.problem.dtype, 31);
    const w = randomBits(geo.wBytes / 2, c.problem.dtype, 37);
    const y = Array.from(interpretConv(buildConvKernel(c.spec), c.problem, x, w).y, fromBits(c.problem.dtype));
    const perImage = geo.xBytes / 2 / c.problem.N;
    const swapped = x.slice();
    swapped.set(x.subarray(perImage, 2 * perImage), 0);
    swapped.set(x.subarray(0, perImage), perImage);
    expect(mismatches(y, naiveConv(c.problem, swapped, w), c.problem.dtype, 9 * c.problem.C).count).toBeGreaterThan(100);
  });
});

const split: Case[] = [
  { name: 'gfx950 bf16 tile_n 2, N 3', spec: gfx950Spec({ ...amd16, variant: 'split_c', waves_n: 2, tile_n: 2 }), problem: p3({ N: 3, H: 6, W: 6, C: 64 }), epilogue: 'lds-staged', waveImages: 1 },
  { name: 'gfx950 fp16 tile_n 4, N 5', spec: gfx950Spec({ variant: 'split_c', dtype: 'fp16', ck: 16, tile_n: 4 }), problem: p3({ N: 5, H: 5, W: 7, C: 64, K: 64, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90 bf16 t8x8 tile_n 4, N 5, cp.async', spec: sm90Spec({ variant: 'split_c', tile_w: 8, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true, tile_n: 4 }), problem: p3({ N: 5, H: 7, W: 7, C: 64 }), epilogue: 'lds-staged', waveImages: 2 },
  { name: 'sm_90a wgmma bf16 t8x8 tile_n 4 w1x4 (one image per warpgroup), N 5', spec: wgmmaSpec({ variant: 'split_c', tile_n: 4, waves_n: 4 }), problem: p3({ N: 5, H: 8, W: 6, C: 64 }), epilogue: 'direct', waveImages: 1 },
  { name: 'sm_90 fp16 tile_n 2, N 3, register prefetch', spec: sm90Spec({ variant: 'split_c', dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, tile_n: 2 }), problem: p3({ N: 3, H: 6, W: 10, C: 64, dtype: 'fp16' }), epilogue: 'lds-staged', waveImages: 1 },
];

describe('tile_n split_c numerics (splits 2: each fp32 slice of ws[splits, N, Ho, Wo, K] is its channel range)', () => {
  it.each(split.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const p = c.problem;
    expect(validate(c.spec, p, { splits: 2 })).toEqual({ ok: true });
    expect(specGeometry(c.spec).waveImages).toBe(c.waveImages);
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 41);
    const w = randomBits(g.wBytes / 2, p.dtype, 43);
    const kernel = buildConvKernel(c.spec);
    expect(kernel.epilogue).toBe(c.epilogue);
    const run = interpretConv(kernel, p, x, w, { splits: 2 });
    const ws = run.ws!;
    const slice = p.N * g.Ho * g.Wo * p.K;
    expect(ws.length).toBe(2 * slice);
    const cs = p.C / 2;
    for (let s = 0; s < 2; s++) {
      const sub = channelSlice(p, x, w, s * cs, cs);
      expect(mismatches(ws.subarray(s * slice, (s + 1) * slice), naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * cs)).toEqual({ count: 0, first: null });
    }
    expect(run.y.every((v) => v === 0x7f7f)).toBe(true);
  });
});
