/**
 * Flat-pixel addressing of the pointwise (1x1) kernels, shared by the MMA builders (mma.ts,
 * wgmma.ts): a tile is tile_h rows of tile_w consecutive pixels of the flat output index
 * p = (n·Ho + oh)·Wo + ow, so tile pixel (row, col) is p0 + row·tile_w + col. Staging gathers
 * each pixel's input at its strided position (n, oh·stride_h, ow·stride_w) — one pixel per LDS
 * row, no halo — and the stores write y as the [N·Ho·Wo, K] matrix its packed strides describe
 * (`kernargValues` passes packed strides for x and y; at stride 1 x is the [N·H·W, C] matrix).
 */
import type { Builder, Value } from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import type { Spec, SpecGeometry } from '../spec.js';
import type { FlatPixels } from './grid-decode.js';
import { SENTINEL_OFFSET, type HaloSource, type KernelArgs } from './open.js';

/**
 * Where staging vector `v` of a pointwise tile comes from (8 channels per vector, channel vector
 * fastest, then the tile's pixels in order): the flat pixel's input in x, or the sentinel past the
 * launch's pixels or past the tile. `spec` is the kernel's own spec (its strides gather); `g` the
 * staged geometry, whose rows are tile_w pixels wide.
 */
export function emitPixelSource(
  b: Builder,
  args: KernelArgs,
  spec: Spec,
  g: SpecGeometry,
  o: { v: Value; j: number; flat: FlatPixels; cStart: Value; inTile: () => Value | undefined },
): HaloSource & { cv: Value; pos: Value; inTile: Value | undefined } {
  const cv = b.urem(o.v, g.xChannelVectors);
  const pos = b.udiv(o.v, g.xChannelVectors);
  const col = b.urem(pos, g.ldsInW);
  const row = b.udiv(pos, g.ldsInW);
  const p = b.add(o.flat.p0, pos, `x.pixel${o.j}`);
  let valid = b.icmp('ult', p, o.flat.pixels);
  const inTile = o.inTile();
  if (inTile) valid = b.and(valid, inTile);
  const elem = b.add(emitInputPixel(b, args, spec, p), b.add(b.mul(cv, 8), o.cStart));
  const global = b.select(valid, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET, `x.goff${o.j}`);
  return { global, row, col, cv, pos, inTile };
}

/**
 * The first element of x that flat output pixel `p` reads. Stride 1: x's packed strides make the
 * flat index its row too (H = Ho, W = Wo), so p · x_stride_w, no division. Larger strides: the
 * pixel's image, output row and column (two divisions, once per staging slot, outside the channel
 * loop), its input stride pixels apart along each axis.
 */
function emitInputPixel(b: Builder, args: KernelArgs, spec: Spec, p: Value): Value {
  if (spec.stride_h === 1 && spec.stride_w === 1) return b.mul(p, args.x_stride_w);
  const perImage = b.mul(args.Ho, args.Wo);
  const n = b.udiv(p, perImage);
  const inImage = b.urem(p, perImage);
  const oh = b.udiv(inImage, args.Wo);
  const ow = b.urem(inImage, args.Wo);
  return b.add(b.add(b.mul(n, args.x_stride_n), b.mul(b.mul(oh, spec.stride_h), args.x_stride_h)), b.mul(b.mul(ow, spec.stride_w), args.x_stride_w));
}

/**
 * The output pixel `offset` pixels into a pointwise tile: whether it is inside the launch, and
 * its first element of y (channel 0). y's pixels are y_stride_w apart: its packed strides make the
 * flat index its row.
 */
export function emitPixelOutput(b: Builder, args: KernelArgs, flat: FlatPixels, offset: Value | number): { ok: Value; elem: Value } {
  const p = b.add(flat.p0, offset, 'out.pixel');
  return { ok: b.icmp('ult', p, flat.pixels), elem: b.mul(p, args.y_stride_w) };
}
