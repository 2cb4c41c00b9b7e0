/**
 * The staging of a tap-folded spec (`fold_s`): the filter's S taps along W folded into the
 * reduction axis, element q = s·C + c of output column w reading x[h, w·stride_w + s·dilation_w −
 * pad_w, c]. The LDS tile then holds, per halo row and output column, one pixel of S·C elements
 * (zero past S·C and where the tap's column is padding), and the MMA loop is that of an R x 1
 * filter over it (`stagedSpec`). The weights need nothing of their own: in KRSC, w[k, r, s, c]
 * sits at (k·R + r)·S·C + q, so a folded weight row is the S·C elements after (k, r).
 */
import { type Builder, type Value } from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import type { Spec, SpecGeometry } from '../spec.js';
import { emitHaloPosition, SENTINEL_OFFSET, type BuildMutation, type HaloPosition, type KernelArgs } from './open.js';

/** A staged row's column origin when the row is padding, past the batch or past the tile: every tap's column is then >= W. */
const OFF_MAP_COLUMN = 0x40000000;

/** What one folded staging vector keeps across chunks (hoisted). */
export interface FoldedSlot {
  /** Element offset in x of (image, ih, column origin, channel 0): the run's element is this + s·dilation_w·x_stride_w + c. */
  readonly base: Value;
  /** Input column of tap s = 0 for the vector's output column (may be negative), or {@link OFF_MAP_COLUMN}. */
  readonly iw: Value;
  /** The vector's first element on the folded axis at chunk 0 (8 per vector). */
  readonly q0: Value;
}

/**
 * Staging vector `v` of a folded tile: its position (LDS pixel `pos` is output column `col` of halo
 * row `row`, the folded geometry having no halo along W) and its hoisted source.
 */
export function emitFoldedSource(
  b: Builder,
  args: KernelArgs,
  spec: Spec,
  g: SpecGeometry,
  o: { v: Value; j: number; image: Value; ih0: Value; ow0: Value; inTile: () => Value | undefined },
): HaloPosition & { fold: FoldedSlot; inTile: Value | undefined } {
  const at = emitHaloPosition(b, spec, g, o);
  let valid = b.icmp('ult', at.ih, args.H);
  if (spec.tile_n !== 1) valid = b.and(valid, b.icmp('ult', at.image, args.N));
  const inTile = o.inTile();
  if (inTile) valid = b.and(valid, inTile);
  const origin = b.sub(b.mul(b.add(o.ow0, at.col), spec.stride_w), spec.pad_w);
  const iw = b.select(valid, origin, OFF_MAP_COLUMN, `x.fold.iw${o.j}`);
  const base = b.add(b.add(b.mul(at.image, args.x_stride_n), b.mul(at.ih, args.x_stride_h)), b.mul(iw, args.x_stride_w), `x.fold.base${o.j}`);
  return { ...at, inTile, fold: { base, iw, q0: b.mul(at.cv, 8, `x.fold.q${o.j}`) } };
}

/**
 * Byte offset of run `p` (c_tail elements) of a folded vector at `chunk`, or the sentinel when the
 * run is past the folded axis (`end` = S·C) or its tap's column is outside the map. Runs never
 * straddle two taps: C is a multiple of c_tail.
 */
export function emitFoldedRunOffset(b: Builder, args: KernelArgs, spec: Spec, slot: FoldedSlot, chunk: Value, p: number, end: Value, mutation?: BuildMutation): Value {
  // The chunk's part first, so no per-run invariant (q0 + p·c_tail) is hoisted out of the channel loop.
  const q0 = b.add(b.mul(chunk, spec.ck), slot.q0);
  const q = p === 0 ? q0 : b.add(q0, p * spec.c_tail);
  const s = mutation?.transposeTapFold ? b.urem(q, spec.S) : b.udiv(q, args.C);
  const c = mutation?.transposeTapFold ? b.udiv(q, spec.S) : b.sub(q, b.mul(s, args.C));
  const tapColumns = spec.dilation_w === 1 ? s : b.mul(s, spec.dilation_w);
  const live = b.and(b.icmp('ult', b.add(slot.iw, tapColumns), args.W), b.icmp('ult', q, end));
  const elem = b.add(b.add(slot.base, b.mul(tapColumns, args.x_stride_w)), c);
  return b.select(live, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET);
}
