/**
 * Workgroup counts of one launch. The kernels decode a flat 1-D grid of spatial cells (x image
 * tiles of tile_n images) x channel tiles (x splits for split_c), recomputing the tile counts
 * from the kernargs.
 */
import type { Problem } from './problem.js';
import { outputExtent } from './problem.js';
import { pointwisePixelTiles, streamSlots } from './pointwise.js';
import type { Spec } from './spec.js';

/** Tile counts and the flat workgroup count of one launch. */
export interface LaunchGrid {
  /**
   * Tiles along Wo (pointwise: tiles of the flat N·Ho·Wo pixels, with hTiles and nTiles 1;
   * streaming: the workgroups per channel tile, each looping over every wTiles-th pixel tile).
   */
  readonly wTiles: number;
  readonly hTiles: number;
  /** Output-channel tiles per image (grouped: summed over the merged groups). */
  readonly kTiles: number;
  readonly splits: number;
  /** Image tiles: ceil(N / tile_n). */
  readonly nTiles: number;
  /** wTiles * hTiles * nTiles * kTiles * splits. */
  readonly workgroups: number;
}

/**
 * The grid of `spec` over `problem` with `splits` channel slices (1 unless split_c). Assumes
 * the positivity checks of `validate()` passed.
 */
export function launchGrid(spec: Spec, problem: Problem, splits = 1): LaunchGrid {
  if (spec.variant === 'pointwise') {
    const pixelTiles = pointwisePixelTiles(spec, problem);
    const kTiles = Math.ceil(problem.K / spec.tile_k);
    // Streaming: persistent workgroups, each looping over pixel tiles (see streamSlots).
    if (spec.stream) {
      const slots = streamSlots(spec.stream.workgroups, pixelTiles, kTiles);
      return { wTiles: slots, hTiles: 1, kTiles, splits, nTiles: 1, workgroups: slots * kTiles * splits };
    }
    return { wTiles: pixelTiles, hTiles: 1, kTiles, splits, nTiles: 1, workgroups: pixelTiles * kTiles * splits };
  }
  const Ho = outputExtent(problem.H, problem.R, problem.strideH, problem.padH, problem.dilationH);
  const Wo = outputExtent(problem.W, problem.S, problem.strideW, problem.padW, problem.dilationW);
  const wTiles = Math.ceil(Wo / spec.tile_w);
  const hTiles = Math.ceil(Ho / spec.tile_h);
  let kTiles: number;
  if (spec.variant === 'grouped') {
    const gm = spec.group_merge;
    const kpg = problem.K / problem.groups;
    kTiles = (problem.groups / gm) * Math.ceil((gm * kpg) / spec.tile_k);
  } else {
    kTiles = Math.ceil(problem.K / spec.tile_k);
  }
  const nTiles = Math.ceil(problem.N / spec.tile_n);
  return { wTiles, hTiles, kTiles, splits, nTiles, workgroups: wTiles * hTiles * nTiles * kTiles * splits };
}
