// The reference inner loop. It is written to be SELF-CONTAINED (no imports, no closures, no helpers)
// because worker threads run it from its own source text (`convRows.toString()`): that way the
// workers and the main thread execute the very same code, from src under vitest and from dist.
//
// Summation order, which every path of this package keeps so results agree bit for bit:
//   for each valid tap r (ascending), s (ascending): for c in the group (ascending): acc += x * w
// in fp64, starting at +0, skipping taps that fall in the padding. Products of fp16/bf16 values are
// exact in fp64, so the only rounding is the fp64 addition and the final store to fp32.

/** Plain numbers the inner loop needs; structured-clone friendly. */
export interface KernelShape {
  H: number;
  W: number;
  C: number;
  K: number;
  R: number;
  S: number;
  Cg: number;
  Kg: number;
  groups: number;
  Ho: number;
  Wo: number;
  strideH: number;
  strideW: number;
  padH: number;
  padW: number;
  dilationH: number;
  dilationW: number;
}

/**
 * Compute output rows [rowStart, rowEnd) of a batch slice, where row = n * Ho + ho and n counts
 * from the first image of `x`. `x` holds the slice's images (NHWC, fp32 values of the dtype),
 * `w` the whole filter (KRSC), `y` receives the slice's output (NHWK, fp64 sums stored as fp32).
 */
export function convRows(
  x: Float32Array,
  w: Float32Array,
  y: Float32Array,
  shape: KernelShape,
  rowStart: number,
  rowEnd: number,
): void {
  const H = shape.H;
  const W = shape.W;
  const C = shape.C;
  const K = shape.K;
  const R = shape.R;
  const S = shape.S;
  const Cg = shape.Cg;
  const Kg = shape.Kg;
  const groups = shape.groups;
  const Ho = shape.Ho;
  const Wo = shape.Wo;
  const xImage = H * W * C;
  const xRowStride = W * C;
  const wFilter = R * S * Cg; // elements per output channel
  // Offsets of the valid taps of the current output pixel: into x (pixel start) and into w (tap start).
  const tapX = new Float64Array(R * S);
  const tapW = new Float64Array(R * S);
  for (let row = rowStart; row < rowEnd; row++) {
    const n = Math.floor(row / Ho);
    const ho = row - n * Ho;
    const hBase = ho * shape.strideH - shape.padH;
    const xImageBase = n * xImage;
    let yOffset = row * Wo * K;
    for (let wo = 0; wo < Wo; wo++) {
      const wBase = wo * shape.strideW - shape.padW;
      let taps = 0;
      for (let r = 0; r < R; r++) {
        const hi = hBase + r * shape.dilationH;
        if (hi < 0 || hi >= H) continue;
        const xRow = xImageBase + hi * xRowStride;
        for (let s = 0; s < S; s++) {
          const wi = wBase + s * shape.dilationW;
          if (wi < 0 || wi >= W) continue;
          tapX[taps] = xRow + wi * C;
          tapW[taps] = (r * S + s) * Cg;
          taps++;
        }
      }
      for (let g = 0; g < groups; g++) {
        const cBase = g * Cg;
        const kEnd = (g + 1) * Kg;
        let k = g * Kg;
        // Four output channels at a time: independent accumulators give the CPU parallel add
        // chains while each output still sums in the one fixed order.
        for (; k + 4 <= kEnd; k += 4) {
          const w0 = k * wFilter;
          const w1 = w0 + wFilter;
          const w2 = w1 + wFilter;
          const w3 = w2 + wFilter;
          let a0 = 0;
          let a1 = 0;
          let a2 = 0;
          let a3 = 0;
          for (let t = 0; t < taps; t++) {
            const xo = (tapX[t] as number) + cBase;
            const tw = tapW[t] as number;
            const b0 = w0 + tw;
            const b1 = w1 + tw;
            const b2 = w2 + tw;
            const b3 = w3 + tw;
            for (let c = 0; c < Cg; c++) {
              const xv = x[xo + c] as number;
              a0 += xv * (w[b0 + c] as number);
              a1 += xv * (w[b1 + c] as number);
              a2 += xv * (w[b2 + c] as number);
              a3 += xv * (w[b3 + c] as number);
            }
          }
          y[yOffset + k] = a0;
          y[yOffset + k + 1] = a1;
          y[yOffset + k + 2] = a2;
          y[yOffset + k + 3] = a3;
        }
        for (; k < kEnd; k++) {
          const wk = k * wFilter;
          let acc = 0;
          for (let t = 0; t < taps; t++) {
            const xo = (tapX[t] as number) + cBase;
            const b = wk + (tapW[t] as number);
            for (let c = 0; c < Cg; c++) acc += (x[xo + c] as number) * (w[b + c] as number);
          }
          y[yOffset + k] = acc;
        }
      }
      yOffset += K;
    }
  }
}
