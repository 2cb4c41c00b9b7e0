/**
 * Grouped / group_merge numerics: runtime groups, cpg and kpg; gm adjacent groups merged into one
 * block-diagonal MMA problem whose off-diagonal weights are zeroed at staging.
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, problem3x3, sm90Spec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { groupedChannelAlignment } from './schedule.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

const grouped = (o: Partial<Spec>): Partial<Spec> => ({ variant: 'grouped', ...o });
const gp = (o: Partial<Problem>) => problem3x3({ N: 1, H: 6, W: 16, ...o });

const cases: [string, Spec, Problem][] = [
  ['gfx950 cpg 4 kpg 4, gm 8 (16x16x32)', gfx950Spec(grouped({ group_merge: 8, atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 })), gp({ C: 64, K: 64, groups: 16 })],
  ['gfx950 cpg 8 kpg 16, gm 4', gfx950Spec(grouped({ group_merge: 4, tile_k: 64, ck: 32, waves_m: 2, waves_n: 2 })), gp({ C: 64, K: 128, groups: 8 })],
  ['gfx950 cpg 16 kpg 16, gm 2, fp16 stride 2', gfx950Spec(grouped({ group_merge: 2, atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, stride_h: 2, stride_w: 2, dtype: 'fp16' })), gp({ C: 64, K: 64, groups: 4, strideH: 2, strideW: 2, H: 11, W: 31, dtype: 'fp16' })],
  ['gfx950 cpg 32 kpg 32, gm 1', gfx950Spec(grouped({ group_merge: 1, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2 })), gp({ C: 64, K: 64, groups: 2 })],
  ['gfx950 depthwise-like cpg 1 kpg 2, gm 32 (2-byte pieces)', gfx950Spec(grouped({ group_merge: 32, atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 })), gp({ C: 32, K: 64, groups: 32 })],
  ['gfx942 cpg 4 kpg 8, gm 4 (16x16x16, 4-element fragments)', gfx950Spec(grouped({ target: 'gfx942', group_merge: 4, atom: '16x16x16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2 })), gp({ C: 32, K: 64, groups: 8 })],
  ['sm_90 cpg 4 kpg 4, gm 8 (register prefetch: 8-byte pieces)', sm90Spec(grouped({ group_merge: 8, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, double_buffer: true })), gp({ C: 64, K: 64, groups: 16 })],
  ['sm_90 cpg 8 kpg 8, gm 4 (cp.async)', sm90Spec(grouped({ group_merge: 4, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, double_buffer: true })), gp({ C: 64, K: 64, groups: 8 })],
  ['sm_90 cpg 8 kpg 8, gm 4, fitted tile_h 14 (7 rows per wave) on a 14x14 map', sm90Spec(grouped({ group_merge: 4, tile_h: 14, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, double_buffer: true })), gp({ C: 64, K: 64, groups: 8, H: 14, W: 14 })],
  ['sm_90 cpg 32 kpg 16, gm 2, tile spans one group', sm90Spec(grouped({ group_merge: 2, tile_w: 16, tile_k: 16, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true })), gp({ C: 128, K: 64, groups: 4 })],
];

describe('grouped kernel numerics (interpreter vs naive fp64 grouped conv)', () => {
  it.each(cases)('%s', (_, spec, p) => {
    expect(validate(spec, p)).toEqual({ ok: true });
    const g = problemGeometry(p);
    const x = randomBits(g.xBytes / 2, p.dtype, 31);
    const w = randomBits(g.wBytes / 2, p.dtype, 37);
    const kernel = buildConvKernel(spec);
    const y = Array.from(interpretConv(kernel, p, x, w).y, fromBits(p.dtype));
    expect(mismatches(y, naiveConv(p, x, w), p.dtype, p.R * p.S * g.cpg)).toEqual({ count: 0, first: null });
  });

  it('one binary serves several grouped problems (groups, cpg, kpg are kernargs)', () => {
    const spec = gfx950Spec(grouped({ group_merge: 4, atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }));
    const kernel = buildConvKernel(spec);
    for (const p of [gp({ C: 32, K: 32, groups: 4 }), gp({ C: 64, K: 128, groups: 8, W: 20 })]) {
      const g = problemGeometry(p);
      const x = randomBits(g.xBytes / 2, p.dtype, 41);
      const w = randomBits(g.wBytes / 2, p.dtype, 43);
      const y = Array.from(interpretConv(kernel, p, x, w).y, fromBits(p.dtype));
      expect(mismatches(y, naiveConv(p, x, w), p.dtype, 9 * g.cpg).count).toBe(0);
    }
  });

  it('loads weights in pieces that never straddle a group', () => {
    expect(groupedChannelAlignment(gfx950Spec(grouped({ group_merge: 8, ck: 32 })))).toBe(4);
    expect(groupedChannelAlignment(gfx950Spec(grouped({ group_merge: 2, ck: 16 })))).toBe(8);
    expect(groupedChannelAlignment(gfx950Spec(grouped({ group_merge: 16, ck: 16 })))).toBe(1);
    expect(buildConvKernel(sm90Spec(grouped({ group_merge: 8, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, double_buffer: true }))).schedule).toBe('register-prefetch');
    expect(buildConvKernel(sm90Spec(grouped({ group_merge: 4, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, double_buffer: true }))).schedule).toBe('async-copy');
  });
});
