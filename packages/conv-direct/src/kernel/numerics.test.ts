/**
 * Interpreter numerics: the exact IR of each lowering (gfx950, gfx942, sm_90) run on the CPU and
 * compared with a naive fp64 convolution, on small problems that cover 3x3 s1/s2, 1x1, 5x5,
 * partial tiles in H, W and K, several channel chunks, uneven staging passes, both dtypes, every
 * staging schedule and fragment path (sm_90a warpgroup MMA included), both epilogues, and the
 * chiplet remap.
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
  /** The epilogue the builder picks (default: through LDS). */
  readonly epilogue?: 'lds-staged' | 'direct';
}

const p3 = (o: Partial<Problem>) => problem3x3({ N: 1, H: 8, W: 16, C: 32, K: 64, ...o });
const s2 = { stride_h: 2, stride_w: 2 } as const;
const ps2 = { strideH: 2, strideW: 2 } as const;
const one = { R: 1, S: 1, pad_h: 0, pad_w: 0 } as const;
const pOne = { R: 1, S: 1, padH: 0, padW: 0 } as const;
const five = { R: 5, S: 5, pad_h: 2, pad_w: 2 } as const;
const pFive = { R: 5, S: 5, padH: 2, padW: 2 } as const;

const cases: Case[] = [
  // gfx950: MFMA 32x32x16 / 16x16x32, buffer loads with the sentinel, register prefetch.
  { name: 'gfx950 3x3 s1 bf16, partial H/W/K tiles, 2 chunks', spec: gfx950Spec({ ck: 16, waves_n: 4, waves_m: 1 }), problem: p3({ H: 10, W: 20, K: 96, C: 32 }), epilogue: 'lds-staged' },
  { name: 'gfx950 3x3 s2 fp16, 2 images', spec: gfx950Spec({ ...s2, dtype: 'fp16' }), problem: p3({ ...ps2, N: 2, H: 13, W: 30, dtype: 'fp16' }) },
  { name: 'gfx950 1x1 p0 bf16 16x16x32', spec: gfx950Spec({ ...one, atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1 }), problem: p3({ ...pOne, W: 24 }) },
  { name: 'gfx950 5x5 p2 fp16, double buffer, no swizzle', spec: gfx950Spec({ ...five, dtype: 'fp16', double_buffer: true, chiplet_swizzle: false, swizzle_wgm: 1, ck: 16 }), problem: p3({ ...pFive, dtype: 'fp16', C: 48 }) },
  { name: 'gfx950 chiplet remap over 32 workgroups', spec: gfx950Spec({ tile_h: 2, waves_n: 2, tile_k: 32, waves_m: 1, num_xcds: 4, chiplet_chunk: 2, swizzle_wgm: 2 }), problem: p3({ N: 2, H: 4, W: 64, K: 256, C: 32 }) },
  { name: 'gfx950 1x1 tile_k 128, tile larger than LDS (staged in bands)', spec: gfx950Spec({ ...one, tile_k: 128, waves_m: 2, waves_n: 2 }), problem: p3({ ...pOne, K: 192, W: 40 }), epilogue: 'lds-staged' },
  // gfx942: the older atoms (bf16 through the .1k <4 x i16> forms), 8-byte weight fragments.
  { name: 'gfx942 32x32x8 bf16', spec: gfx950Spec({ target: 'gfx942', atom: '32x32x8', ck: 16 }), problem: p3({ H: 9, W: 32, C: 32 }), epilogue: 'lds-staged' },
  { name: 'gfx942 16x16x16 fp16 uneven passes', spec: gfx950Spec({ target: 'gfx942', atom: '16x16x16', dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2 }), problem: p3({ W: 20, dtype: 'fp16' }) },
  // sm_90: mma.sync m16n8k16, ldmatrix, cp.async double buffering or register prefetch.
  { name: 'sm_90 3x3 s1 bf16 double buffer, partial H/W/K, 2 chunks', spec: sm90Spec({ tile_h: 4, tile_w: 16, tile_k: 64, ck: 16, waves_m: 2, waves_n: 2, double_buffer: true }), problem: p3({ H: 6, W: 20, K: 96 }) },
  { name: 'sm_90 3x3 s2 fp16 single buffer', spec: sm90Spec({ ...s2, dtype: 'fp16', tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 2 }), problem: p3({ ...ps2, N: 2, H: 13, W: 30, dtype: 'fp16' }) },
  // cp.async staging into the stride-2 layout (even halo columns, then odd ones), 2 chunks, partial W.
  { name: 'sm_90 3x3 s2 bf16 double buffer, 2 chunks', spec: sm90Spec({ ...s2, double_buffer: true, tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 2 }), problem: p3({ ...ps2, N: 1, H: 11, W: 35, C: 64 }) },
  { name: 'sm_90 1x1 p0 bf16 ck64 double buffer', spec: sm90Spec({ ...one, tile_w: 32, tile_k: 64, ck: 64, double_buffer: true }), problem: p3({ ...pOne, C: 128, W: 24 }) },
  { name: 'sm_90 tile_w 8 (one column block: ldmatrix.x2), 7x7 map', spec: sm90Spec({ tile_h: 8, tile_w: 8, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), problem: p3({ H: 7, W: 7, C: 32, K: 32 }) },
  { name: 'gfx950 fitted tile_h 14 (7 rows per wave), 16x16x32', spec: gfx950Spec({ atom: '16x16x32', tile_h: 14, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }), problem: p3({ H: 14, W: 18, C: 64, K: 32 }) },
  { name: 'sm_90 fitted tile_h 14 (7 rows per wave), 14x14 map over two row tiles', spec: sm90Spec({ tile_h: 14, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), problem: p3({ H: 20, W: 14, C: 32, K: 32 }) },
  { name: 'sm_90 1x1 single buffer, direct-store epilogue', spec: sm90Spec({ ...one, tile_k: 128, ck: 16, waves_m: 2, waves_n: 2 }), problem: p3({ ...pOne, K: 128, W: 40 }), epilogue: 'direct' },
  { name: 'sm_90 5x5 p2 fp16 double buffer', spec: sm90Spec({ ...five, dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), problem: p3({ ...pFive, dtype: 'fp16', C: 48 }) },
  // sm_90a wgmma: operands through shared-memory descriptors (core-matrix layouts), the staged store.
  { name: 'wgmma 3x3 s1 bf16 w1x2 (m-blocks over warpgroups), partial H/W/K, 2 chunks', spec: wgmmaSpec({ tile_h: 16, waves_n: 2 }), problem: p3({ H: 10, W: 12, C: 32, K: 40 }), epilogue: 'lds-staged' },
  { name: 'wgmma 3x3 s1 fp16 w2x2 (2 warpgroups each way, 2 m-blocks each), partial H/W, 3 chunks', spec: wgmmaSpec({ dtype: 'fp16', tile_h: 16, tile_w: 16, tile_k: 128, waves_m: 2, waves_n: 2 }), problem: p3({ dtype: 'fp16', H: 14, W: 18, C: 48, K: 128 }), epilogue: 'lds-staged' },
  { name: 'wgmma 3x3 s2 fp16 w2x2 (stride-2 planes), 2 images, partial W', spec: wgmmaSpec({ ...s2, dtype: 'fp16', tile_w: 16, waves_m: 2, waves_n: 2 }), problem: p3({ ...ps2, N: 2, H: 13, W: 30, dtype: 'fp16' }), epilogue: 'lds-staged' },
  { name: 'wgmma 3x3 s2 bf16 t16x8 ck32, odd map, one chunk', spec: wgmmaSpec({ ...s2, tile_h: 16, ck: 32, waves_n: 2 }), problem: p3({ ...ps2, H: 19, W: 15, C: 32, K: 64 }), epilogue: 'lds-staged' },
  { name: 'wgmma 1x1 p0 bf16 ck32 t8x16x32', spec: wgmmaSpec({ ...one, tile_w: 16, tile_k: 32, ck: 32, waves_n: 2 }), problem: p3({ ...pOne, C: 64, W: 20, K: 32 }), epilogue: 'lds-staged' },
  { name: 'wgmma 1x1 s2 fp16 (odd halo width), one chunk', spec: wgmmaSpec({ ...one, ...s2, dtype: 'fp16', tile_w: 16, waves_n: 2 }), problem: p3({ ...pOne, ...ps2, dtype: 'fp16', H: 9, W: 33, C: 16 }), epilogue: 'lds-staged' },
  { name: 'wgmma 5x5 p2 fp16 N 128, 7x7 map, 4 chunks', spec: wgmmaSpec({ ...five, dtype: 'fp16', tile_k: 128 }), problem: p3({ ...pFive, dtype: 'fp16', H: 7, W: 7, C: 64, K: 128 }), epilogue: 'lds-staged' },
  // ck 64: 128-byte rows, 128B-swizzled, stages on 1 KiB boundaries of a runtime-aligned window.
  { name: 'wgmma ck64 swizzled 3x3 s1 bf16 t16x16x64 w1x2, 2 chunks, partial H/W/K', spec: wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 16, waves_n: 2 }), problem: p3({ H: 14, W: 18, C: 128, K: 40 }), epilogue: 'lds-staged' },
  { name: 'wgmma ck64 swizzled 3x3 s2 fp16 t8x8x64 w2x1 (stride-2 columns, N 32), 3 chunks', spec: wgmmaSpec({ ...s2, ck: 64, dtype: 'fp16', tile_k: 64, waves_m: 2 }), problem: p3({ ...ps2, H: 15, W: 29, C: 192, K: 64, dtype: 'fp16' }), epilogue: 'lds-staged' },
  { name: 'wgmma bf16 N 256 (128 accumulators per thread), partial K tile', spec: wgmmaSpec({ tile_k: 256 }), problem: p3({ H: 8, W: 8, C: 32, K: 200 }), epilogue: 'lds-staged' },
];

describe('dense kernel numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    const x = randomBits(problemGeometry(c.problem).xBytes / 2, c.problem.dtype, 11);
    const w = randomBits(problemGeometry(c.problem).wBytes / 2, c.problem.dtype, 23);
    const kernel = buildConvKernel(c.spec);
    expect(kernel.epilogue).toBe(c.epilogue ?? 'lds-staged');
    const run = interpretConv(kernel, c.problem, x, w);
    const y = Array.from(run.y, fromBits(c.problem.dtype));
    const ref = naiveConv(c.problem, x, w);
    const bad = mismatches(y, ref, c.problem.dtype, c.problem.R * c.problem.S * c.problem.C);
    expect(bad).toEqual({ count: 0, first: null });
  });

  it('gives the same bits on a second run', () => {
    const c = cases[5]!;
    const x = randomBits(problemGeometry(c.problem).xBytes / 2, c.problem.dtype, 5);
    const w = randomBits(problemGeometry(c.problem).wBytes / 2, c.problem.dtype, 6);
    const kernel = buildConvKernel(c.spec);
    expect(interpretConv(kernel, c.problem, x, w).y).toEqual(interpretConv(buildConvKernel(c.spec), c.problem, x, w).y);
  });

  it('the oracle tolerance catches a lost channel chunk', () => {
    const c = cases[0]!;
    const x = randomBits(problemGeometry(c.problem).xBytes / 2, c.problem.dtype, 11);
    const w = randomBits(problemGeometry(c.problem).wBytes / 2, c.problem.dtype, 23);
    const y = Array.from(interpretConv(buildConvKernel(c.spec), c.problem, x, w).y, fromBits(c.problem.dtype));
    // Zero the weights of channels 16..31 (the second chunk): the kernel output must now disagree.
    const w2 = w.slice();
    for (let i = 0; i < w2.length; i++) if (i % c.problem.C >= 16) w2[i] = 0;
    expect(mismatches(y, naiveConv(c.problem, x, w2), c.problem.dtype, 9 * c.problem.C).count).toBeGreaterThan(100);
  });
});
