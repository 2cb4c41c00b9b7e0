/**
 * The pointwise variant on the host side: which problems it serves, its spec rules (with reasons),
 * its candidate grid and its tile model. In NHWC a 1x1 conv with no padding is a GEMM
 * [N·Ho·Wo pixels x C] x [C x K]: the kernel tiles the flat pixel index instead of an h x w
 * window, so no tile stages a halo (stride 2 gathers every other input pixel by address) and no
 * tile computes pixels past a map's edge (7x7 and 14x14 maps pad only the batch's last tile). The
 * kernels are the dense MMA builders with flat-pixel addressing (kernel/pixels.ts); the LDS layout
 * is that of a 1x1 stride-1 tile (see `stagedSpec`).
 */
import type { Problem } from './problem.js';
import { outputExtent } from './problem.js';
import type { Spec } from './spec.js';
import { isWarpgroupAtom } from './targets.js';

/** True when `p` is a conv the pointwise variant serves: 1x1, no padding, no dilation, one group. */
export function isPointwiseProblem(p: Problem): boolean {
  return p.R === 1 && p.S === 1 && p.padH === 0 && p.padW === 0 && p.dilationH === 1 && p.dilationW === 1 && p.groups === 1;
}

/** Why a pointwise spec is invalid on its own (the MMA tile rules it shares with dense are validate()'s), or null. */
export function pointwiseSpecReason(s: Spec): string | null {
  if (s.R !== 1 || s.S !== 1) return `the pointwise variant is a 1x1 conv (got filter ${s.R}x${s.S})`;
  if (s.pad_h !== 0 || s.pad_w !== 0) return `the pointwise variant takes no padding (got ${s.pad_h}x${s.pad_w}): padded 1x1 pixels read zeros a flat GEMM has no rows for`;
  if (s.dilation_h !== 1 || s.dilation_w !== 1) return `dilation ${s.dilation_h}x${s.dilation_w} means nothing for a 1x1 filter: pointwise specs use 1x1`;
  if (s.tile_n !== 1) return `tile_n ${s.tile_n}: a pointwise tile already spans images (flat pixels over N·Ho·Wo); use 1`;
  return null;
}

/** Output pixels of a pointwise tile: tile_h rows of tile_w consecutive flat pixels. */
export function pointwiseTilePixels(s: Spec): number {
  return s.tile_h * s.tile_w;
}

/** Flat output pixels of a problem, N·Ho·Wo: the GEMM's M. */
export function pointwisePixels(p: Problem): number {
  return p.N * outputExtent(p.H, p.R, p.strideH, p.padH, p.dilationH) * outputExtent(p.W, p.S, p.strideW, p.padW, p.dilationW);
}

/** Pixel tiles of a launch: ceil(N·Ho·Wo / tile pixels). */
export function pointwisePixelTiles(s: Spec, p: Problem): number {
  return Math.ceil(pointwisePixels(p) / pointwiseTilePixels(s));
}

/** Useful pixels over the pixels the tiles compute: only the batch's last tile pads. */
export function pointwisePixelUtilization(s: Spec, p: Problem): number {
  const pixels = pointwisePixels(p);
  return pixels / (pointwisePixelTiles(s, p) * pointwiseTilePixels(s));
}

/**
 * The pointwise tiles of a dense grid (built for the 1x1 capability with no fitted widths): the
 * tile width only lays the flat pixels out in rows, so one width per atom is enough — wgmma's
 * m-block width (8: each m-block is 64 consecutive pixels) and one width unit of the per-wave
 * atoms — and the tile heights give the pixel counts (64 to 256 for wgmma; 2 to 16 rows of the
 * width unit for the others, 32 to 512 pixels). The ranking then weighs them by the problem's pixel
 * count (last-tile padding, grid fill) and the residency model.
 */
export function pointwiseTiles(dense: readonly Spec[], unit: (s: Spec) => number): Spec[] {
  return dense.filter((s) => s.tile_w === (isWarpgroupAtom(s.atom) ? 8 : unit(s))).map((s) => ({ ...s, variant: 'pointwise' as const }));
}

/**
 * Streaming (`stream`): workgroups per output-channel tile. The spec's workgroups (the machine's
 * resident slots when the candidate grid made it) are shared over the channel tiles, at least one
 * each and at most one per pixel tile; workgroup s of a channel tile computes pixel tiles s,
 * s + slots, s + 2·slots, ... The kernel computes the same from its kernargs (grid-decode.ts).
 */
export function streamSlots(workgroups: number, pixelTiles: number, kTiles: number): number {
  return Math.min(pixelTiles, Math.max(1, Math.floor(workgroups / kTiles)));
}

/** Pixel tiles the busiest workgroup computes: 1 unless streaming. */
export function streamTilesPerWorkgroup(s: Spec, p: Problem): number {
  if (!s.stream) return 1;
  const pixelTiles = pointwisePixelTiles(s, p);
  return Math.ceil(pixelTiles / streamSlots(s.stream.workgroups, pixelTiles, Math.ceil(p.K / s.tile_k)));
}
