/**
 * The configs whose emitted IR is pinned by SHA-256 (per LLVM flavor) in goldens.json, after the
 * upstream byte-identity list adapted to our targets: every atom, both dtypes,
 * strides 1 and 2, 1x1 / 3x3 / 5x5 filters, uneven staging passes, swizzle on and off, iglp,
 * waves_per_eu, single and double buffering, on gfx950, gfx942 and sm_90; plus split_c and grouped
 * (group_merge, whole and split weight pieces), the sm_90a warpgroup-MMA kernel (dense, split_c,
 * stride 2), multi-image tiles (tile_n: sm_90 split_c, gfx950 dense with waves in bands), fused
 * epilogues at the store (MFMA, mma.sync grouped, wgmma; every config above them is bare), and
 * channel / output-channel tails, a 7x7 stem, strides 3 and 4, dilation 2 and a depthwise-like
 * grouped merge of 24 groups; tap-folded small-C kernels (gfx950, gfx942, sm_90); the pointwise (flat-pixel 1x1) kernels on every target and atom
 * family, at strides 1 and 2, with channel tails and a fused epilogue; and whole-map wgmma tiles
 * (dense and split_c), the wgmma per-tap weight ring (planes and swizzled rows; strides 2 and 1),
 * gfx950's direct-to-LDS weight staging (dense 3x3, pointwise with tails), and the streaming
 * pointwise schedule (sm_90 cp.async with an epilogue, gfx950 register prefetch at stride 2).
 */
import type { Spec } from '../spec.js';
import { depthwiseSpec, gfx950Spec, pointwiseSpec, sm90Spec, wgmmaSpec } from '../test-fixtures.js';

/** The upstream parity base: t8x32x64 ck32 w2x2 32x32x16 iglp0, gfx950, 3x3 s1 p1 bf16. */
const base: Spec = gfx950Spec();

const sm90: Spec = sm90Spec({ double_buffer: true });

/** Golden config names and specs, in a fixed order. */
export const GOLDEN_CONFIGS: readonly { readonly name: string; readonly spec: Spec }[] = [
  { name: 'gfx950-base-bf16', spec: base },
  { name: 'gfx950-fp16', spec: { ...base, dtype: 'fp16' } },
  { name: 'gfx950-double-buffer', spec: { ...base, double_buffer: true } },
  { name: 'gfx950-no-swizzle', spec: { ...base, chiplet_swizzle: false, swizzle_wgm: 1 } },
  { name: 'gfx950-no-iglp-we3', spec: { ...base, iglp: null, waves_per_eu: 3 } },
  { name: 'gfx950-stride2', spec: { ...base, stride_h: 2, stride_w: 2 } },
  { name: 'gfx950-1x1-p0', spec: { ...base, R: 1, S: 1, pad_h: 0, pad_w: 0 } },
  { name: 'gfx950-16x16x32-w48-k32', spec: { ...base, atom: '16x16x32', tile_w: 48, tile_k: 32, waves_m: 1 } },
  { name: 'gfx950-5x5-p2-wgm1', spec: { ...base, R: 5, S: 5, pad_h: 2, pad_w: 2, swizzle_wgm: 1 } },
  { name: 'gfx950-t16x64-w2x4-ck16-iglp1', spec: { ...base, tile_h: 16, tile_w: 64, tile_k: 64, ck: 16, waves_n: 4, iglp: 1 } },
  { name: 'gfx942-32x32x8', spec: { ...base, target: 'gfx942', atom: '32x32x8', ck: 16 } },
  { name: 'gfx942-16x16x16-fp16-uneven', spec: { ...base, target: 'gfx942', atom: '16x16x16', dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2 } },
  { name: 'sm90-t8x16x128-ck32-w2x4-db', spec: { ...sm90, tile_w: 16, tile_k: 128, waves_n: 4 } },
  { name: 'sm90-fp16-stride2-single', spec: { ...sm90, dtype: 'fp16', stride_h: 2, stride_w: 2, double_buffer: false, tile_w: 16, tile_k: 32, waves_m: 1 } },
  { name: 'sm90-1x1-ck64-db', spec: { ...sm90, R: 1, S: 1, pad_h: 0, pad_w: 0, ck: 64, tile_w: 32 } },
  { name: 'sm90-5x5-p2-fp16-db', spec: { ...sm90, R: 5, S: 5, pad_h: 2, pad_w: 2, dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1 } },
  { name: 'gfx950-split-c', spec: { ...base, variant: 'split_c' } },
  { name: 'sm90-split-c-db', spec: { ...sm90, variant: 'split_c', tile_w: 16, tile_k: 128, waves_n: 4 } },
  { name: 'gfx950-grouped-gm8', spec: { ...base, variant: 'grouped', group_merge: 8, atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1 } },
  { name: 'gfx942-grouped-gm4-fp16', spec: { ...base, target: 'gfx942', variant: 'grouped', group_merge: 4, atom: '16x16x16', dtype: 'fp16', tile_w: 16, tile_k: 32, ck: 16, waves_m: 1 } },
  { name: 'sm90-grouped-gm4-db', spec: { ...sm90, variant: 'grouped', group_merge: 4, tile_w: 16, tile_k: 32, waves_m: 1 } },
  { name: 'sm90-grouped-gm8-pieces', spec: { ...sm90, variant: 'grouped', group_merge: 8, tile_w: 16, tile_k: 32, waves_m: 1 } },
  { name: 'sm90a-wgmma-t16x8x128-ck32-w1x2-bf16', spec: wgmmaSpec({ tile_h: 16, tile_k: 128, ck: 32, waves_n: 2 }) },
  { name: 'sm90a-wgmma-split-c-t16x16x128-w1x2', spec: wgmmaSpec({ variant: 'split_c', tile_h: 16, tile_w: 16, tile_k: 128, waves_n: 2 }) },
  { name: 'sm90a-wgmma-ck64-swizzled-t16x16x64-w1x2', spec: wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 16, waves_n: 2 }) },
  { name: 'sm90a-wgmma-split-c-t8x8x128-ck32-w1x2-n4', spec: wgmmaSpec({ variant: 'split_c', tile_k: 128, ck: 32, waves_n: 2, tile_n: 4 }) },
  { name: 'sm90a-wgmma-fp16-stride2-t8x16x64-w2x2', spec: wgmmaSpec({ dtype: 'fp16', stride_h: 2, stride_w: 2, tile_w: 16, waves_m: 2, waves_n: 2 }) },
  { name: 'sm90-split-c-t8x8x32-ck16-w1x4-n4-db', spec: { ...sm90, variant: 'split_c', tile_w: 8, tile_k: 32, ck: 16, waves_m: 1, waves_n: 4, tile_n: 4 } },
  { name: 'gfx950-16x16x32-t8x16x32-w1x4-n2', spec: { ...base, atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 4, tile_n: 2 } },
  { name: 'gfx950-epilogue-silu-bias32-residual', spec: { ...base, epilogue: { act: 'silu', bias: 'fp32', residual: true } } },
  { name: 'gfx942-epilogue-clamp-biasdtype', spec: { ...base, target: 'gfx942', atom: '32x32x8', ck: 16, epilogue: { act: 'clamp', bias: 'dtype', residual: false } } },
  { name: 'sm90-grouped-gm4-epilogue-relu-bias32-residual', spec: { ...sm90, variant: 'grouped', group_merge: 4, tile_w: 16, tile_k: 32, waves_m: 1, epilogue: { act: 'relu', bias: 'fp32', residual: true } } },
  { name: 'sm90a-wgmma-ck64-epilogue-gelu-bias32-residual', spec: wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 16, waves_n: 2, epilogue: { act: 'gelu', bias: 'fp32', residual: true } }) },
  // Channel and output-channel tails, stems, strides 3 and 4, dilation, depthwise-like merges.
  { name: 'gfx950-ctail8-ktail', spec: { ...base, c_tail: 8, k_tail: true } },
  { name: 'gfx950-stem-7x7-s2-ctail1-t4x32x32-w1x4', spec: { ...base, R: 7, S: 7, stride_h: 2, stride_w: 2, pad_h: 3, pad_w: 3, tile_h: 4, ck: 16, tile_k: 32, waves_m: 1, waves_n: 4, c_tail: 1 } },
  { name: 'gfx942-4x4-s4-ck8-ctail1-lp0-t4', spec: { ...base, target: 'gfx942', atom: '32x32x8', R: 4, S: 4, stride_h: 4, stride_w: 4, pad_h: 0, pad_w: 0, tile_h: 4, tile_k: 32, ck: 8, lds_pad: 0, waves_m: 1, c_tail: 1 } },
  { name: 'sm90-dilation2-ctail8-db', spec: { ...sm90, dilation_h: 2, dilation_w: 2, pad_h: 2, pad_w: 2, tile_w: 16, tile_k: 64, ck: 16, c_tail: 8 } },
  { name: 'sm90-3x3-s3-fp16', spec: { ...sm90, dtype: 'fp16', stride_h: 3, stride_w: 3, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1 } },
  { name: 'sm90-grouped-dw3-gm24-ctail1-w1x4', spec: { ...sm90, variant: 'grouped', group_merge: 24, tile_w: 16, tile_k: 16, ck: 16, waves_m: 1, waves_n: 4, c_tail: 1 } },
  { name: 'sm90a-wgmma-ctail8-ktail-dilation2', spec: wgmmaSpec({ dilation_h: 2, dilation_w: 2, pad_h: 2, pad_w: 2, tile_h: 16, waves_n: 2, c_tail: 8, k_tail: true }) },
  // Pointwise: 1x1 as a GEMM over flat pixels (no halo at either stride).
  { name: 'gfx950-pointwise-t16x32x64-ck32-w2x2', spec: pointwiseSpec(base, { tile_h: 16 }) },
  { name: 'gfx950-pointwise-s2-16x16x32-ctail8-ktail', spec: pointwiseSpec(base, { atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 4, stride_h: 2, stride_w: 2, c_tail: 8, k_tail: true }) },
  { name: 'gfx942-pointwise-s2-32x32x8-fp16', spec: pointwiseSpec(base, { target: 'gfx942', atom: '32x32x8', ck: 16, dtype: 'fp16', stride_h: 2, stride_w: 2 }) },
  { name: 'sm90-pointwise-t16x16x64-ck32-w1x4-db', spec: pointwiseSpec(sm90, { tile_h: 16, tile_w: 16, waves_m: 1, waves_n: 4 }) },
  { name: 'sm90a-wgmma-pointwise-t16x8x128-ck64', spec: pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 16, tile_k: 128 })) },
  { name: 'sm90a-wgmma-pointwise-s2-t32x8x128-ck64-w1x2-ctail8-ktail', spec: pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 32, tile_k: 128, waves_n: 2 }), { stride_h: 2, stride_w: 2, c_tail: 8, k_tail: true }) },
  { name: 'sm90a-wgmma-pointwise-t16x8x128-ck64-epilogue-relu-bias32-residual', spec: pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 16, tile_k: 128 }), { epilogue: { act: 'relu', bias: 'fp32', residual: true } }) },
  // Streaming pointwise (persistent workgroups, resident weights): cp.async on sm_90 with a fused epilogue, register prefetch on gfx950 at stride 2 over two resident chunks.
  { name: 'sm90-pointwise-stream-t8x16x128-ck64-w2x4-epilogue-silu-bias32', spec: pointwiseSpec(sm90, { tile_w: 16, tile_k: 128, ck: 64, waves_n: 4, stream: { workgroups: 264, chunks: 1 }, epilogue: { act: 'silu', bias: 'fp32', residual: false } }) },
  { name: 'gfx950-pointwise-stream-s2-t4x32x128-ck32-w2x2', spec: pointwiseSpec(base, { tile_h: 4, tile_k: 128, stride_h: 2, stride_w: 2, stream: { workgroups: 512, chunks: 2 } }) },
  // Tap fold (small C): the S taps along W in the reduction axis, per-wave atoms on every target.
  { name: 'gfx950-fold-stem-7x7-s2-ctail1-t8x32x32-ck32-w1x4', spec: { ...base, R: 7, S: 7, stride_h: 2, stride_w: 2, pad_h: 3, pad_w: 3, tile_k: 32, waves_m: 1, waves_n: 4, c_tail: 1, fold_s: true } },
  { name: 'gfx942-fold-3x3-ctail8-32x32x8-ck8', spec: { ...base, target: 'gfx942', atom: '32x32x8', ck: 8, tile_k: 32, waves_m: 1, c_tail: 8, fold_s: true } },
  { name: 'sm90-fold-stem-7x7-s2-ctail1-t8x16x32-ck16-w2x4-db', spec: { ...sm90, R: 7, S: 7, stride_h: 2, stride_w: 2, pad_h: 3, pad_w: 3, tile_w: 16, tile_k: 32, ck: 16, waves_n: 4, c_tail: 1, fold_s: true } },
  // Whole-map tiles: pixels on the wgmma N side (swizzled rows and planes, one and two warpgroups).
  { name: 'sm90a-wgmma-whole-map-split-c-t4x4x64-ck64-n4', spec: wgmmaSpec({ variant: 'split_c', whole_map: true, tile_h: 4, tile_w: 4, tile_n: 4, ck: 64 }) },
  { name: 'sm90a-wgmma-whole-map-t7x7x128-ck32-w2x1', spec: wgmmaSpec({ whole_map: true, tile_h: 7, tile_w: 7, tile_k: 128, waves_m: 2, ck: 32 }) },
  // Per-tap weight ring: a 16x16 stride-2 tile's 33x33 halo at ck 32 (planes), and swizzled rows with a 2x2 filter, tails and split_c.
  { name: 'sm90a-wgmma-ring-stride2-t16x16x128-ck32-w1x2', spec: wgmmaSpec({ weight_ring: true, stride_h: 2, stride_w: 2, tile_h: 16, tile_w: 16, tile_k: 128, ck: 32, waves_n: 2 }) },
  { name: 'sm90a-wgmma-ring-split-c-2x2-s2-p0-ck64-ctail8-ktail', spec: wgmmaSpec({ weight_ring: true, variant: 'split_c', R: 2, S: 2, stride_h: 2, stride_w: 2, pad_h: 0, pad_w: 0, tile_w: 16, ck: 64, c_tail: 8, k_tail: true }) },
  // Stride 1 on a small map: the ring holds a wgmma N of 128 at ck 64, which all-tap stages cannot.
  { name: 'sm90a-wgmma-ring-split-c-s1-t8x8x128-ck64', spec: wgmmaSpec({ weight_ring: true, variant: 'split_c', ck: 64, tile_k: 128 }) },
  // A whole-map tile streaming its A operand (the weights) per tap: 4x4 maps of 4 images, ck 64.
  { name: 'sm90a-wgmma-whole-map-ring-split-c-t4x4x64-ck64-n4', spec: wgmmaSpec({ weight_ring: true, whole_map: true, variant: 'split_c', tile_h: 4, tile_w: 4, tile_n: 4, ck: 64 }) },
  // Direct-to-LDS weights (gfx950): fragment slots by buffer_load_dwordx4 ... lds into the second stage.
  { name: 'gfx950-lds-dma-db', spec: { ...base, double_buffer: true, lds_dma: true } },
  { name: 'gfx950-pointwise-lds-dma-16x16x32-ctail8-ktail', spec: pointwiseSpec(base, { atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 4, c_tail: 8, k_tail: true, double_buffer: true, lds_dma: true }) },
];

/** The depthwise kernel's pinned configs (depthwise-goldens.json): every target, filter size, stride and multiplier, both dtypes. */
export const DEPTHWISE_GOLDEN_CONFIGS: readonly { readonly name: string; readonly spec: Spec }[] = [
  { name: 'gfx950-depthwise-3x3-t8x16x32-b2x4', spec: depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8 }) },
  { name: 'gfx950-depthwise-7x7-p3-fp16-t8x8x32-b2x4', spec: depthwiseSpec({ R: 7, S: 7, pad_h: 3, pad_w: 3, dtype: 'fp16', tile_h: 8, tile_w: 8, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8 }) },
  { name: 'gfx942-depthwise-5x5-s2-m2-t4x16x32-b2x4', spec: depthwiseSpec({ target: 'gfx942', R: 5, S: 5, pad_h: 2, pad_w: 2, stride_h: 2, stride_w: 2, ck: 4, tile_h: 4, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2 }) },
  { name: 'sm90-depthwise-3x3-t8x16x32-b2x4', spec: depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8 }) },
  { name: 'sm90-depthwise-5x5-s2-m4-fp16-t4x8x64-b2x2', spec: depthwiseSpec({ target: 'sm_90', R: 5, S: 5, pad_h: 2, pad_w: 2, stride_h: 2, stride_w: 2, ck: 2, dtype: 'fp16', tile_h: 4, tile_w: 8, tile_k: 64, waves_m: 2, waves_n: 2 }) },
  { name: 'sm90-depthwise-7x7-p3-t2x14x64-b2x2', spec: depthwiseSpec({ target: 'sm_90', R: 7, S: 7, pad_h: 3, pad_w: 3, tile_h: 2, tile_w: 14, tile_k: 64, waves_m: 2, waves_n: 2 }) },
  // Whole small maps: 7-column row blocks, channels as the parallel axis, a partial last wave (112 threads).
  { name: 'gfx950-depthwise-5x5-whole-map-t7x7x32-b1x7', spec: depthwiseSpec({ R: 5, S: 5, pad_h: 2, pad_w: 2, tile_h: 7, tile_w: 7, tile_k: 32, waves_m: 7, waves_n: 1 }) },
  { name: 'gfx942-depthwise-5x5-s2-whole-map-t7x7x64-b1x7', spec: depthwiseSpec({ target: 'gfx942', R: 5, S: 5, pad_h: 2, pad_w: 2, stride_h: 2, stride_w: 2, tile_h: 7, tile_w: 7, tile_k: 64, waves_m: 7, waves_n: 1 }) },
  { name: 'sm90-depthwise-7x7-p3-whole-map-t8x7x32-b2x7', spec: depthwiseSpec({ target: 'sm_90', R: 7, S: 7, pad_h: 3, pad_w: 3, tile_h: 8, tile_w: 7, tile_k: 32, waves_m: 7, waves_n: 2, lds_pad: 16 }) },
  // Channel tiles fitted to C (not a power of two): 3 vectors (C 72 in three tiles), 9 vectors (C 72 whole).
  { name: 'sm90-depthwise-3x3-t8x28x24-b2x4', spec: depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 28, tile_k: 24, waves_m: 4, waves_n: 2 }) },
  { name: 'gfx950-depthwise-3x3-t14x4x72-b2x4', spec: depthwiseSpec({ tile_h: 14, tile_w: 4, tile_k: 72, waves_m: 4, waves_n: 2 }) },
  // Image tiles: two images per workgroup, the second's halo copied into the other LDS buffer while the first is computed.
  { name: 'sm90-depthwise-3x3-t8x28x24-b2x4-n2', spec: depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 28, tile_k: 24, waves_m: 4, waves_n: 2, tile_n: 2 }) },
  { name: 'gfx950-depthwise-5x5-s2-t4x8x32-b2x2-n2', spec: depthwiseSpec({ R: 5, S: 5, pad_h: 2, pad_w: 2, stride_h: 2, stride_w: 2, tile_h: 4, tile_w: 8, tile_k: 32, waves_m: 2, waves_n: 2, tile_n: 2 }) },
  // Fused: the bias and residual read ahead of the staging.
  { name: 'sm90-depthwise-3x3-t8x16x32-b2x4-epilogue-silu-bias32-residual', spec: depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8, epilogue: { act: 'silu', bias: 'fp32', residual: true } }) },
  { name: 'gfx950-depthwise-3x3-t8x16x32-b2x4-epilogue-relu-bias-residual', spec: depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, waves_n: 2, lds_pad: 8, epilogue: { act: 'relu', bias: 'dtype', residual: true } }) },
];
