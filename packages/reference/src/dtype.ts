// fp16 / bf16 <-> fp32 conversions. Half-width values are stored as their 16-bit patterns
// (Uint16Array); fp32 values as Float32Array or plain numbers.
//
// fp32 -> 16-bit rounds to nearest, ties to even (what `fptrunc` and the GPU's cvt instructions do).
// NaN stays NaN (made quiet, sign and top payload bits kept), Inf stays Inf, signed zeros keep their
// sign, fp16 subnormals are produced and read exactly. Overflow rounds to Inf.

/** The storage dtypes of a convolution's operands. */
export type Dtype = 'fp16' | 'bf16';

/** Every dtype this package knows, for validation and iteration. */
export const DTYPES: readonly Dtype[] = ['fp16', 'bf16'];

/** Significand precision in bits (implicit bit included): fp16 11, bf16 8. */
export function precisionBits(dtype: Dtype): number {
  return dtype === 'fp16' ? 11 : 8;
}

/** The smallest positive (subnormal) value of the dtype. */
export function minSubnormal(dtype: Dtype): number {
  return dtype === 'fp16' ? 2 ** -24 : 2 ** -133;
}

/** The largest finite value of the dtype. */
export function maxFinite(dtype: Dtype): number {
  return dtype === 'fp16' ? 65504 : (2 - 2 ** -7) * 2 ** 127;
}

// One scratch word to move between a number and its fp32 bit pattern.
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** The IEEE binary32 bit pattern of `x` after rounding it to fp32 (RNE). */
export function fp32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0] as number;
}

/** The fp32 value of a 32-bit pattern. */
export function fp32FromBits(bits: number): number {
  scratchU32[0] = bits >>> 0;
  return scratchF32[0] as number;
}

/** fp32 bit pattern -> fp16 bit pattern, round to nearest even. */
export function fp32BitsToFp16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00 | ((abs >>> 13) & 0x1ff); // NaN: quiet, keep payload top
  if (abs >= 0x477ff000) return sign | 0x7c00; // >= 65520 (the tie above 65504) rounds to Inf
  if (abs >= 0x38800000) {
    // Normal result: rebias the exponent (127 -> 15) and round away the low 13 bits; a carry out
    // of the mantissa correctly bumps the exponent.
    const rounded = abs + 0xfff + ((abs >>> 13) & 1);
    return sign | ((rounded - 0x38000000) >>> 13);
  }
  // Subnormal result, in units of 2^-24. 2^-25 itself is the tie between 0 and 2^-24: even is 0.
  if (abs <= 0x33000000) return sign;
  const exponent = abs >>> 23; // 102..112 here
  const significand = (abs & 0x7fffff) | 0x800000;
  const shift = 126 - exponent; // value = significand * 2^(exponent-150) = (significand >> shift) * 2^-24
  const quotient = significand >>> shift;
  const remainder = significand & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  const roundUp = remainder > half || (remainder === half && (quotient & 1) === 1);
  return sign | (quotient + (roundUp ? 1 : 0));
}

/** fp16 bit pattern -> fp32 bit pattern (exact). */
export function fp16BitsToFp32Bits(half: number): number {
  const sign = (half & 0x8000) << 16;
  const exponent = (half >>> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0x1f) return (sign | 0x7f800000 | (mantissa << 13)) >>> 0;
  if (exponent !== 0) return (sign | ((exponent + 112) << 23) | (mantissa << 13)) >>> 0;
  if (mantissa === 0) return sign >>> 0;
  // Subnormal fp16 is a normal fp32: shift the leading one up to the implicit position.
  const lead = 31 - Math.clz32(mantissa); // 0..9
  const fraction = (mantissa << (23 - lead)) & 0x7fffff;
  return (sign | ((lead + 103) << 23) | fraction) >>> 0;
}

/** fp32 bit pattern -> bf16 bit pattern, round to nearest even. */
export function fp32BitsToBf16Bits(bits: number): number {
  const b = bits >>> 0;
  if ((b & 0x7fffffff) > 0x7f800000) return (b >>> 16) | 0x0040; // NaN: quiet, keep payload top
  // Adding 0x7fff plus the lowest kept bit rounds ties to even; overflow carries into Inf. The sum
  // stays below 2^32 for every non-NaN input, so the unsigned shift is exact.
  return (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
}

/** bf16 bit pattern -> fp32 bit pattern (exact). */
export function bf16BitsToFp32Bits(bf16: number): number {
  return ((bf16 & 0xffff) << 16) >>> 0;
}

/** fp32 bit pattern -> 16-bit pattern of `dtype`, round to nearest even. */
export function fp32BitsToDtypeBits(bits: number, dtype: Dtype): number {
  return dtype === 'fp16' ? fp32BitsToFp16Bits(bits) : fp32BitsToBf16Bits(bits);
}

/** 16-bit pattern of `dtype` -> fp32 bit pattern (exact). */
export function dtypeBitsToFp32Bits(bits: number, dtype: Dtype): number {
  return dtype === 'fp16' ? fp16BitsToFp32Bits(bits) : bf16BitsToFp32Bits(bits);
}

/**
 * A number -> 16-bit pattern of `dtype`. The number is first rounded to fp32 (RNE), as a kernel
 * that holds it in an fp32 register would, then to the dtype (RNE).
 */
export function toDtypeBits(x: number, dtype: Dtype): number {
  return fp32BitsToDtypeBits(fp32Bits(x), dtype);
}

/** 16-bit pattern of `dtype` -> its value as a number (exact). */
export function fromDtypeBits(bits: number, dtype: Dtype): number {
  return fp32FromBits(dtypeBitsToFp32Bits(bits, dtype));
}

/** `x` rounded to fp32 and then to `dtype`, returned as a number. */
export function roundToDtype(x: number, dtype: Dtype): number {
  return fromDtypeBits(toDtypeBits(x, dtype), dtype);
}

// fp32 bit patterns of all 65536 fp16 patterns: decoding in bulk is then one lookup per element.
let fp16Table: Uint32Array | undefined;
function fp16ToFp32Table(): Uint32Array {
  if (!fp16Table) {
    fp16Table = new Uint32Array(65536);
    for (let h = 0; h < 65536; h++) fp16Table[h] = fp16BitsToFp32Bits(h);
  }
  return fp16Table;
}

/**
 * The value of every 16-bit pattern of `dtype`, as a 65536-entry Float32Array (index = pattern).
 * Shared and cached: do not write to it.
 */
export function dtypeValueTable(dtype: Dtype): Float32Array {
  const cached = valueTables[dtype];
  if (cached) return cached;
  const table = new Float32Array(65536);
  decodeDtype(Uint16Array.from({ length: 65536 }, (_, i) => i), dtype, table);
  valueTables[dtype] = table;
  return table;
}
const valueTables: Partial<Record<Dtype, Float32Array>> = {};

/** Values accepted by {@link encodeDtype}. */
export type NumericArray = Float32Array | Float64Array | readonly number[];

/**
 * Round every value to `dtype` (via fp32, RNE) and return the 16-bit patterns. A Float32Array is
 * read by bit pattern, so NaN payloads survive as far as the dtype can hold them.
 */
export function encodeDtype(values: NumericArray, dtype: Dtype, out?: Uint16Array): Uint16Array {
  const n = values.length;
  const dst = out ?? new Uint16Array(n);
  if (dst.length !== n) throw new RangeError(`encodeDtype: output holds ${dst.length} elements, input ${n}`);
  if (values instanceof Float32Array) {
    const bits = new Uint32Array(values.buffer, values.byteOffset, n);
    if (dtype === 'fp16') for (let i = 0; i < n; i++) dst[i] = fp32BitsToFp16Bits(bits[i] as number);
    else for (let i = 0; i < n; i++) dst[i] = fp32BitsToBf16Bits(bits[i] as number);
  } else {
    for (let i = 0; i < n; i++) dst[i] = toDtypeBits(values[i] as number, dtype);
  }
  return dst;
}

/**
 * Decode 16-bit patterns of `dtype` to fp32 (exact), writing bit patterns so NaN payloads survive.
 * `out` may be given to reuse a buffer; it must have the same length.
 */
export function decodeDtype(bits: Uint16Array, dtype: Dtype, out?: Float32Array): Float32Array {
  const n = bits.length;
  const dst = out ?? new Float32Array(n);
  if (dst.length !== n) throw new RangeError(`decodeDtype: output holds ${dst.length} elements, input ${n}`);
  const dstBits = new Uint32Array(dst.buffer, dst.byteOffset, n);
  if (dtype === 'fp16') {
    const table = fp16ToFp32Table();
    for (let i = 0; i < n; i++) dstBits[i] = table[bits[i] as number] as number;
  } else {
    for (let i = 0; i < n; i++) dstBits[i] = (bits[i] as number) << 16;
  }
  return dst;
}

/** Round every fp32 value to `dtype` and back, in place or into `out`. */
export function roundArrayToDtype(values: Float32Array, dtype: Dtype, out?: Float32Array): Float32Array {
  return decodeDtype(encodeDtype(values, dtype), dtype, out ?? values);
}
