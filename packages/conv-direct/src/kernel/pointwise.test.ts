/**
 * Pointwise (1x1 as a flat-pixel GEMM) numerics in the interpreter: the exact IR of the MFMA
 * (gfx950, gfx942), mma.sync and wgmma (sm_90) lowerings against the naive fp64 conv, at strides
 * 1 and 2, with input- and output-channel tails (C 40 -> K 24, C 72 -> K 120), pixel counts that
 * are not a multiple of the tile (the batch's last tile partial, tiles spanning images), and a
 * fused epilogue. The tolerance catches one dropped channel chunk (shown with the mutation).
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, pointwiseSpec, problem1x1, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel, type BuildMutation } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
}

const s2 = { stride_h: 2, stride_w: 2 } as const;
const ps2 = { strideH: 2, strideW: 2 } as const;
const tails = { c_tail: 8, k_tail: true } as const;
const mfma16 = gfx950Spec({ atom: '16x16x32', tile_h: 8, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 });

const cases: Case[] = [
  // gfx950 MFMA: 2 images of 9x11 = 198 pixels over 128-pixel tiles (the second tile spans both images' rows and ends partial).
  { name: 'gfx950 16x16x32 s1, 198 pixels over 128-pixel tiles, 2 chunks', spec: pointwiseSpec(mfma16), problem: problem1x1({ N: 2, H: 9, W: 11, C: 64, K: 64 }) },
  { name: 'gfx950 16x16x32 s1 C 40 -> K 24 (c_tail, k_tail)', spec: pointwiseSpec(mfma16, tails), problem: problem1x1({ N: 1, H: 7, W: 9, C: 40, K: 24 }) },
  { name: 'gfx950 32x32x16 s2 C 72 -> K 120 (c_tail, partial K tile), 2 images', spec: pointwiseSpec(gfx950Spec({ ck: 32 }), { ...s2, c_tail: 8 }), problem: problem1x1({ ...ps2, N: 2, H: 13, W: 15, C: 72, K: 120 }) },
  { name: 'gfx942 32x32x8 s2 fp16, odd map', spec: pointwiseSpec(gfx950Spec({ target: 'gfx942', atom: '32x32x8', ck: 16, dtype: 'fp16' }), s2), problem: problem1x1({ ...ps2, N: 1, H: 11, W: 9, C: 32, K: 64, dtype: 'fp16' }) },
  // sm_90 mma.sync: cp.async double buffering (tails of whole 8-channel runs) and register prefetch.
  { name: 'sm_90 mma.sync s1 cp.async, 3 images of 5x5 (75 pixels)', spec: pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true })), problem: problem1x1({ N: 3, H: 5, W: 5, C: 48, K: 32 }) },
  { name: 'sm_90 mma.sync s1 C 40 -> K 24 cp.async (c_tail 8, k_tail)', spec: pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), tails), problem: problem1x1({ N: 2, H: 6, W: 7, C: 40, K: 24 }) },
  { name: 'sm_90 mma.sync s2 C 72 -> K 120 register prefetch', spec: pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 64, ck: 32, waves_m: 2, waves_n: 2 }), { ...s2, c_tail: 8 }), problem: problem1x1({ ...ps2, N: 1, H: 15, W: 17, C: 72, K: 120 }) },
  // sm_90a wgmma: 64-pixel m-blocks of consecutive flat pixels; ck 64 swizzled rows and the core-matrix planes.
  { name: 'wgmma ck64 swizzled s1, 2 images of 7x7 (98 pixels) over 128-pixel tiles', spec: pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 16, waves_n: 2 })), problem: problem1x1({ N: 2, H: 7, W: 7, C: 128, K: 64 }) },
  { name: 'wgmma s2 C 72 -> K 120 (c_tail 8, partial K tile) w2x1', spec: pointwiseSpec(wgmmaSpec({ ck: 32, tile_k: 128, waves_m: 2 }), { ...s2, c_tail: 8 }), problem: problem1x1({ ...ps2, N: 1, H: 13, W: 19, C: 72, K: 120 }) },
  { name: 'wgmma s1 C 40 -> K 24 (c_tail 8, k_tail) fp16', spec: pointwiseSpec(wgmmaSpec({ dtype: 'fp16', tile_h: 16, waves_n: 2 }), tails), problem: problem1x1({ N: 1, H: 9, W: 10, C: 40, K: 24, dtype: 'fp16' }) },
];

function run(c: Case, mutation?: BuildMutation) {
  expect(validate(c.spec, c.problem)).toEqual({ ok: true });
  const g = problemGeometry(c.problem);
  const x = randomBits(g.xBytes / 2, c.problem.dtype, 11);
  const w = randomBits(g.wBytes / 2, c.problem.dtype, 23);
  const kernel = buildConvKernel(c.spec, mutation ? { mutation } : {});
  const y = Array.from(interpretConv(kernel, c.problem, x, w).y, fromBits(c.problem.dtype));
  return mismatches(y, naiveConv(c.problem, x, w), c.problem.dtype, c.problem.C);
}

describe('pointwise kernel numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(run(c)).toEqual({ count: 0, first: null });
  });

  it('fails the same check when the partial channel chunk is dropped', () => {
    const c = cases[1]!;
    expect(run(c, { dropChannelTail: true }).count).toBeGreaterThan(0);
  });
});
