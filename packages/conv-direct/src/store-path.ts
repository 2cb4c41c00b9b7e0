/**
 * How a kernel writes its output tile, which sets how many bytes one group of lanes writes
 * contiguously. Every MMA kernel (per-wave MFMA / mma.sync and the sm_90 warpgroup MMA) stages its
 * tile through LDS (fp32 under a fused epilogue, which then runs on each vector) and stores whole
 * 16-byte vectors of a pixel's channels (kernel/staged-store.ts). The staging reuses the mainloop's
 * LDS after the last MMA and never grows it: a tile larger than that LDS is staged in passes of
 * whole row bands. Output-channel tails (k_tail) store straight from the accumulators, one element
 * per lane and pixel, as does a tile no band split fits (and the whole-map warpgroup kernel), and
 * the warpgroup kernel's split_c tile, whose fp32 channel pairs already fill whole sectors.
 */
import { ELEMENT_BYTES } from './problem.js';
import { specGeometry, streamLds, wgmmaLds, type Spec } from './spec.js';
import { isWarpgroupAtom } from './targets.js';
import { WORKSPACE_ELEMENT_BYTES } from './validate.js';

/** Bytes of one output element as the conv kernel stores it (split_c: fp32 partial sums). */
export function outputElementBytes(spec: Spec): number {
  return spec.variant === 'split_c' ? WORKSPACE_ELEMENT_BYTES : ELEMENT_BYTES;
}

/**
 * Bytes of one element of the LDS output tile: the stored element, or fp32 under a fused epilogue
 * (it runs on the staged values after the LDS read, so the accumulators are rounded once).
 */
export function stagedElementBytes(spec: Spec): number {
  return spec.epilogue ? WORKSPACE_ELEMENT_BYTES : outputElementBytes(spec);
}

/** Elements between staged output pixels in LDS: tile_k plus one 16-byte vector against bank conflicts. */
export function stagedOutputStride(spec: Spec): number {
  return spec.tile_k + 16 / stagedElementBytes(spec);
}

/**
 * How a kernel stages its output tile: `passes` bands of the tile's virtual rows (tile_n images of
 * tile_h rows), each band holding `rowsPerOwner / passes` of every row owner's rows, where an owner
 * is a wave (per-wave MMA: `rowsPerWave` rows) or, for the warpgroup MMA, the whole tile (its
 * m-blocks are 8x8 pixels, so one band). `bytes` is the LDS of one band.
 */
export interface OutputStaging {
  readonly passes: number;
  readonly rowsPerOwner: number;
  readonly bytes: number;
}

/**
 * The staging of the spec's output tile, or undefined when it stores directly: output-channel
 * tails (a tail vector is not 16 bytes), whole-map warpgroup tiles (they store their own
 * fragments), depthwise (its own kernel), warpgroup tiles whose fragment store already fills
 * whole sectors (split_c: {@link fragmentStoreFillsSectors}), and tiles whose fewest bands still
 * exceed the mainloop's LDS.
 */
export function outputStaging(spec: Spec): OutputStaging | undefined {
  if (spec.k_tail || spec.whole_map || spec.variant === 'depthwise' || fragmentStoreFillsSectors(spec)) return undefined;
  const g = specGeometry(spec);
  const rowsPerOwner = isWarpgroupAtom(spec.atom) ? spec.tile_n * spec.tile_h : g.rowsPerWave;
  const owners = (spec.tile_n * spec.tile_h) / rowsPerOwner;
  const rowBytes = stagedElementBytes(spec) * spec.tile_w * stagedOutputStride(spec);
  const banded = !isWarpgroupAtom(spec.atom);
  // The warpgroup kernel's window starts at its first 1 KiB boundary: the slack before it is not usable.
  // A streaming spec stages its tile in a region of its own (spec.ts `streamLds`), in one band.
  const usable = spec.stream ? streamLds(spec).outBytes : g.ldsBytes - (banded ? 0 : wgmmaLds(spec).alignSlack);
  for (let passes = 1; passes <= (banded ? rowsPerOwner : 1); passes++) {
    if (rowsPerOwner % passes !== 0) continue;
    const bytes = rowBytes * owners * (rowsPerOwner / passes);
    if (bytes <= usable) return { passes, rowsPerOwner, bytes };
  }
  return undefined;
}

/** Bytes of one global-memory sector: the unit a store's lanes fill whole or waste part of. */
export const STORE_SECTOR_BYTES = 32;

/**
 * Whether the warpgroup MMA's own fragment store already writes whole sectors: its four lanes of a
 * pixel hold 8 adjacent channels as pairs, contiguous in NHWK, so the run is 8 elements — 32 bytes
 * (a sector) for split_c's fp32 partial sums, 16 (half of one) for a bf16/fp16 output. Staging a
 * tile whose direct store is already sector-whole only adds two barriers and an LDS round trip
 * between the last MMA and the stores. (The per-wave MMA builders keep staging: their lanes map
 * to channels differently on each atom.)
 */
export function fragmentStoreFillsSectors(spec: Spec): boolean {
  return isWarpgroupAtom(spec.atom) && 8 * outputElementBytes(spec) >= STORE_SECTOR_BYTES;
}

/** Whether the kernel stages its output tile through LDS (see {@link outputStaging}). */
export function stagesOutputInLds(spec: Spec): boolean {
  return outputStaging(spec) !== undefined;
}

/** Contiguous output bytes one store instruction's lanes write per pixel. */
export function outputStoreRun(spec: Spec): number {
  const e = outputElementBytes(spec);
  if (spec.variant === 'depthwise') return Math.min(spec.tile_k, 64) * e;
  return stagesOutputInLds(spec) ? Math.min(spec.tile_k, 64) * e : 8 * e;
}

/**
 * The store run the cost model charges. The H200 rows its coefficients are fitted on
 * (ranker/h200-rows.json) timed kernels in which the warpgroup MMA stored channel pairs and a
 * per-wave tile larger than the mainloop LDS stored directly; the model charges those kernels'
 * store until the rows are re-measured with the staged store and refitted, so its coefficients
 * stay the fit of its rows (ranker/fit.test.ts).
 */
export function fittedStoreRun(spec: Spec): number {
  const e = outputElementBytes(spec);
  if (spec.variant === 'depthwise') return Math.min(spec.tile_k, 64) * e;
  if (isWarpgroupAtom(spec.atom)) return 8 * e;
  return outputStaging(spec)?.passes === 1 ? Math.min(spec.tile_k, 64) * e : 8 * e;
}
