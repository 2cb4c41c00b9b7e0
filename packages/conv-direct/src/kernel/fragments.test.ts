import { gfx942, gfx950, sm_90 } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { activationCoord, isLaneContiguous, matrixOrigins, outputCoord, vectorRuns, weightCoord } from './fragments.js';

describe('fragment load plans from atom layouts', () => {
  it('AMD MFMA operands are one aligned vector run per lane', () => {
    for (const atom of [...gfx950.atoms, ...gfx942.atoms]) {
      const n = atom.bType.count;
      expect(vectorRuns(activationCoord(atom), 64, n, 8)).toEqual([{ start: 0, length: n }]);
      expect(isLaneContiguous(weightCoord(atom), 64, atom.aType.count)).toBe(true);
      expect(matrixOrigins(activationCoord(atom), 64, n)).toBeNull();
    }
  });

  it('AMD accumulators store 4 consecutive output channels per run', () => {
    expect(vectorRuns(outputCoord(gfx950.atom('16x16x32.bf16')), 64, 4, 8)).toEqual([{ start: 0, length: 4 }]);
    expect(vectorRuns(outputCoord(gfx950.atom('32x32x16.bf16')), 64, 16, 8)).toEqual([0, 4, 8, 12].map((start) => ({ start, length: 4 })));
  });

  it('mma.sync operands are ldmatrix tiles: A = 4 tiles (rows 0/8, channels 0/8), B = 2 tiles (channels 0/8)', () => {
    const atom = sm_90.atom('16x8x16.bf16');
    expect(matrixOrigins(weightCoord(atom), 32, 8)).toEqual([
      { strided: 0, contig: 0 },
      { strided: 8, contig: 0 },
      { strided: 0, contig: 8 },
      { strided: 8, contig: 8 },
    ]);
    expect(matrixOrigins(activationCoord(atom), 32, 4)).toEqual([
      { strided: 0, contig: 0 },
      { strided: 0, contig: 8 },
    ]);
    // Accumulator pairs are adjacent pixels, not adjacent channels: one element per store.
    expect(vectorRuns(outputCoord(atom), 32, 4, 8)).toEqual([0, 1, 2, 3].map((start) => ({ start, length: 1 })));
    expect(isLaneContiguous(weightCoord(atom), 32, 8)).toBe(false);
  });

  it('runs shrink to keep every lane aligned', () => {
    // Contig coordinate 2 + i for lane 0: a run of 4 starting at 2 is not 4-aligned, so it splits into 2 + 2.
    expect(vectorRuns((l, i) => ({ strided: l, contig: 2 + i }), 4, 4, 8)).toEqual([
      { start: 0, length: 2 },
      { start: 2, length: 2 },
    ]);
  });
});
