// Test-only: what a GPU kernel computes, simulated on the CPU. Exact products (fp16/bf16 products
// fit fp32), accumulated in fp32 in a kernel-like order that differs from the reference's:
// channel chunks of `ck` outermost, taps inside, optionally split over `splits` channel ranges whose
// fp32 partial sums are added at the end (split_c). The result is rounded to the dtype by the caller.
// `dropChannels` and `dropTap` inject the bugs the tolerance must catch.
import type { ConvProblem } from '../src/problem.js';
import { plainGeometry } from './naive-conv.js';

export interface KernelSimulation {
  ck?: number;
  splits?: number;
  /** Skip input channels [from, to) of every group (a lost channel chunk). */
  dropChannels?: [number, number];
  /** Skip one filter tap (a lost tap). */
  dropTap?: [number, number];
}

export function simulateKernel(p: ConvProblem, x: Float32Array, w: Float32Array, sim: KernelSimulation = {}): Float32Array {
  const ck = sim.ck ?? 16;
  const splits = sim.splits ?? 1;
  const { Ho, Wo, Cg, Kg } = plainGeometry(p);
  const perSplit = Math.ceil(Cg / splits);
  const y = new Float32Array(p.N * Ho * Wo * p.K);
  const f = Math.fround;
  for (let n = 0; n < p.N; n++)
    for (let ho = 0; ho < Ho; ho++)
      for (let wo = 0; wo < Wo; wo++)
        for (let k = 0; k < p.K; k++) {
          const g = Math.floor(k / Kg);
          let total = 0;
          for (let split = 0; split < splits; split++) {
            let acc = 0;
            const cEnd = Math.min(Cg, (split + 1) * perSplit);
            for (let c0 = split * perSplit; c0 < cEnd; c0 += ck) {
              for (let r = 0; r < p.R; r++)
                for (let s = 0; s < p.S; s++) {
                  if (sim.dropTap && sim.dropTap[0] === r && sim.dropTap[1] === s) continue;
                  const ih = ho * p.strideH - p.padH + r * p.dilationH;
                  const iw = wo * p.strideW - p.padW + s * p.dilationW;
                  if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
                  const xb = ((n * p.H + ih) * p.W + iw) * p.C + g * Cg;
                  const wb = ((k * p.R + r) * p.S + s) * Cg;
                  for (let c = c0; c < Math.min(c0 + ck, cEnd); c++) {
                    if (sim.dropChannels && c >= sim.dropChannels[0] && c < sim.dropChannels[1]) continue;
                    acc = f(acc + (x[xb + c] as number) * (w[wb + c] as number));
                  }
                }
            }
            total = f(total + acc);
          }
          y[((n * Ho + ho) * Wo + wo) * p.K + k] = total;
        }
  return y;
}
