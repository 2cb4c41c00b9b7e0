import { describe, expect, it } from 'vitest';
import { buildConvKernel, convLaunch, referenceConv } from '../../bench/conv-kernel.mjs';
import { getTarget } from '../targets/index.js';
import { interpret } from './index.js';
import { bfloatToBits, halfToBits } from './numeric.js';

const cases = [
  ['gfx950', '32x32x16.bf16'], ['gfx950', '16x16x32.f16'], ['gfx950', '32x32x16.f16'], ['gfx950', '16x16x32.bf16'],
  ['gfx942', '32x32x8.bf16'], ['gfx942', '16x16x16.f16'], ['sm_90', '16x8x16.bf16'], ['sm_90', '16x8x16.f16'],
] as const;

describe('LDS-halo 3x3 conv kernel end to end', () => {
  // 8x16 map, two channel chunks, padding on every border: exercises halo staging, zero padding via out-of-range loads, both barriers.
  const shape = { N: 2, H: 8, W: 16, C: 64, K: 64 };
  const xv = Array.from({ length: shape.N * shape.H * shape.W * shape.C }, (_, i) => ((i * 7) % 5) - 2);
  const wv = Array.from({ length: shape.K * 9 * shape.C }, (_, i) => ((i * 3) % 7) - 3);
  const ref = referenceConv(xv, wv, shape);

  for (const [tn, atomName] of cases) {
    it(`${tn} ${atomName} matches a plain convolution exactly (integer data)`, () => {
      const t = getTarget(tn);
      const enc = t.atom(atomName).dtype === 'bf16' ? bfloatToBits : halfToBits;
      const x = Uint16Array.from(xv, enc);
      const w = Uint16Array.from(wv, enc);
      const y = new Float32Array(ref.length).fill(NaN);
      const { grid, block } = convLaunch(t, shape);
      const res = interpret(buildConvKernel(t, atomName), 'conv3x3', { target: t, grid, block, args: [x, w, y, shape.N, shape.H, shape.W, shape.C, shape.K] });
      expect(Array.from(y)).toEqual(Array.from(ref));
      expect(res.workgroups).toBe(grid[0] * grid[1] * grid[2]);
    });
  }
});
