/**
 * Workgroup-id decode: the flat grid is spatial cells (w tiles x h tiles x
 * image tiles of tile_n images) times output-channel tiles, the channel tile varying fastest inside a super-tile of
 * `swizzle_wgm` channel tiles. On AMD an optional chiplet remap first makes `chunk` consecutive
 * logical workgroups land on one XCD (hardware deals workgroups round-robin over `num_xcds`).
 * Tile counts are runtime values computed from the kernargs, so one binary serves every shape.
 */
import type { Builder, Target, Value } from '@rocke/ir';
import type { Spec } from '../spec.js';

/** Pure model of the decode, for tests and host tools: the (kTile, cell) of workgroup `wgid`. */
export function decodeWorkgroup(
  wgid: number,
  kTiles: number,
  cells: number,
  o: { wgm: number; chiplet: { xcds: number; chunk: number } | null },
): { kTile: number; cell: number } {
  let id = wgid;
  if (o.chiplet) id = chipletRemap(id, kTiles * cells, o.chiplet.xcds, o.chiplet.chunk);
  const span = o.wgm * cells;
  const group = Math.floor(id / span);
  const firstM = group * o.wgm;
  const size = Math.min(kTiles - firstM, o.wgm);
  const local = id % span;
  return { kTile: firstM + (local % size), cell: Math.floor(local / size) };
}

/**
 * Pure model of a spatial cell's place: cells are `perImage` spatial tiles per image tile, image
 * tiles of `tileN` images; the cell's spatial tile and the first image of its tile.
 */
export function decodeCell(cell: number, perImage: number, tileN: number): { spatial: number; image: number } {
  return { spatial: cell % perImage, image: Math.floor(cell / perImage) * tileN };
}

/** Spatial cells of a launch: spatial tiles per image times ceil(N / tileN) image tiles. */
export function cellCount(perImage: number, N: number, tileN: number): number {
  return perImage * Math.ceil(N / tileN);
}

/** Chiplet remap of one id: whole blocks of `xcds*chunk` ids are permuted, the tail keeps its ids. */
export function chipletRemap(wgid: number, total: number, xcds: number, chunk: number): number {
  const block = xcds * chunk;
  const limit = Math.floor(total / block) * block;
  if (wgid >= limit) return wgid;
  const xcd = wgid % xcds;
  const local = Math.floor(wgid / xcds);
  return Math.floor(local / chunk) * block + xcd * chunk + (local % chunk);
}

/** IR twin of {@link decodeWorkgroup}; all values i32, ids unsigned. */
export function emitDecodeWorkgroup(
  b: Builder,
  wgid: Value,
  kTiles: Value,
  cells: Value,
  o: { wgm: number; chiplet: { xcds: number; chunk: number } | null },
): { kTile: Value; cell: Value } {
  let id = wgid;
  if (o.chiplet) {
    const block = o.chiplet.xcds * o.chiplet.chunk;
    const total = b.mul(kTiles, cells, 'wg.total');
    const limit = b.mul(b.udiv(total, block), block, 'wg.limit');
    const xcd = b.urem(wgid, o.chiplet.xcds);
    const local = b.udiv(wgid, o.chiplet.xcds);
    const remapped = b.add(b.add(b.mul(b.udiv(local, o.chiplet.chunk), block), b.mul(xcd, o.chiplet.chunk)), b.urem(local, o.chiplet.chunk));
    id = b.select(b.icmp('ult', wgid, limit), remapped, wgid, 'wg.remapped');
  }
  const span = b.mul(cells, o.wgm, 'wg.span');
  const group = b.udiv(id, span);
  const firstM = b.mul(group, o.wgm);
  const size = b.umin(b.sub(kTiles, firstM), o.wgm, 'wg.gsize');
  const local = b.urem(id, span);
  return { kTile: b.add(firstM, b.urem(local, size), 'k.tile'), cell: b.udiv(local, size, 'cell') };
}

/** Where a workgroup's tile sits: its channel tile, split slice (split_c), image, and output and input origins. */
export interface TileOrigin {
  readonly kTile: Value;
  readonly splitIdx: Value | undefined;
  /** The tile's first image (its tile_n images are image .. image + tile_n - 1, those < N real). */
  readonly image: Value;
  readonly oh0: Value;
  readonly ow0: Value;
  readonly ih0: Value;
  readonly iw0: Value;
  /** Windowed tiles have no flat pixel run (see {@link PixelTileOrigin}). */
  readonly flat?: undefined;
}

/** A pointwise tile: `tile_h * tile_w` consecutive pixels of the flat output index N·Ho·Wo. */
export interface FlatPixels {
  /** The tile's first flat pixel. */
  readonly p0: Value;
  /** N·Ho·Wo: flat pixels at or past it are outside the launch. */
  readonly pixels: Value;
}

/** Where a pointwise workgroup's tile sits: its channel tile and its run of flat pixels (no split, no window). */
export interface PixelTileOrigin {
  readonly kTile: Value;
  readonly splitIdx: undefined;
  readonly flat: FlatPixels;
}

/** A pointwise launch's flat pixels N·Ho·Wo and its cells of `tile_h · tile_w` of them. */
function emitPixelCells(b: Builder, spec: Spec): { tilePixels: number; pixels: Value; cells: Value } {
  const tilePixels = spec.tile_h * spec.tile_w;
  const pixels = b.mul(b.mul(b.arg('N'), b.arg('Ho')), b.arg('Wo'), 'pixels');
  return { tilePixels, pixels, cells: b.udiv(b.add(pixels, tilePixels - 1), tilePixels, 'cells') };
}

/**
 * The pointwise grid decode: ceil(N·Ho·Wo / tile pixels) cells of flat pixels times the
 * output-channel tiles, through {@link emitDecodeWorkgroup} as the windowed tiles are.
 */
export function emitPixelTileOrigin<T extends { readonly kTiles: Value }>(b: Builder, t: Target, spec: Spec, channelTiles: () => T): T & PixelTileOrigin {
  const { tilePixels, pixels, cells } = emitPixelCells(b, spec);
  const channels = channelTiles();
  const chiplet = t.vendor === 'amd' && spec.chiplet_swizzle ? { xcds: spec.num_xcds, chunk: spec.chiplet_chunk } : null;
  const { kTile, cell } = emitDecodeWorkgroup(b, t.workgroupId(b, 'x'), channels.kTiles, cells, { wgm: spec.swizzle_wgm, chiplet });
  return { ...channels, kTile, splitIdx: undefined, flat: { p0: b.mul(cell, tilePixels, 'p0'), pixels } };
}

/**
 * The kernels' grid decode: spatial tile counts from the kernargs, then the channel-tile count
 * from `channelTiles` (which may return more values its caller needs later), the split index as
 * the slowest axis for split_c (each split's workgroups form one contiguous dense grid), then
 * {@link emitDecodeWorkgroup} and the tile's origin in the output and the (padded) input.
 */
export function emitTileOrigin<T extends { readonly kTiles: Value }>(b: Builder, t: Target, spec: Spec, channelTiles: () => T): T & TileOrigin {
  const nWt = b.udiv(b.add(b.arg('Wo'), spec.tile_w - 1), spec.tile_w, 'w.tiles');
  const nHt = b.udiv(b.add(b.arg('Ho'), spec.tile_h - 1), spec.tile_h, 'h.tiles');
  const channels = channelTiles();
  const perImage = b.mul(nWt, nHt, 'cells.per.image');
  // tile_n 1 keeps the one-image decode as it was (no ceil-div, no multiply), so its IR is unchanged.
  const nTiles = spec.tile_n !== 1 ? b.udiv(b.add(b.arg('N'), spec.tile_n - 1), spec.tile_n, 'n.tiles') : b.arg('N');
  const cells = b.mul(perImage, nTiles, 'cells');
  let wgid = t.workgroupId(b, 'x');
  let splitIdx: Value | undefined;
  if (spec.variant === 'split_c') {
    const perSplit = b.mul(cells, channels.kTiles, 'wg.per.split');
    splitIdx = b.udiv(wgid, perSplit, 'split');
    wgid = b.urem(wgid, perSplit, 'wg.in.split');
  }
  const chiplet = t.vendor === 'amd' && spec.chiplet_swizzle ? { xcds: spec.num_xcds, chunk: spec.chiplet_chunk } : null;
  const { kTile, cell } = emitDecodeWorkgroup(b, wgid, channels.kTiles, cells, { wgm: spec.swizzle_wgm, chiplet });
  const image = spec.tile_n !== 1 ? b.mul(b.udiv(cell, perImage, 'n.tile'), spec.tile_n, 'n') : b.udiv(cell, perImage, 'n');
  const st = b.urem(cell, perImage);
  const wTile = b.urem(st, nWt, 'w.tile');
  const hTile = b.udiv(st, nWt, 'h.tile');
  const oh0 = b.mul(hTile, spec.tile_h, 'oh0');
  const ow0 = b.mul(wTile, spec.tile_w, 'ow0');
  const ih0 = b.sub(b.mul(oh0, spec.stride_h), spec.pad_h, 'ih0');
  const iw0 = b.sub(b.mul(ow0, spec.stride_w), spec.pad_w, 'iw0');
  return { ...channels, kTile, splitIdx, image, oh0, ow0, ih0, iw0 };
}

/** Where a streaming pointwise workgroup starts: its channel tile, its first pixel tile, the stride between its tiles and how many it computes. */
export interface StreamOrigin {
  readonly kTile: Value;
  /** The workgroup's first pixel tile (its slot), the pixel tiles between its tiles, and its tile count. */
  readonly slot: Value;
  readonly slots: Value;
  readonly tiles: Value;
  /** N·Ho·Wo. */
  readonly pixels: Value;
}

/**
 * The streaming pointwise decode (pointwise.ts `streamSlots`, in IR): slots = min(cells,
 * max(1, workgroups / kTiles)) workgroups per channel tile, decoded as a grid of slots x channel
 * tiles by {@link emitDecodeWorkgroup}; slot s computes pixel tiles s, s + slots, ... below cells.
 */
export function emitStreamOrigin<T extends { readonly kTiles: Value }>(b: Builder, t: Target, spec: Spec, channelTiles: () => T): T & StreamOrigin {
  const { tilePixels, pixels, cells } = emitPixelCells(b, spec);
  const channels = channelTiles();
  const perK = b.umax(b.udiv(b.i32(spec.stream!.workgroups), channels.kTiles), 1, 'stream.per.k');
  const slots = b.umin(cells, perK, 'stream.slots');
  const chiplet = t.vendor === 'amd' && spec.chiplet_swizzle ? { xcds: spec.num_xcds, chunk: spec.chiplet_chunk } : null;
  const { kTile, cell: slot } = emitDecodeWorkgroup(b, t.workgroupId(b, 'x'), channels.kTiles, slots, { wgm: spec.swizzle_wgm, chiplet });
  const tiles = b.udiv(b.add(b.sub(cells, slot), b.sub(slots, 1)), slots, 'stream.tiles');
  return { ...channels, kTile, slot, slots, tiles, pixels };
}
