import { describe, expect, it } from 'vitest';
import { convForward } from './conv.js';
import { encodeDtype, decodeDtype } from './dtype.js';
import { makeProblem } from './problem.js';
import { randomTensor } from './random.js';
import { convSample, flatOutputIndex, gather, outputPointOf, samplePoints } from './sample.js';

const p = makeProblem({ N: 3, H: 7, W: 6, C: 12, K: 10, R: 3, S: 3, padH: 1, padW: 2, strideW: 2, dilationH: 2, groups: 2, dtype: 'bf16' });
const x = randomTensor(3 * 7 * 6 * 12, 'bf16', 71);
const w = randomTensor(10 * 3 * 3 * 6, 'bf16', 72);
const full = convForward(p, x, w);
const g = full.geometry;

describe('sampled mode', () => {
  it('equals the full result bit for bit at 200 seeded random points', () => {
    const s = convSample(p, x, w, { count: 200, seed: 5 });
    expect(s.points).toHaveLength(200);
    expect(Array.from(s.y32)).toEqual(Array.from(gather(full.y32, s.indices)));
    expect(Array.from(s.y)).toEqual(Array.from(gather(full.y, s.indices)));
  });

  it('equals the full result at every output point, corners and padding included', () => {
    const every = Array.from({ length: g.yElements }, (_, i) => outputPointOf(g, i));
    const s = convSample(p, x, w, every);
    expect(Array.from(s.y32)).toEqual(Array.from(full.y32));
  });

  it('reads fp32 operands through the same dtype rounding as the full path', () => {
    const xf = decodeDtype(x, 'bf16').map((v, i) => v + (i % 3) * 2 ** -12);
    const wf = decodeDtype(w, 'bf16');
    const points = [
      { n: 2, h: 4, w: 3, k: 9 },
      { n: 0, h: 0, w: 0, k: 0 },
    ];
    const s = convSample(p, xf, wf, points);
    const ref = convForward(p, encodeDtype(xf, 'bf16'), w);
    expect(Array.from(s.y32)).toEqual(points.map((pt) => ref.y32[flatOutputIndex(g, pt)]));
  });

  it('draws distinct, in-range points, the same for the same seed and different for another', () => {
    const a = samplePoints(g, 50, 9);
    expect(samplePoints(g, 50, 9)).toEqual(a);
    expect(samplePoints(g, 50, 10)).not.toEqual(a);
    expect(new Set(a.map((pt) => flatOutputIndex(g, pt))).size).toBe(50);
    for (const pt of a) {
      expect(pt.n).toBeLessThan(g.N);
      expect(pt.h).toBeLessThan(g.Ho);
      expect(pt.w).toBeLessThan(g.Wo);
      expect(pt.k).toBeLessThan(g.K);
    }
    // Asking for all of them gives a permutation of the output.
    const all = samplePoints(g, g.yElements, 3).map((pt) => flatOutputIndex(g, pt));
    expect(all.sort((i, j) => i - j)).toEqual(Array.from({ length: g.yElements }, (_, i) => i));
  });

  it('maps flat NHWK indices and points both ways', () => {
    const shape = { N: 2, Ho: 3, Wo: 4, K: 5 };
    expect(flatOutputIndex(shape, { n: 1, h: 2, w: 3, k: 4 })).toBe(119);
    expect(outputPointOf(shape, 119)).toEqual({ n: 1, h: 2, w: 3, k: 4 });
    expect(outputPointOf(shape, 26)).toEqual({ n: 0, h: 1, w: 1, k: 1 });
  });

  it('rejects out-of-range points, bad specs and impossible counts with reasons', () => {
    expect(() => convSample(p, x, w, [{ n: 0, h: 0, w: g.Wo, k: 0 }])).toThrow(
      new RegExp(`sample point 0 .*: w must be an integer in \\[0, ${g.Wo}\\) for output \\[N, Ho, Wo, K\\] = \\[3, ${g.Ho}, ${g.Wo}, 10\\]`),
    );
    expect(() => convSample(p, x, w, [{ n: 0, h: 0.5, w: 0, k: 0 }])).toThrow(/h must be an integer/);
    expect(() => convSample(p, x, w, { count: g.yElements + 1, seed: 1 })).toThrow(/cannot draw \d+ distinct points from an output of \d+ elements/);
    expect(() => convSample(p, x, w, { count: -1, seed: 1 })).toThrow(/sample count must be a non-negative integer/);
    expect(() => convSample(p, x, w, { count: 3 } as unknown as { count: number; seed: number })).toThrow(/array of \{n, h, w, k\} points or \{count, seed\}/);
    expect(() => gather(full.y, [g.yElements])).toThrow(/gather: index \d+ \(entry 0\) is outside/);
  });
});
