/** Spec and problem builders shared by this package's tests. */
import type { Problem } from './problem.js';
import type { Spec } from './spec.js';

/** The upstream parity base: t8x32x64 ck32 w2x2 32x32x16 iglp0 on gfx950, 3x3 s1 p1 bf16. */
export function gfx950Spec(over: Partial<Spec> = {}): Spec {
  return {
    variant: 'dense',
    target: 'gfx950',
    dtype: 'bf16',
    R: 3,
    S: 3,
    stride_h: 1,
    stride_w: 1,
    pad_h: 1,
    pad_w: 1,
    dilation_h: 1,
    dilation_w: 1,
    tile_h: 8,
    tile_w: 32,
    tile_k: 64,
    ck: 32,
    waves_m: 2,
    waves_n: 2,
    atom: '32x32x16',
    lds_pad: 8,
    double_buffer: false,
    chiplet_swizzle: true,
    chiplet_chunk: 64,
    num_xcds: 8,
    swizzle_wgm: 8,
    iglp: 0,
    waves_per_eu: null,
    group_merge: 1,
    tile_n: 1,
    c_tail: 0,
    k_tail: false,
    ...over,
  };
}

/** An sm_90 spec: t8x32x64 ck32 w2x2 with the m16n8k16 atom. */
export function sm90Spec(over: Partial<Spec> = {}): Spec {
  return gfx950Spec({ target: 'sm_90', atom: 'm16n8k16', chiplet_swizzle: false, num_xcds: 1, iglp: null, ...over });
}

/** A 3x3 stride-1 "same" problem. */
export function problem3x3(over: Partial<Problem> = {}): Problem {
  return {
    N: 2,
    H: 16,
    W: 32,
    C: 64,
    K: 128,
    R: 3,
    S: 3,
    strideH: 1,
    strideW: 1,
    padH: 1,
    padW: 1,
    dilationH: 1,
    dilationW: 1,
    groups: 1,
    dtype: 'bf16',
    ...over,
  };
}

/**
 * An sm_90a warpgroup-MMA spec: t8x8x64 ck16 w1x1 (one m-block, one warpgroup of N = 64),
 * lds_pad 0 and double buffering as the wgmma kernel requires.
 */
export function wgmmaSpec(over: Partial<Spec> = {}): Spec {
  return sm90Spec({ atom: 'm64nNk16', tile_h: 8, tile_w: 8, tile_k: 64, ck: 16, waves_m: 1, waves_n: 1, lds_pad: 0, double_buffer: true, ...over });
}

/**
 * A depthwise spec: 3x3 s1 p1 bf16, tile 2x8 of 16 output channels, 4 columns per thread (8
 * threads), multiplier 1 (ck 8), for the target given (gfx950 unless `over` says otherwise).
 */
export function depthwiseSpec(over: Partial<Spec> = {}): Spec {
  const target = over.target ?? 'gfx950';
  const base = target === 'sm_90' ? sm90Spec() : gfx950Spec({ target });
  return { ...base, variant: 'depthwise', atom: 'fma', tile_h: 2, tile_w: 8, tile_k: 16, ck: 8, waves_m: 4, waves_n: 1, lds_pad: 0, iglp: null, ...over };
}

/** The pointwise (1x1, flat-pixel) form of a spec: variant pointwise, 1x1, no padding. */
export function pointwiseSpec(base: Spec, over: Partial<Spec> = {}): Spec {
  return { ...base, variant: 'pointwise', R: 1, S: 1, pad_h: 0, pad_w: 0, ...over };
}

/** A 1x1 problem with no padding (stride 1 unless `over` says otherwise). */
export function problem1x1(over: Partial<Problem> = {}): Problem {
  return problem3x3({ R: 1, S: 1, padH: 0, padW: 0, ...over });
}
