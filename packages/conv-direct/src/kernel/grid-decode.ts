/**
 * Workgroup-id decode (rocke-notes §2.8): the flat grid is spatial cells (w tiles x h tiles x
 * images) times output-channel tiles, the channel tile varying fastest inside a super-tile of
 * `swizzle_wgm` channel tiles. On AMD an optional chiplet remap first makes `chunk` consecutive
 * logical workgroups land on one XCD (hardware deals workgroups round-robin over `num_xcds`).
 * Tile counts are runtime values computed from the kernargs, so one binary serves every shape.
 */
import type { Builder, Value } from '@rocke/ir';

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
