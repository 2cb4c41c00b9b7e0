/**
 * How a kernel writes its output tile, which sets how many bytes one group of lanes writes
 * contiguously: the MMA kernel stages its tile through LDS (fp32 under a fused epilogue, which then
 * runs on each vector) and stores whole 16-byte vectors of 8 channels; output-channel tails or a
 * tile larger than the LDS store straight from the accumulators (one element per lane and pixel),
 * as does a fused epilogue there; the warpgroup kernel stores its
 * accumulators' channel pairs (four lanes cover 8 channels of a pixel).
 */
import { ELEMENT_BYTES } from './problem.js';
import { specGeometry, type Spec } from './spec.js';
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

/** Whether the per-wave MMA kernel stages its output tile through LDS (no tails, the tile fits). */
export function stagesOutputInLds(spec: Spec): boolean {
  const tileBytes = stagedElementBytes(spec) * spec.tile_n * spec.tile_h * spec.tile_w * stagedOutputStride(spec);
  return !spec.k_tail && tileBytes <= specGeometry(spec).ldsBytes;
}

/** Contiguous output bytes one store instruction's lanes write per pixel. */
export function outputStoreRun(spec: Spec): number {
  const e = outputElementBytes(spec);
  if (spec.variant === 'depthwise') return Math.min(spec.tile_k, 64) * e;
  if (isWarpgroupAtom(spec.atom)) return 8 * e;
  return stagesOutputInLds(spec) ? Math.min(spec.tile_k, 64) * e : 8 * e;
}
