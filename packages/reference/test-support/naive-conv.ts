// Test-only: an independent, deliberately plain reference convolution (no hoisting, no tap lists,
// no chunking). It sums in the documented order (r, s, c) so results can be compared bit for bit.
import type { ConvProblem } from '../src/problem.js';

/** Output size and per-group channels, from the textbook formula rather than src's convGeometry. */
export function plainGeometry(p: ConvProblem): { Ho: number; Wo: number; Cg: number; Kg: number } {
  return {
    Ho: Math.floor((p.H + 2 * p.padH - p.dilationH * (p.R - 1) - 1) / p.strideH) + 1,
    Wo: Math.floor((p.W + 2 * p.padW - p.dilationW * (p.S - 1) - 1) / p.strideW) + 1,
    Cg: p.C / p.groups,
    Kg: p.K / p.groups,
  };
}

export function naiveConv(p: ConvProblem, x: ArrayLike<number>, w: ArrayLike<number>): { Ho: number; Wo: number; y: Float64Array } {
  const { Ho, Wo, Cg, Kg } = plainGeometry(p);
  const y = new Float64Array(p.N * Ho * Wo * p.K);
  for (let n = 0; n < p.N; n++)
    for (let ho = 0; ho < Ho; ho++)
      for (let wo = 0; wo < Wo; wo++)
        for (let k = 0; k < p.K; k++) {
          const g = Math.floor(k / Kg);
          let sum = 0;
          for (let r = 0; r < p.R; r++)
            for (let s = 0; s < p.S; s++) {
              const ih = ho * p.strideH - p.padH + r * p.dilationH;
              const iw = wo * p.strideW - p.padW + s * p.dilationW;
              if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
              for (let c = 0; c < Cg; c++) {
                sum += (x[((n * p.H + ih) * p.W + iw) * p.C + g * Cg + c] as number) * (w[((k * p.R + r) * p.S + s) * Cg + c] as number);
              }
            }
          y[((n * Ho + ho) * Wo + wo) * p.K + k] = sum;
        }
  return { Ho, Wo, y };
}
