import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { validate, WGMMA_BOOKKEEPING_REGISTERS } from './validate.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from './test-fixtures.js';
import type { Spec } from './spec.js';

const reasonOf = (spec: unknown, problem?: unknown, splits?: number): string => {
  const v = validate(spec, problem, splits === undefined ? {} : { splits });
  return v.ok ? 'ok' : v.reason;
};

describe('validate: spec-only rules', () => {
  it('accepts the parity base on gfx950 and a plain sm_90 spec', () => {
    expect(validate(gfx950Spec())).toEqual({ ok: true });
    expect(validate(sm90Spec())).toEqual({ ok: true });
    expect(validate(gfx950Spec(), problem3x3())).toEqual({ ok: true });
  });

  it('checks positivity before any division', () => {
    expect(reasonOf(gfx950Spec({ waves_n: 0 }))).toBe('waves_n must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ waves_m: -1 }))).toBe('waves_m must be >= 1 (got -1)');
    expect(reasonOf(gfx950Spec({ ck: 0 }))).toBe('ck must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ tile_k: 0 }))).toBe('tile_k must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ stride_w: 0 }))).toBe('stride_w must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ swizzle_wgm: 0 }))).toBe('swizzle_wgm must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ variant: 'grouped', group_merge: 0 }))).toBe('group_merge must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ pad_h: -1 }))).toBe('padding must be >= 0 (got pad_h -1, pad_w 1)');
    expect(reasonOf(gfx950Spec({ lds_pad: -8 }))).toBe('lds_pad must be >= 0 (got -8)');
  });

  it('enforces strides 1 to 4, dilation, channel runs and atom availability', () => {
    expect(reasonOf(gfx950Spec({ stride_h: 5 }))).toBe('stride 5x1 is not supported (each stride must be 1 to 4)');
    expect(reasonOf(gfx950Spec({ stride_h: 4, stride_w: 3, tile_w: 32, ck: 16 }))).toBe('ok');
    expect(reasonOf(gfx950Spec({ dilation_w: 0 }))).toBe('dilation_w must be >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ c_tail: 3 }))).toBe('c_tail 3 must be 0 (no channel tail) or a channel run of 8, 4, 2, 1');
    expect(reasonOf(wgmmaSpec({ c_tail: 4 }))).toBe('c_tail 4: the warpgroup-MMA kernel copies whole 16-byte channel runs (c_tail 0 or 8; use m16n8k16)');
    expect(reasonOf(gfx950Spec({ target: 'gfx942', atom: '16x16x32' }))).toBe('atom 16x16x32 is not available on gfx942 (it has 32x32x8, 16x16x16)');
    expect(reasonOf(gfx950Spec({ atom: 'm16n8k16' }))).toBe('atom m16n8k16 is not available on gfx950 (it has 32x32x16, 16x16x32)');
    expect(reasonOf(sm90Spec({ atom: '32x32x16' }))).toBe('atom 32x32x16 is not available on sm_90 (it has m16n8k16, m64nNk16)');
    expect(reasonOf(gfx950Spec({ atom: 'm64nNk16', lds_pad: 0 }))).toBe('atom m64nNk16 is not available on gfx950 (it has 32x32x16, 16x16x32)');
  });

  it('requires tiles to be atom and wave multiples', () => {
    expect(reasonOf(gfx950Spec({ tile_w: 48 }))).toBe("tile_w 48 is not a multiple of the atom's N 32 (32x32x16)");
    expect(reasonOf(gfx950Spec({ tile_k: 48 }))).toBe("tile_k 48 is not a multiple of the atom's M 32 (32x32x16)");
    expect(reasonOf(gfx950Spec({ tile_h: 8, waves_n: 3 }))).toBe('tile_h 8 is not a multiple of waves_n 3');
    expect(reasonOf(gfx950Spec({ tile_k: 32, waves_m: 2 }))).toBe('tile_k/M = 1 atom rows do not split over waves_m 2');
    expect(reasonOf(sm90Spec({ tile_w: 12 }))).toBe("tile_w 12 is not a multiple of the atom's N 8 (m16n8k16)");
    expect(reasonOf(sm90Spec({ tile_w: 8, tile_k: 16, waves_m: 1 }))).toBe('ok');
  });

  it('requires ck to be a multiple of atom K and of 8, and lds_pad of 8', () => {
    expect(reasonOf(gfx950Spec({ atom: '16x16x32', ck: 16 }))).toBe("ck 16 is not a multiple of the atom's K 32 (16x16x32)");
    expect(reasonOf(gfx950Spec({ target: 'gfx942', atom: '32x32x8', ck: 8, tile_h: 8 }))).toBe('ok');
    expect(reasonOf(gfx950Spec({ lds_pad: 4 }))).toBe('lds_pad 4 is not a multiple of 8 (16-byte aligned LDS vectors)');
  });

  it('bounds LDS per target, threads and accumulators', () => {
    const big = { tile_h: 16, tile_w: 32, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 } as const;
    expect(reasonOf(gfx950Spec(big))).toBe('ok');
    expect(reasonOf(gfx950Spec({ ...big, target: 'gfx942', atom: '32x32x8' }))).toBe('LDS 66264 bytes exceed the 65536-byte limit of gfx942');
    expect(reasonOf(gfx950Spec({ ...big, double_buffer: true, tile_w: 96 }))).toMatch(/^LDS \d+ bytes exceed the 163840-byte limit of gfx950$/);
    expect(reasonOf(sm90Spec({ tile_h: 16, tile_w: 64, tile_k: 256, ck: 64, waves_m: 4, waves_n: 4 }))).toMatch(/exceed the 232448-byte limit of sm_90$/);
    expect(reasonOf(gfx950Spec({ tile_h: 16, waves_n: 8, tile_k: 256, waves_m: 8 }))).toBe('4096 threads per workgroup exceed 1024 on gfx950');
    expect(reasonOf(gfx950Spec({ tile_h: 16, tile_w: 64, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 }))).toBe('ok');
    expect(reasonOf(gfx950Spec({ tile_h: 16, tile_w: 96, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 }))).toBe('384 accumulators per lane exceed 256');
  });

  it('keeps AMD-only knobs off sm_90 and knob ranges sane', () => {
    expect(reasonOf(sm90Spec({ iglp: 0 }))).toBe('iglp is an AMD scheduling hint; sm_90 specs need iglp null');
    expect(reasonOf(sm90Spec({ waves_per_eu: 2 }))).toBe('waves_per_eu is an AMD attribute; sm_90 specs need waves_per_eu null');
    expect(reasonOf(sm90Spec({ chiplet_swizzle: true }))).toBe('sm_90 has no chiplets (XCDs); chiplet_swizzle must be false');
    expect(reasonOf(gfx950Spec({ iglp: -1 }))).toBe('iglp must be null or >= 0 (got -1)');
    expect(reasonOf(gfx950Spec({ waves_per_eu: 0 }))).toBe('waves_per_eu must be null or >= 1 (got 0)');
    expect(reasonOf(gfx950Spec({ waves_per_eu: 9 }))).toBe('waves_per_eu 9 exceeds 8 waves per SIMD on gfx950');
    expect(reasonOf(gfx950Spec({ group_merge: 2 }))).toBe('group_merge 2 needs the grouped variant (dense specs use 1)');
    expect(reasonOf(gfx950Spec(), undefined, 2)).toBe('splits 2 needs the split_c variant');
  });
});

describe('validate: launch rules', () => {
  it('matches the problem against the baked values', () => {
    expect(reasonOf(gfx950Spec(), problem3x3({ dtype: 'fp16' }))).toBe("problem dtype fp16 does not match the spec's bf16");
    expect(reasonOf(gfx950Spec(), problem3x3({ R: 5, S: 5, padH: 2, padW: 2 }))).toBe("problem filter 5x5 does not match the spec's baked 3x3");
    expect(reasonOf(gfx950Spec(), problem3x3({ strideH: 2, strideW: 2 }))).toBe("problem stride 2x2 does not match the spec's baked 1x1");
    expect(reasonOf(gfx950Spec(), problem3x3({ padH: 0, padW: 0 }))).toBe("problem padding 0x0 does not match the spec's baked 1x1");
    expect(reasonOf(gfx950Spec(), problem3x3({ dilationH: 2 }))).toBe("problem dilation 2x1 does not match the spec's baked 1x1");
    expect(reasonOf(gfx950Spec({ dilation_h: 2, pad_h: 2 }), problem3x3({ dilationH: 2, padH: 2 }))).toBe('ok');
  });

  it('checks channel divisibility', () => {
    expect(reasonOf(gfx950Spec(), problem3x3({ C: 48 }))).toBe('C 48 is not a multiple of ck 32');
    expect(reasonOf(gfx950Spec(), problem3x3({ K: 84 }))).toBe('K 84 is not a multiple of 8 (k_tail false)');
    expect(reasonOf(gfx950Spec({ k_tail: true }), problem3x3({ K: 84 }))).toBe('ok');
    expect(reasonOf(gfx950Spec(), problem3x3({ K: 80 }))).toBe('ok');
    // Channel tails: C need only be a multiple of the channel run.
    expect(reasonOf(gfx950Spec({ c_tail: 8 }), problem3x3({ C: 40 }))).toBe('ok');
    expect(reasonOf(gfx950Spec({ c_tail: 8 }), problem3x3({ C: 12 }))).toBe('C 12 is not a multiple of the channel run c_tail 8');
    expect(reasonOf(gfx950Spec({ c_tail: 1 }), problem3x3({ C: 3 }))).toBe('ok');
    expect(reasonOf(gfx950Spec(), problem3x3({ K: 96 }))).toBe('ok');
  });

  it('limits every tensor to 0x7F000000 bytes per launch', () => {
    // x: 2 * N * 256 * 256 * 64 bytes = 8 MiB per image; 255 images fit, 256 do not.
    const p = problem3x3({ H: 256, W: 256, C: 64, K: 64 });
    expect(reasonOf(gfx950Spec(), { ...p, N: 254 })).toBe('ok');
    expect(reasonOf(gfx950Spec(), { ...p, N: 256 })).toBe('x is 2147483648 bytes, over the per-launch limit 0x7F000000 (2130706432); plan() splits the batch into chunks');
    expect(reasonOf(gfx950Spec(), { ...p, N: 256, C: 32, K: 128 })).toMatch(/^y is 4294967296 bytes/);
    const wide = problem3x3({ N: 1, H: 3, W: 3, C: 8192, K: 16384, R: 3, S: 3 });
    expect(reasonOf(gfx950Spec(), wide)).toBe('w is 2415919104 bytes, over the per-launch limit 0x7F000000 (2130706432)');
  });

  it('limits the flat grid to 2^31 - 1 workgroups', () => {
    // 1x1 images, K within one tile: one workgroup per image. The grid is checked before the tensor sizes.
    const p = problem3x3({ H: 1, W: 1, C: 32, K: 32 });
    const spec = gfx950Spec({ tile_k: 64 });
    expect(reasonOf(spec, { ...p, N: 2 ** 31 - 1 })).toMatch(/^x is \d+ bytes/);
    expect(reasonOf(spec, { ...p, N: 2 ** 31 })).toBe('grid of 2147483648 workgroups exceeds 2^31 - 1; grow the tile or split the batch');
    expect(reasonOf(spec, { ...p, N: 2 ** 25, K: 64 * 64 })).toBe('grid of 2147483648 workgroups exceeds 2^31 - 1; grow the tile or split the batch');
  });

  it('rejects groups < 1 and groups that do not divide C and K, for every variant', () => {
    for (const variant of ['dense', 'split_c', 'grouped'] as const) {
      const spec = gfx950Spec({ variant });
      expect(reasonOf(spec, problem3x3({ groups: 0 }))).toBe('problem.groups must be >= 1 (got 0)');
      expect(reasonOf(spec, problem3x3({ groups: -4 }))).toBe('problem.groups must be >= 1 (got -4)');
      expect(reasonOf(spec, problem3x3({ C: 64, K: 96, groups: 64 }))).toBe('groups 64 does not divide K 96');
    }
    expect(reasonOf(gfx950Spec(), problem3x3({ groups: 1 }))).toBe('ok');
    expect(reasonOf(gfx950Spec(), problem3x3({ groups: 2 }))).toBe('the dense variant needs groups == 1 (got 2); use the grouped variant');
    expect(reasonOf(gfx950Spec({ variant: 'split_c' }), problem3x3({ groups: 2 }))).toBe('the split_c variant needs groups == 1 (got 2); use the grouped variant');
  });
});

describe('validate: warpgroup MMA (m64nNk16) rules', () => {
  it('accepts dense and split_c tiles of 8x8 m-blocks with a wgmma N per warpgroup from 8 to 256', () => {
    expect(reasonOf(wgmmaSpec())).toBe('ok');
    expect(reasonOf(wgmmaSpec({ variant: 'split_c' }))).toBe('ok');
    expect(reasonOf(wgmmaSpec({ tile_k: 16, waves_m: 2 }))).toBe('ok'); // N = 8
    expect(reasonOf(wgmmaSpec({ tile_k: 256 }))).toBe('ok'); // N = 256, 128 accumulators
    expect(reasonOf(wgmmaSpec({ tile_h: 16, tile_w: 32, waves_n: 8 }))).toBe('ok'); // 8 m-blocks, one per warpgroup
    expect(reasonOf(wgmmaSpec({ stride_h: 2, stride_w: 2, tile_w: 16, waves_m: 2, waves_n: 2 }))).toBe('ok');
    expect(reasonOf(wgmmaSpec(), problem3x3({ C: 64, K: 40 }))).toBe('ok');
  });

  it('refuses the grouped variant', () => {
    expect(reasonOf(wgmmaSpec({ variant: 'grouped', group_merge: 2 }))).toBe('the grouped variant has no warpgroup-MMA kernel (use m16n8k16 on sm_90)');
    expect(reasonOf(wgmmaSpec({ variant: 'grouped' }))).toBe('the grouped variant has no warpgroup-MMA kernel (use m16n8k16 on sm_90)');
  });

  it('needs tiles made of 8x8-pixel m-blocks that split evenly over waves_n', () => {
    expect(reasonOf(wgmmaSpec({ tile_w: 12 }))).toBe('tile 8x12 is not made of 8x8-pixel m-blocks (m64nNk16 takes 64 pixels per MMA)');
    expect(reasonOf(wgmmaSpec({ tile_h: 4, tile_w: 16 }))).toBe('tile 4x16 is not made of 8x8-pixel m-blocks (m64nNk16 takes 64 pixels per MMA)');
    expect(reasonOf(wgmmaSpec({ tile_w: 24, waves_n: 2 }))).toBe('3 m-blocks of 8x8 pixels do not split over waves_n 2 warpgroups');
    // tile_h 8 splits over waves_n 2 for mma.sync (4 rows each), but one m-block cannot.
    expect(reasonOf(wgmmaSpec({ waves_n: 2 }))).toBe('1 m-blocks of 8x8 pixels do not split over waves_n 2 warpgroups');
  });

  it('needs tile_k / waves_m to be a wgmma N: a multiple of 8 up to 256', () => {
    expect(reasonOf(wgmmaSpec({ waves_m: 3 }))).toBe('tile_k 64 does not split over waves_m 3 warpgroups');
    expect(reasonOf(wgmmaSpec({ tile_k: 512 }))).toBe('tile_k/waves_m = 512 output channels per warpgroup is not a wgmma N (a multiple of 8 up to 256)');
    // Two warpgroups of N 256 (1x1, so the 512 channels of weights fit the LDS).
    expect(reasonOf(wgmmaSpec({ R: 1, S: 1, pad_h: 0, pad_w: 0, tile_k: 512, waves_m: 2 }))).toBe('ok');
    expect(reasonOf(wgmmaSpec({ tile_k: 20 }))).toBe('tile_k/waves_m = 20 output channels per warpgroup is not a wgmma N (a multiple of 8 up to 256)');
    expect(reasonOf(wgmmaSpec({ tile_k: 96, waves_m: 8 }))).toBe('tile_k/waves_m = 12 output channels per warpgroup is not a wgmma N (a multiple of 8 up to 256)');
  });

  it('keeps threads x (accumulators + bookkeeping) within the register file', () => {
    // 8 warpgroups (1024 threads) x 128 accumulators: 1024 * (128 + 24) = 155648 > 65536.
    const big = { tile_h: 32, tile_w: 32, tile_k: 128, waves_m: 1, waves_n: 8 } as const;
    expect(reasonOf(wgmmaSpec(big))).toBe(`1024 threads x (128 accumulators + ${WGMMA_BOOKKEEPING_REGISTERS}) registers exceed the 65536-register file of sm_90`);
    // The boundary: 1024 * (40 + 24) = 65536 fits exactly, 1024 * (44 + 24) does not (N 80 vs 88, one m-block each).
    const eight = { tile_h: 8, tile_w: 64, waves_m: 1, waves_n: 8 } as const;
    expect(WGMMA_BOOKKEEPING_REGISTERS).toBe(24);
    expect(reasonOf(wgmmaSpec({ ...eight, tile_k: 80 }))).toBe('ok');
    expect(reasonOf(wgmmaSpec({ ...eight, tile_k: 88 }))).toBe('1024 threads x (44 accumulators + 24) registers exceed the 65536-register file of sm_90');
  });

  it('keeps accumulators + bookkeeping within 255 registers per thread', () => {
    // One warpgroup, N 256, two m-blocks: 256 accumulators + 24 > 255 (the register file alone would allow it).
    expect(reasonOf(wgmmaSpec({ tile_h: 8, tile_w: 16, tile_k: 256, waves_m: 1, waves_n: 1 }))).toBe('256 accumulators + 24 registers per thread exceed the 255-register limit of sm_90');
    expect(reasonOf(wgmmaSpec({ tile_h: 8, tile_w: 8, tile_k: 256, waves_m: 1, waves_n: 1 }))).toBe('ok');
  });

  it('takes no lds_pad and only double buffering', () => {
    expect(reasonOf(wgmmaSpec({ lds_pad: 8 }))).toBe('lds_pad 8: warpgroup-MMA tiles read 128-byte core matrices and take no pad (use 0)');
    expect(reasonOf(wgmmaSpec({ double_buffer: false }))).toBe('the warpgroup-MMA kernel stages with cp.async into two buffers: double_buffer must be true');
  });

  it('applies the shared rules: K granule 16 for ck, thread and LDS limits, AMD knobs off, K a multiple of 8', () => {
    expect(reasonOf(wgmmaSpec({ ck: 8 }))).toBe("ck 8 is not a multiple of the atom's K 16 (m64nNk16)");
    expect(reasonOf(wgmmaSpec({ tile_w: 64, tile_k: 16, waves_m: 2, waves_n: 8 }))).toBe('2048 threads per workgroup exceed 1024 on sm_90');
    // 2 stages x 2 bytes x (64 * 10 * 10 halo + 256 * 9 * 64 weights) = 615424 bytes.
    expect(reasonOf(wgmmaSpec({ tile_k: 256, ck: 64 }))).toBe('LDS 617472 bytes exceed the 232448-byte limit of sm_90'); // swizzled: 1 KiB-aligned stages + 1 KiB slack
    expect(reasonOf(wgmmaSpec({ iglp: 0 }))).toBe('iglp is an AMD scheduling hint; sm_90 specs need iglp null');
    // The epilogue stores channel pairs and guards k < K only: K must be a multiple of 8.
    expect(reasonOf(wgmmaSpec(), problem3x3({ K: 36 }))).toBe('K 36 is not a multiple of 8 (k_tail false)');
    expect(reasonOf(wgmmaSpec({ variant: 'split_c' }), problem3x3({ C: 64 }), 4)).toBe('ok');
    expect(reasonOf(wgmmaSpec({ variant: 'split_c' }), problem3x3({ C: 64 }), 8)).toBe('splits 8 leaves a slice without channels: C 64 is 4 runs of ck 16');
  });
});

describe('validate: grouped / group_merge', () => {
  const grouped = (gm: number, over: Partial<Spec> = {}): Spec => gfx950Spec({ variant: 'grouped', group_merge: gm, tile_k: 32, waves_m: 1, ck: 16, ...over });

  it('accepts groups 1 and 2 when the merged block fits', () => {
    expect(reasonOf(grouped(1), problem3x3({ C: 64, K: 64, groups: 1 }))).toBe('ok');
    expect(reasonOf(grouped(1), problem3x3({ C: 64, K: 64, groups: 2 }))).toBe('ok');
    expect(reasonOf(grouped(2), problem3x3({ C: 64, K: 64, groups: 2 }))).toBe('ok');
  });

  it('rejects groups 0 and -4 before dividing by them', () => {
    expect(reasonOf(grouped(1), problem3x3({ groups: 0 }))).toBe('problem.groups must be >= 1 (got 0)');
    expect(reasonOf(grouped(2), problem3x3({ groups: -4 }))).toBe('problem.groups must be >= 1 (got -4)');
  });

  it('rejects merges that do not divide groups or do not fit the atom / tile / ck', () => {
    const p = problem3x3({ C: 96, K: 96, groups: 24 }); // cpg = kpg = 4
    expect(reasonOf(grouped(16), p)).toBe('group_merge 16 does not divide groups 24');
    expect(reasonOf(grouped(5), problem3x3({ C: 80, K: 80, groups: 20 }))).toBe('group_merge 5 x cpg 4 = 20 merged input channels is not a multiple of ck 16');
    expect(reasonOf(grouped(2), p)).toBe('group_merge 2 x cpg 4 = 8 merged input channels is not a multiple of ck 16');
    expect(reasonOf(grouped(4), p)).toBe('group_merge 4 x kpg 4 = 16 merged output channels do not fill tile_k 32');
    expect(reasonOf(grouped(6), p)).toBe('group_merge 6 x cpg 4 = 24 merged input channels is not a multiple of ck 16');
    expect(reasonOf(grouped(6, { c_tail: 4 }), p)).toBe('group_merge 6 x kpg 4 = 24 merged output channels do not fill tile_k 32');
    expect(reasonOf(grouped(3, { c_tail: 4, k_tail: true, tile_k: 32 }), problem3x3({ C: 36, K: 30, groups: 3 }))).toBe('ok');
    expect(reasonOf(grouped(3, { c_tail: 4, k_tail: true, tile_k: 64, waves_m: 2 }), problem3x3({ C: 36, K: 30, groups: 3 }))).toBe('group_merge 3 x kpg 10 = 30 merged output channels do not fill tile_k 64');
    expect(reasonOf(grouped(8), p)).toBe('ok');
    expect(reasonOf(grouped(8, { tile_k: 64, waves_m: 2 }), p)).toBe('group_merge 8 x kpg 4 = 32 merged output channels do not fill tile_k 64');
    expect(reasonOf(grouped(4, { atom: '16x16x32', ck: 32, tile_w: 32, tile_k: 16 }), problem3x3({ C: 256, K: 128, groups: 32 }))).toBe('ok');
  });

  it('supports depthwise-like cpg = 1 only through a merge that fills ck and the atom', () => {
    const dw = problem3x3({ C: 64, K: 64, groups: 64 });
    expect(reasonOf(grouped(1), dw)).toBe('group_merge 1 x cpg 1 = 1 merged input channels is not a multiple of ck 16');
    expect(reasonOf(grouped(32), dw)).toBe('ok');
  });
});

describe('validate: split_c split counts', () => {
  const split = gfx950Spec({ variant: 'split_c', ck: 16 });
  const p = problem3x3({ C: 256, K: 128 });

  it('accepts split counts that leave whole chunks per split, uneven ones and C/ck included', () => {
    for (const s of [1, 2, 3, 4, 7, 8, 16]) expect(reasonOf(split, p, s)).toBe('ok');
  });

  it('rejects bad split counts with reasons', () => {
    expect(reasonOf(split, p, 0)).toBe('splits must be an integer >= 1 (got 0)');
    expect(reasonOf(split, p, -2)).toBe('splits must be an integer >= 1 (got -2)');
    expect(reasonOf(split, p, 1.5)).toBe('splits must be an integer >= 1 (got 1.5)');
    expect(reasonOf(split, p, 32)).toBe('splits 32 leaves a slice without channels: C 256 is 16 runs of ck 16');
    expect(reasonOf(gfx950Spec({ variant: 'split_c', ck: 32, c_tail: 8 }), problem3x3({ C: 72 }), 10)).toBe('splits 10 leaves a slice without channels: C 72 is 9 runs of c_tail 8');
    expect(reasonOf(gfx950Spec(), p, 2)).toBe('splits 2 needs the split_c variant (dense runs the whole channel loop)');
    expect(reasonOf(split, undefined, 0)).toBe('splits must be an integer >= 1 (got 0)');
  });

  it('bounds the fp32 workspace per launch', () => {
    // N*Ho*Wo*K = 64*64*64*128 = 2^25 elements: 2^27 bytes per split; 16 splits = 2^31 bytes.
    const big = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 128 });
    expect(reasonOf(split, big, 8)).toBe('ok');
    expect(reasonOf(split, big, 16)).toBe('workspace [splits 16, N 64, Ho 64, Wo 64, K 128] fp32 is 2147483648 bytes, over the per-launch limit 0x7F000000 (2130706432)');
  });
});

describe('validate never throws', () => {
  it('turns malformed input into reasons', () => {
    expect(reasonOf(null)).toMatch(/^spec /);
    expect(reasonOf({})).toMatch(/^spec /);
    expect(reasonOf({ ...gfx950Spec(), target: 'gfx1100' })).toMatch(/^spec target:/);
    expect(reasonOf(gfx950Spec(), { N: 1 })).toMatch(/^problem /);
    expect(reasonOf(gfx950Spec(), 'conv')).toMatch(/^problem /);
  });

  it('holds for arbitrary integer specs and problems', () => {
    const small = fc.integer({ min: -3, max: 70 });
    const arb = fc.record({
      spec: fc.record({
        variant: fc.constantFrom('dense', 'split_c', 'grouped'),
        target: fc.constantFrom('gfx950', 'gfx942', 'sm_90'),
        atom: fc.constantFrom('32x32x16', '16x16x32', '32x32x8', '16x16x16', 'm16n8k16', 'm64nNk16'),
        tile_h: small,
        tile_w: small,
        tile_k: small,
        ck: small,
        waves_m: small,
        waves_n: small,
        group_merge: small,
        stride_h: small,
        R: small,
      }),
      problem: fc.record({ N: small, H: small, W: small, C: small, K: small, groups: small, strideH: small, R: small }),
      splits: fc.integer({ min: -2, max: 40 }),
    });
    fc.assert(
      fc.property(arb, ({ spec, problem, splits }) => {
        const v = validate(gfx950Spec(spec as Partial<Spec>), problem3x3(problem), { splits });
        expect(typeof v.ok).toBe('boolean');
        if (!v.ok) expect(v.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('validate: tile_n (images per workgroup tile)', () => {
  const small = problem3x3({ N: 4, H: 8, W: 8, C: 64, K: 64 });
  const t8x8 = { tile_w: 8, tile_k: 64, tile_n: 2 } as const;

  it('checks tile_n >= 1 with the other positivity rules', () => {
    expect(reasonOf(sm90Spec({ tile_n: 0 }))).toBe('tile_n must be >= 1 (got 0)');
    expect(reasonOf(sm90Spec({ tile_n: -2 }))).toBe('tile_n must be >= 1 (got -2)');
  });

  it('rejects tile_n > 1 for the grouped variant; the warpgroup-MMA kernel splits tile_n images of m-blocks over its warpgroups', () => {
    expect(reasonOf(wgmmaSpec({ tile_n: 2 }))).toBe('ok');
    expect(reasonOf(wgmmaSpec({ tile_n: 3, waves_n: 2 }))).toBe('3 m-blocks of 8x8 pixels (3 images) do not split over waves_n 2 warpgroups');
    expect(reasonOf(gfx950Spec({ variant: 'grouped', group_merge: 2, tile_n: 2 }))).toBe(
      'tile_n 2: the grouped kernel tiles one image (its merged channel blocks already multiply the workgroups); use tile_n 1',
    );
    expect(reasonOf(wgmmaSpec({ tile_n: 1 }))).toBe('ok');
  });

  it('splits tile_n * tile_h rows over the waves: one band inside an image, or whole images per wave', () => {
    expect(reasonOf(sm90Spec({ ...t8x8, waves_n: 2 }))).toBe('ok');
    expect(reasonOf(sm90Spec({ ...t8x8, tile_n: 4, waves_m: 1, waves_n: 2 }))).toBe('ok');
    expect(reasonOf(sm90Spec({ ...t8x8, tile_h: 4, tile_n: 3, waves_m: 1, waves_n: 8 }))).toBe('tile_n 3 x tile_h 4 = 12 rows are not a multiple of waves_n 8');
    // 12 rows over 4 waves: 3 rows per wave neither divide tile_h 4 nor cover whole images.
    expect(reasonOf(sm90Spec({ ...t8x8, tile_h: 4, tile_n: 3, waves_m: 1, waves_n: 4 }))).toBe(
      'tile_n 3 x tile_h 4 rows over waves_n 4: 3 rows per wave neither divide tile_h nor cover whole images',
    );
    // 8 rows of 2-row images over 8 waves: one row per wave (bands inside an image).
    expect(reasonOf(sm90Spec({ ...t8x8, tile_h: 2, tile_n: 4, waves_m: 1, waves_n: 8 }))).toBe('ok');
  });

  it('needs the output map to fit one spatial tile when a problem is given', () => {
    expect(reasonOf(sm90Spec({ ...t8x8, waves_n: 2 }), small)).toBe('ok');
    expect(reasonOf(sm90Spec({ ...t8x8, waves_n: 2 }), { ...small, H: 9 })).toBe(
      'tile_n 2 needs the output map to fit one spatial tile (Ho 9 x Wo 8 against tile 8x8); otherwise more images per tile only add LDS',
    );
    expect(reasonOf(sm90Spec({ ...t8x8, waves_n: 2 }), { ...small, W: 12 })).toMatch(/^tile_n 2 needs the output map to fit one spatial tile \(Ho 8 x Wo 12/);
    // tile_n 1 has no such rule.
    expect(reasonOf(sm90Spec({ ...t8x8, tile_n: 1, waves_n: 2 }), { ...small, H: 9 })).toBe('ok');
  });

  it('counts tile_n in LDS and accumulators', () => {
    // 8x32x64 ck16 on gfx942: one image fits the 64 KiB LDS, four do not.
    const base = gfx950Spec({ target: 'gfx942', atom: '32x32x8', ck: 16 });
    expect(reasonOf(base)).toBe('ok');
    expect(reasonOf({ ...base, tile_n: 4 })).toMatch(/^LDS \d+ bytes exceed the 65536-byte limit of gfx942$/);
    // 8x32x64 over 2x1 waves: 128 accumulators per lane for one image, 512 for four.
    expect(reasonOf(gfx950Spec({ waves_m: 2, waves_n: 1 }))).toBe('ok');
    expect(reasonOf(gfx950Spec({ waves_m: 2, waves_n: 1, tile_n: 4 }))).toBe('512 accumulators per lane exceed 256');
  });
});
