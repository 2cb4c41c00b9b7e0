/**
 * Interpreter numerics of the general shapes real networks have, on gfx950 and sm_90 (MFMA,
 * mma.sync and the warpgroup MMA) against the fp64 oracle: channel tails (C not a multiple of ck
 * or of 8, C = 3 stems), output-channel tails (K past the tile, K not a multiple of 8), strides
 * 2 to 4, dilation 2, 5x5 and 7x7 filters, depthwise-like grouped convs with merges that are not
 * powers of two, cpg 12. A kernel built without its last partial chunk must fail.
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel, type BuildMutation } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
  readonly splits?: number;
}

/** A small problem: one image, "same"-ish padding given by the caller. */
const prob = (o: Partial<Problem>) => problem3x3({ N: 1, H: 9, W: 12, ...o });
const filter = (f: number, stride: number, pad: number, dilation = 1) => ({
  spec: { R: f, S: f, stride_h: stride, stride_w: stride, pad_h: pad, pad_w: pad, dilation_h: dilation, dilation_w: dilation },
  problem: { R: f, S: f, strideH: stride, strideW: stride, padH: pad, padW: pad, dilationH: dilation, dilationW: dilation },
});
const stem = filter(7, 2, 3);
const one = filter(1, 1, 0);
const five = filter(5, 2, 2);
const s4 = filter(4, 4, 0);
const dil = filter(3, 1, 2, 2);
const dw7 = filter(7, 1, 3);
/** gfx950 32x32x16 tiles: 2 rows x 32 columns x 32 channels, one wave per row. */
const amd = (o: Partial<Spec>) => gfx950Spec({ tile_h: 2, tile_w: 32, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, ...o });
/** sm_90 m16n8k16 tiles: 2 rows x 16 columns x 32 channels. */
const nv = (o: Partial<Spec>) => sm90Spec({ tile_h: 2, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, ...o });
const grouped = (o: Partial<Spec>): Partial<Spec> => ({ variant: 'grouped', ...o });

const cases: Case[] = [
  // C = 3 stem, 7x7 stride 2: channel runs of one element, zero-padded to the chunk.
  { name: 'gfx950 C=3 7x7 s2 stem (c_tail 1)', spec: amd({ ...stem.spec, c_tail: 1 }), problem: prob({ ...stem.problem, H: 11, W: 13, C: 3, K: 16 }) },
  { name: 'sm_90 C=3 7x7 s2 stem (c_tail 1, register prefetch)', spec: nv({ ...stem.spec, c_tail: 1, double_buffer: true }), problem: prob({ ...stem.problem, H: 11, W: 13, C: 3, K: 16 }) },
  // C = 40 -> K = 24, 1x1: a half chunk at the end, a partial K tile.
  { name: 'gfx950 C=40 -> K=24 1x1 (c_tail 8)', spec: amd({ ...one.spec, c_tail: 8 }), problem: prob({ ...one.problem, C: 40, K: 24 }) },
  { name: 'sm_90 C=40 -> K=24 1x1 (c_tail 8, cp.async zero-fill)', spec: nv({ ...one.spec, c_tail: 8, double_buffer: true }), problem: prob({ ...one.problem, C: 40, K: 24 }) },
  { name: 'sm_90a wgmma C=40 -> K=24 3x3 (c_tail 8)', spec: wgmmaSpec({ c_tail: 8 }), problem: prob({ H: 8, W: 10, C: 40, K: 24 }) },
  // K = 120: two channel tiles, the second partial; K = 20: element-wise stores.
  { name: 'gfx950 K=120 3x3, C=24 (c_tail 8)', spec: amd({ tile_k: 64, waves_m: 2, c_tail: 8 }), problem: prob({ H: 5, W: 9, C: 24, K: 120 }) },
  { name: 'sm_90 K=120 3x3 double buffer', spec: nv({ tile_k: 64, waves_m: 2, double_buffer: true }), problem: prob({ H: 5, W: 9, C: 32, K: 120 }) },
  { name: 'gfx950 K=20 (k_tail: channel-by-channel stores)', spec: amd({ ...one.spec, k_tail: true }), problem: prob({ ...one.problem, C: 32, K: 20 }) },
  { name: 'sm_90 K=20 (k_tail)', spec: nv({ ...one.spec, k_tail: true, double_buffer: true }), problem: prob({ ...one.problem, C: 32, K: 20 }) },
  { name: 'sm_90a wgmma K=20 (k_tail)', spec: wgmmaSpec({ k_tail: true }), problem: prob({ H: 8, W: 8, C: 16, K: 20 }) },
  // 5x5 stride 2.
  { name: 'gfx950 5x5 s2, C=24 (c_tail 8)', spec: amd({ ...five.spec, c_tail: 8 }), problem: prob({ ...five.problem, H: 11, W: 13, C: 24, K: 32 }) },
  { name: 'sm_90 5x5 s2 fp16', spec: nv({ ...five.spec, dtype: 'fp16', double_buffer: true }), problem: prob({ ...five.problem, H: 11, W: 13, C: 16, K: 32, dtype: 'fp16' }) },
  // Stride 4 (4x4 patchify stem): halo columns stored by phase.
  { name: 'gfx950 4x4 s4, C=8 (c_tail 8)', spec: amd({ ...s4.spec, c_tail: 8 }), problem: prob({ ...s4.problem, H: 10, W: 17, C: 8, K: 16 }) },
  { name: 'sm_90 4x4 s4, C=3 (c_tail 1)', spec: nv({ ...s4.spec, c_tail: 1 }), problem: prob({ ...s4.problem, H: 10, W: 17, C: 3, K: 16 }) },
  { name: 'sm_90a wgmma 3x3 s3 (three column phases)', spec: wgmmaSpec({ ...filter(3, 3, 1).spec }), problem: prob({ ...filter(3, 3, 1).problem, H: 20, W: 22, C: 16, K: 32 }) },
  // Dilation 2.
  { name: 'gfx950 3x3 dilation 2', spec: amd({ ...dil.spec }), problem: prob({ ...dil.problem, C: 32, K: 32 }) },
  { name: 'sm_90 3x3 dilation 2, cp.async', spec: nv({ ...dil.spec, double_buffer: true }), problem: prob({ ...dil.problem, C: 32, K: 32 }) },
  { name: 'sm_90a wgmma 3x3 dilation 2', spec: wgmmaSpec({ ...dil.spec }), problem: prob({ ...dil.problem, H: 10, W: 10, C: 16, K: 32 }) },
  // Depthwise-like grouped 7x7: cpg = kpg = 1, 24 groups merged (not a power of two).
  { name: 'gfx950 7x7 depthwise-like, groups 24, gm 24 (c_tail 1)', spec: amd(grouped({ ...dw7.spec, atom: '16x16x32', tile_w: 16, tile_k: 16, ck: 32, group_merge: 24, c_tail: 1 })), problem: prob({ ...dw7.problem, H: 8, W: 10, C: 24, K: 24, groups: 24 }) },
  { name: 'sm_90 7x7 depthwise-like, groups 24, gm 24 (c_tail 1)', spec: nv(grouped({ ...dw7.spec, tile_k: 16, group_merge: 24, c_tail: 1 })), problem: prob({ ...dw7.problem, H: 8, W: 10, C: 24, K: 24, groups: 24 }) },
  // cpg = 12 (not a multiple of 8), stride 2, 3 merged groups.
  { name: 'gfx950 cpg 12 kpg 8, gm 3, stride 2 (c_tail 4)', spec: amd(grouped({ ...filter(3, 2, 1).spec, atom: '16x16x32', tile_w: 16, tile_k: 16, ck: 32, group_merge: 3, c_tail: 4 })), problem: prob({ ...filter(3, 2, 1).problem, H: 9, W: 15, C: 72, K: 48, groups: 6 }) },
  { name: 'sm_90 cpg 12 kpg 8, gm 3, stride 2 (c_tail 4)', spec: nv(grouped({ ...filter(3, 2, 1).spec, tile_k: 16, group_merge: 3, c_tail: 4, double_buffer: true })), problem: prob({ ...filter(3, 2, 1).problem, H: 9, W: 15, C: 72, K: 48, groups: 6 }) },
  // split_c with tails: each split's slice ends in a partial chunk.
  { name: 'gfx950 split_c C=80 over 2 splits (c_tail 8)', spec: amd({ variant: 'split_c', c_tail: 8 }), problem: prob({ H: 5, W: 9, C: 80, K: 32 }), splits: 2 },
  { name: 'sm_90a wgmma split_c C=80 over 2 splits (c_tail 8)', spec: wgmmaSpec({ variant: 'split_c', c_tail: 8 }), problem: prob({ H: 8, W: 8, C: 80, K: 64 }), splits: 2 },
];

function run(c: Case, mutation?: BuildMutation) {
  const g = problemGeometry(c.problem);
  const x = randomBits(g.xBytes / 2, c.problem.dtype, 13);
  const w = randomBits(g.wBytes / 2, c.problem.dtype, 17);
  const kernel = buildConvKernel(c.spec, mutation ? { mutation } : {});
  const out = interpretConv(kernel, c.problem, x, w, c.splits !== undefined ? { splits: c.splits } : {});
  const ref = naiveConv(c.problem, x, w);
  if (c.spec.variant === 'split_c') {
    // The reduce pass is split-reduce's; here the fp32 slices must add up to the reference.
    const sum = new Float64Array(ref.length);
    for (let s = 0; s < (c.splits ?? 1); s++) for (let i = 0; i < ref.length; i++) sum[i]! += out.ws![s * ref.length + i]!;
    return mismatches(sum, ref, 'fp32', c.problem.R * c.problem.S * g.cpg);
  }
  return mismatches(Array.from(out.y, fromBits(c.problem.dtype)), ref, c.problem.dtype, c.problem.R * c.problem.S * g.cpg);
}

describe('coverage numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem, c.splits !== undefined ? { splits: c.splits } : {})).toEqual({ ok: true });
    expect(run(c)).toEqual({ count: 0, first: null });
  });

  it('a kernel that drops the last partial channel chunk fails the check', () => {
    const c = cases.find((k) => k.name.startsWith('gfx950 C=40'))!;
    expect(run(c, { dropChannelTail: true }).count).toBeGreaterThan(100);
    const nvCase = cases.find((k) => k.name.startsWith('sm_90 C=40'))!;
    expect(run(nvCase, { dropChannelTail: true }).count).toBeGreaterThan(100);
  });
});
