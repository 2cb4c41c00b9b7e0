/**
 * Depthwise numerics: the exact IR of the gfx950 and sm_90 lowerings run in the interpreter against
 * the naive fp64 grouped conv (groups = C), for 3x3 / 5x5 / 7x7 and a 1x5 row filter, strides 1 and
 * 2, multipliers 1, 2 and 4, output blocks of 1 and 2 rows by 1 to 4 columns per thread and whole
 * 7-column rows, tiles over a whole small map (one with a partial last wave), channel tails (C not
 * a multiple of 8, K odd, a partial channel tile), channel tiles of 3, 5, 6 and 9 vectors,
 * partial spatial tiles and image tiles (2 to 4 images per workgroup, the last image tile partial);
 * and a test that the tolerance sees one dropped tap.
 */
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { depthwiseSpec, problem3x3 } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

/** A depthwise problem: groups = C, K = multiplier * C. */
const dw = (C: number, m: number, o: Partial<Problem>): Problem => problem3x3({ N: 2, H: 7, W: 13, C, K: m * C, groups: C, ...o });
const s2 = { stride_h: 2, stride_w: 2 } as const;
const ps2 = { strideH: 2, strideW: 2 } as const;
const f5 = { R: 5, S: 5, pad_h: 2, pad_w: 2 } as const;
const p5 = { R: 5, S: 5, padH: 2, padW: 2 } as const;
const f7 = { R: 7, S: 7, pad_h: 3, pad_w: 3 } as const;
const p7 = { R: 7, S: 7, padH: 3, padW: 3 } as const;

const perTarget = (target: 'gfx950' | 'sm_90'): [string, Spec, Problem][] => {
  const spec = (o: Partial<Spec>) => depthwiseSpec({ target, ...o });
  return [
    [`${target} 3x3 s1 bf16 M1, partial H/W tiles, 2 channel tiles`, spec({}), dw(32, 1, {})],
    [`${target} 3x3 s2 fp16 M1, odd map`, spec({ ...s2, dtype: 'fp16' }), dw(16, 1, { ...ps2, H: 9, W: 15, dtype: 'fp16' })],
    [`${target} 5x5 s1 bf16 M2, 2 columns per thread`, spec({ ...f5, ck: 4, waves_m: 2 }), dw(8, 2, p5)],
    [`${target} 7x7 s2 fp16 M1 p3, uneven staging passes`, spec({ ...f7, ...s2, dtype: 'fp16', tile_h: 4, tile_w: 4 }), dw(16, 1, { ...p7, ...ps2, H: 11, W: 10, dtype: 'fp16' })],
    [`${target} 3x3 s1 bf16 M2, channel tail C 12 (2-byte staging)`, spec({ ck: 4 }), dw(12, 2, { N: 1 })],
    [`${target} 3x3 s1 fp16 M4, C 10 K 40 (tail tile)`, spec({ ck: 2, tile_k: 32, dtype: 'fp16', tile_h: 1 }), dw(10, 4, { N: 1, H: 4, dtype: 'fp16' })],
    [`${target} 7x7 s1 bf16 M1, C 20 (channel tail)`, spec({ ...f7, lds_pad: 8 }), dw(20, 1, { ...p7, N: 1, H: 5, W: 9 })],
    [`${target} 1x5 s1 p0x2 bf16 M1`, spec({ R: 1, S: 5, pad_h: 0, pad_w: 2 }), dw(16, 1, { R: 1, S: 5, padH: 0, padW: 2, N: 1 })],
    [`${target} 3x3 s1 bf16 M1, 2x4 blocks, partial H/W tiles`, spec({ tile_h: 4, waves_n: 2 }), dw(16, 1, {})],
    [`${target} 5x5 s2 bf16 M2, 2x2 blocks, partial tiles`, spec({ ...f5, ...s2, ck: 4, tile_h: 4, tile_w: 4, waves_n: 2, waves_m: 2 }), dw(8, 2, { ...p5, ...ps2, H: 11, W: 9 })],
    [`${target} 7x7 s1 fp16 M4, 2x2 blocks, C 6 (K 24)`, spec({ ...f7, ck: 2, tile_k: 32, tile_h: 4, tile_w: 4, waves_n: 2, waves_m: 2, dtype: 'fp16' }), dw(6, 4, { ...p7, N: 1, H: 6, W: 5, dtype: 'fp16' })],
    [`${target} 5x5 s1 bf16 M1, one tile over the whole 7x7 map, 7-column rows, partial last wave, tail channel tile`, spec({ ...f5, tile_h: 7, tile_w: 7, tile_k: 32, waves_m: 7 }), dw(40, 1, { ...p5, N: 2, H: 7, W: 7 })],
    [`${target} 7x7 s1 fp16 M1, 2x7 blocks overhanging a 7-row map, C 20`, spec({ ...f7, tile_h: 8, tile_w: 7, waves_m: 7, waves_n: 2, lds_pad: 8, dtype: 'fp16' }), dw(20, 1, { ...p7, H: 7, W: 7, dtype: 'fp16' })],
    [`${target} 5x5 s2 bf16 M2, whole 7x7 output map, 7-column rows`, spec({ ...f5, ...s2, ck: 4, tile_h: 7, tile_w: 7, waves_m: 7 }), dw(8, 2, { ...p5, ...ps2, N: 1, H: 13, W: 14 })],
    // Channel tiles of any whole number of 16-byte vectors (widths fitted to C): 3, 5, 6 and 9 vectors.
    [`${target} 3x3 s1 bf16 M1, 24-channel tiles, C 40 (a partial last tile), 2x4 blocks`, spec({ tile_k: 24, tile_h: 4, waves_n: 2 }), dw(40, 1, {})],
    [`${target} 5x5 s1 fp16 M1, 40-channel tile, C 36 (channel tail)`, spec({ ...f5, tile_k: 40, dtype: 'fp16' }), dw(36, 1, { ...p5, N: 1, dtype: 'fp16' })],
    [`${target} 3x3 s2 bf16 M2, 48-channel tile (24 input channels), C 28 (two tiles, the last partial)`, spec({ ...s2, ck: 4, tile_k: 48 }), dw(28, 2, { ...ps2, N: 1, H: 9, W: 15 })],
    [`${target} 3x3 s1 bf16 M1, one 72-channel tile of whole pixels, C 72`, spec({ tile_k: 72 }), dw(72, 1, { N: 1, H: 5 })],
    // Image tiles: tile_n images per workgroup, the next image's halo staged into the second buffer while one is computed.
    [`${target} 3x3 s1 bf16 M1, 3 images per workgroup over N 5 (the last image tile partial), 2x4 blocks`, spec({ tile_n: 3, tile_h: 4, waves_n: 2 }), dw(16, 1, { N: 5 })],
    [`${target} 5x5 s2 fp16 M2, 2 images per workgroup over N 3, channel tail C 12 (2-byte staging)`, spec({ ...f5, ...s2, ck: 4, tile_n: 2, dtype: 'fp16' }), dw(12, 2, { ...p5, ...ps2, N: 3, H: 9, W: 11, dtype: 'fp16' })],
    [`${target} 3x3 s1 bf16 M1, 4 images per workgroup, 24-channel tiles over C 40`, spec({ tile_n: 4, tile_k: 24 }), dw(40, 1, { N: 4, H: 4 })],
    [`${target} 3x3 s2 bf16 M1, C 5 (K odd: 2-byte stores), 2x1 blocks`, spec({ ...s2, tile_h: 4, waves_n: 2, waves_m: 1 }), dw(5, 1, { ...ps2, N: 1, H: 9, W: 8 })],
  ];
};

const cases = [...perTarget('gfx950'), ...perTarget('sm_90')];

function run(spec: Spec, p: Problem, w?: Uint16Array) {
  const g = problemGeometry(p);
  const x = randomBits(g.xBytes / 2, p.dtype, 51);
  const weights = w ?? randomBits(g.wBytes / 2, p.dtype, 53);
  const y = Array.from(interpretConv(buildConvKernel(spec), p, x, weights).y, fromBits(p.dtype));
  return { x, w: weights, y };
}

describe('depthwise kernel numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases)('%s', (_, spec, p) => {
    expect(validate(spec, p)).toEqual({ ok: true });
    const { x, w, y } = run(spec, p);
    expect(mismatches(y, naiveConv(p, x, w), p.dtype, p.R * p.S)).toEqual({ count: 0, first: null });
  });

  it('the oracle tolerance catches one dropped tap', () => {
    const [, spec, p] = cases[0]!;
    const { x, w, y } = run(spec, p);
    // Zero tap (1, 2) of every channel in the reference: the kernel output must now disagree.
    const w2 = w.slice();
    for (let k = 0; k < p.K; k++) w2[k * 9 + 5] = 0;
    expect(mismatches(y, naiveConv(p, x, w2), p.dtype, 9).count).toBeGreaterThan(p.N * 10);
  });
});
