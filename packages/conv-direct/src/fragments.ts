/**
 * LDS operand fragments the MMA kernels read per MMA: the reuse a tile shape buys (the cost model's
 * LDS term, and a tie-break of the bench order).
 */
import { haloExtent, specGeometry, stagedSpec, type Spec } from './spec.js';

/**
 * LDS fragment loads per MMA of one wave and channel chunk, as the kernel issues them: per filter
 * column and k-atom, `(rows-1)·stride + R` activation rows per band of the wave's rows in one image
 * (each one load per column block) shared by the R taps, and one weight fragment per m tile and
 * tap; over `R·mTiles·rows·colBlocks` MMAs.
 */
export function fragmentLoadsPerMma(kernelSpec: Spec): number {
  const spec = stagedSpec(kernelSpec);
  const g = specGeometry(spec);
  const inRows = g.waveImages * haloExtent(g.bandRows, spec.stride_h, spec.R, spec.dilation_h);
  const loads = inRows * g.colBlocks + spec.R * g.mTilesPerWave;
  return loads / (spec.R * g.mTilesPerWave * g.rowsPerWave * g.colBlocks);
}
