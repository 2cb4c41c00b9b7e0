/**
 * The streaming pointwise schedule (`stream`) in the interpreter against the naive fp64 conv, on
 * gfx950 and gfx942 (MFMA, register prefetch through one X stage) and sm_90 (mma.sync, cp.async into two):
 * few workgroups so each computes several pixel tiles (the last one partial), weights resident
 * over several chunks, stride 2, channel tails (C 40 -> K 24: c_tail and k_tail's direct stores),
 * and a fused epilogue through the staged store's own LDS region.
 */
import type { Epilogue } from '@rocke/ir';
import type { EpilogueScalars } from '../abi.js';
import { describe, expect, it } from 'vitest';
import { launchGrid } from '../grid.js';
import { pointwisePixelTiles, streamTilesPerWorkgroup } from '../pointwise.js';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, pointwiseSpec, problem1x1, sm90Spec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits, toBits, withEpilogue } from './test-oracle.js';

const SCALARS: EpilogueScalars = { alpha: 0.5, beta: 0.75, slope: 0.1, lo: -1.5, hi: 2.5 };
const full: Epilogue = { act: 'silu', bias: 'fp32', residual: true };
const s2 = { stride_h: 2, stride_w: 2 } as const;
const ps2 = { strideH: 2, strideW: 2 } as const;
const tails = { c_tail: 8, k_tail: true } as const;
// 32-pixel tiles (2 rows of 16 pixels), so small problems give each workgroup several tiles.
const mfma = gfx950Spec({ atom: '16x16x32', tile_h: 2, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 });
const mmaSync = sm90Spec({ tile_h: 2, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true });
const stream = (base: Spec, workgroups: number, chunks: number, over: Partial<Spec> = {}) => pointwiseSpec(base, { ...over, stream: { workgroups, chunks } });

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
  /** Pixel tiles the busiest workgroup computes. */
  readonly tiles: number;
}

const cases: Case[] = [
  // 198 pixels = 7 tiles (the last of 6 pixels) over 2 workgroups per channel tile; K 64 = 2 channel tiles.
  { name: 'gfx950 s1, 2 chunks resident, 4 workgroups over 2 channel tiles', spec: stream(mfma, 4, 2), problem: problem1x1({ N: 2, H: 9, W: 11, C: 64, K: 64 }), tiles: 4 },
  { name: 'gfx950 s2 C 40 -> K 24 (c_tail, k_tail), one workgroup', spec: stream(mfma, 1, 2, { ...s2, ...tails }), problem: problem1x1({ ...ps2, N: 1, H: 13, W: 15, C: 40, K: 24 }), tiles: 2 },
  { name: 'gfx950 s2 fused epilogue, one workgroup', spec: stream(mfma, 1, 1, { ...s2, epilogue: full }), problem: problem1x1({ ...ps2, N: 2, H: 11, W: 13, C: 32, K: 32 }), tiles: 3 },
  { name: 'gfx942 32x32x8 fp16 s1, 3 chunks resident, 2 workgroups', spec: stream(gfx950Spec({ target: 'gfx942', atom: '32x32x8', dtype: 'fp16', tile_h: 2, tile_w: 32, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2 }), 2, 3), problem: problem1x1({ N: 2, H: 7, W: 10, C: 48, K: 32, dtype: 'fp16' }), tiles: 2 },
  // 75 pixels = 3 tiles, the last of 11 pixels, in one workgroup; C 48 = 3 resident chunks of 16.
  { name: 'sm_90 cp.async s1, 3 chunks resident, one workgroup', spec: stream(mmaSync, 1, 3), problem: problem1x1({ N: 3, H: 5, W: 5, C: 48, K: 32 }), tiles: 3 },
  { name: 'sm_90 cp.async s2 C 40 -> K 24 (c_tail 8, k_tail), 2 workgroups', spec: stream(mmaSync, 2, 3, { ...s2, ...tails }), problem: problem1x1({ ...ps2, N: 2, H: 13, W: 11, C: 40, K: 24 }), tiles: 2 },
  { name: 'sm_90 cp.async s1 fused epilogue, 2 workgroups over 2 channel tiles', spec: stream(mmaSync, 4, 2, { epilogue: full }), problem: problem1x1({ N: 2, H: 7, W: 9, C: 32, K: 64 }), tiles: 2 },
];

function run(c: Case, launchSpec: Spec = c.spec) {
  expect(validate(c.spec, c.problem)).toEqual({ ok: true });
  const p = c.problem;
  const g = problemGeometry(p);
  const x = randomBits(g.xBytes / 2, p.dtype, 11);
  const w = randomBits(g.wBytes / 2, p.dtype, 23);
  const e = c.spec.epilogue;
  const bias = e ? Float32Array.from(randomBits(p.K, p.dtype, 5), (v) => 2 * fromBits(p.dtype)(v)) : undefined;
  const residual = e ? randomBits(g.yBytes / 2, p.dtype, 7).map((v) => toBits(p.dtype)(fromBits(p.dtype)(v) * 2)) : undefined;
  const kernel = { ...buildConvKernel(c.spec), spec: launchSpec };
  const y = interpretConv(kernel, p, x, w, e ? { epilogue: { scalars: SCALARS, bias, residual } } : {}).y;
  const conv = naiveConv(p, x, w);
  if (!e) return mismatches(Array.from(y, fromBits(p.dtype)), conv, p.dtype, p.C);
  const { expected, scaleRms } = withEpilogue(conv, p.K, p.dtype, { act: e.act, scalars: SCALARS, bias, residual });
  return mismatches(Array.from(y, fromBits(p.dtype)), expected, p.dtype, p.C, scaleRms);
}

describe('streaming pointwise numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(streamTilesPerWorkgroup(c.spec, c.problem)).toBe(c.tiles);
    expect(launchGrid(c.spec, c.problem).workgroups).toBeLessThan(pointwisePixelTiles(c.spec, c.problem) * launchGrid(c.spec, c.problem).kTiles);
    expect(run(c)).toEqual({ count: 0, first: null });
  });

  it('fails the check when the launch has fewer workgroups than the kernel strides by (tiles go unwritten)', () => {
    const c = cases[0]!;
    const fewer = { ...c.spec, stream: { ...c.spec.stream!, workgroups: 2 } };
    expect(run(c, fewer).count).toBeGreaterThan(0);
  });
});
