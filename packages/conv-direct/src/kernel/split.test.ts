/**
 * split_c numerics: each split reduces its slice of whole channel runs (split-slices.ts: uneven
 * counts give slices one run apart) into its own fp32 slice of ws[splits, N, Ho, Wo, K]; the
 * slices summed in split order equal the full convolution.
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { splitSlice, splitUnit } from '../split-slices.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { channelSlice, mismatches, naiveConv, randomBits } from './test-oracle.js';

/**
 * [name, spec, problem, split counts, the epilogue the builder picks: the per-wave MMA's fp32 tile
 * through LDS when it fits; the warpgroup MMA's fp32 channel pairs straight from the accumulators,
 * as they fill whole sectors].
 */
const cases: [string, Spec, Problem, number[], 'direct' | 'lds-staged'][] = [
  // Uneven counts: 3 slices of 4 chunks are 1 + 1 + 2 chunks; 5 of 8 are 1 + 2 + 1 + 2 + 2.
  ['gfx950', gfx950Spec({ variant: 'split_c', ck: 16, waves_m: 1, waves_n: 4 }), problem3x3({ N: 1, H: 6, W: 20, C: 64, K: 96 }), [1, 2, 3, 4], 'direct'],
  ['sm_90', sm90Spec({ variant: 'split_c', tile_h: 4, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), problem3x3({ N: 2, H: 5, W: 18, C: 64, K: 64, dtype: 'bf16' }), [2, 3, 4], 'lds-staged'],
  // Warpgroup MMA: fp32 pairs stored directly; 4 splits = C/ck (one chunk each).
  ['sm_90a wgmma fp16 t16x8 w1x2', wgmmaSpec({ variant: 'split_c', dtype: 'fp16', tile_h: 16, waves_n: 2 }), problem3x3({ N: 2, H: 9, W: 12, C: 64, K: 64, dtype: 'fp16' }), [1, 2, 3, 4], 'direct'],
  ['sm_90a wgmma ck64 swizzled bf16 t8x8 N 64', wgmmaSpec({ variant: 'split_c', ck: 64 }), problem3x3({ N: 1, H: 8, W: 7, C: 256, K: 64 }), [1, 2, 3, 4], 'direct'],
  ['sm_90a wgmma bf16 s2 t8x16 w2x2', wgmmaSpec({ variant: 'split_c', stride_h: 2, stride_w: 2, tile_w: 16, tile_k: 64, ck: 32, waves_m: 2, waves_n: 2 }), problem3x3({ N: 1, H: 15, W: 20, C: 128, K: 64, strideH: 2, strideW: 2 }), [1, 2, 4], 'direct'],
  ['sm_90a wgmma bf16 8 chunks in 3 and 5 slices', wgmmaSpec({ variant: 'split_c' }), problem3x3({ N: 1, H: 8, W: 8, C: 128, K: 64 }), [3, 5], 'direct'],
  // Channel tails: C 40 is 5 runs of c_tail 8 (ck 16): 3 slices of 8, 16 and 16 channels, the last chunk of each partial or whole.
  ['gfx950 channel tail C 40', gfx950Spec({ variant: 'split_c', ck: 16, c_tail: 8, waves_m: 1, waves_n: 4 }), problem3x3({ N: 1, H: 6, W: 20, C: 40, K: 64 }), [2, 3, 5], 'direct'],
  ['sm_90a wgmma channel tail C 40', wgmmaSpec({ variant: 'split_c', c_tail: 8 }), problem3x3({ N: 1, H: 8, W: 8, C: 40, K: 64 }), [2, 3], 'direct'],
];

describe('split_c kernel numerics', () => {
  it.each(cases.map((c) => [`${c[0]} splits ${c[3].join('/')}`, c] as const))('%s: every fp32 slice equals the conv of its channel range, and the slices sum to the conv', (_, [, spec, p, splitCounts, epilogue]) => {
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 3);
    const w = randomBits(g.wBytes / 2, p.dtype, 4);
    const kernel = buildConvKernel(spec);
    expect(kernel.epilogue).toBe(epilogue);
    const full = naiveConv(p, x, w);
    for (const splits of splitCounts) {
      const run = interpretConv(kernel, p, x, w, { splits });
      expect(run.plan.splits).toBe(splits);
      const ws = run.ws!;
      const slice = full.length;
      expect(ws.length).toBe(splits * slice);
      const sum = new Float64Array(slice);
      for (let s = 0; s < splits; s++) {
        const part = ws.subarray(s * slice, (s + 1) * slice);
        const { c0, c1 } = splitSlice(p.C, splitUnit(spec), splits, s);
        const sub = channelSlice(p, x, w, c0, c1 - c0);
        expect(mismatches(part, naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * (c1 - c0))).toEqual({ count: 0, first: null });
        for (let i = 0; i < slice; i++) sum[i]! += part[i]!;
      }
      expect(mismatches(sum, full, 'fp32', 9 * p.C)).toEqual({ count: 0, first: null });
      // y is not touched by split_c (the reduce writes it).
      expect(run.y.every((v) => v === 0x7f7f)).toBe(true);
    }
  });

  it.each([cases[0]!, cases[2]!].map((c) => [c[0], c] as const))('%s: splits = C/ck (one chunk per split) gives bit-identical workspaces on repeated runs', (_, [, spec, p]) => {
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 8);
    const w = randomBits(g.wBytes / 2, p.dtype, 9);
    const kernel = buildConvKernel(spec);
    const a = interpretConv(kernel, p, x, w, { splits: p.C / spec.ck }).ws!;
    const b = interpretConv(kernel, p, x, w, { splits: p.C / spec.ck }).ws!;
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    const sub = channelSlice(p, x, w, 0, spec.ck);
    expect(mismatches(a.subarray(0, a.length / (p.C / spec.ck)), naiveConv(sub.p, sub.x, sub.w), 'fp32', 9 * spec.ck).count).toBe(0);
  });
});
