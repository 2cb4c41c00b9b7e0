/**
 * The host reference of the kernel's arithmetic: the same fold in the same order, in fp32, then
 * round-to-nearest-even to fp16/bf16. Written on integer bit patterns so it shares no code with
 * the kernel's lowering or the IR interpreter; results are the 16-bit output patterns.
 */
import { SplitReduceError } from './errors.js';
import type { Dtype } from './spec.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Bit pattern of a number rounded to fp32. */
function f32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

/** fp32 → IEEE half, round to nearest even; overflow to ±Inf, gradual underflow, NaN stays a quiet NaN. */
export function f32ToF16Bits(x: number): number {
  const bits = f32Bits(x);
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00 | ((abs >>> 13) & 0x3ff);
  if (abs >= 0x477ff000) return sign | 0x7c00; // >= 65520 (and Inf): rounds past the largest half
  if (abs >= 0x38800000) {
    // Normal half: rebias the exponent (127 -> 15), round the 13 dropped bits to nearest even.
    const m = abs - 0x38000000;
    return sign | ((m + 0x0fff + ((m >>> 13) & 1)) >>> 13);
  }
  if (abs < 0x33000000) return sign; // below 2^-25: rounds to zero
  // Subnormal half: units of 2^-24 are mant * 2^(e - 126); shift right with nearest-even rounding.
  const e = abs >>> 23;
  const mant = (abs & 0x7fffff) | 0x800000;
  const shift = 126 - e;
  return sign | ((mant + (1 << (shift - 1)) - 1 + ((mant >>> shift) & 1)) >>> shift);
}

/** fp32 → bfloat16, round to nearest even; NaN stays a quiet NaN. */
export function f32ToBf16Bits(x: number): number {
  const bits = f32Bits(x);
  if ((bits & 0x7fffffff) > 0x7f800000) return (bits >>> 16) | 0x40;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/**
 * `out[i] = rne(ws[0*stride + i] + ws[1*stride + i] + ... + ws[(splits-1)*stride + i])` with the
 * additions in that order and each rounded to fp32 — what the kernel computes, bit for bit.
 */
export function foldSlices(ws: Float32Array, count: number, splits: number, dtype: Dtype, sliceStride: number = count): Uint16Array {
  if (!Number.isSafeInteger(count) || count < 0) throw new SplitReduceError(`count must be a non-negative integer (got ${count})`);
  if (!Number.isSafeInteger(splits) || splits < 1) throw new SplitReduceError(`splits must be a positive integer (got ${splits})`);
  if (!Number.isSafeInteger(sliceStride) || sliceStride < count) throw new SplitReduceError(`sliceStride ${sliceStride} must be an integer >= count ${count}`);
  if (count > 0 && ws.length < (splits - 1) * sliceStride + count) {
    throw new SplitReduceError(`ws holds ${ws.length} values; ${splits} slices of ${count} with stride ${sliceStride} need ${(splits - 1) * sliceStride + count}`);
  }
  const round = dtype === 'fp16' ? f32ToF16Bits : f32ToBf16Bits;
  const out = new Uint16Array(count);
  for (let i = 0; i < count; i++) {
    let acc = ws[i]!;
    for (let s = 1; s < splits; s++) acc = Math.fround(acc + ws[s * sliceStride + i]!);
    out[i] = round(acc);
  }
  return out;
}
