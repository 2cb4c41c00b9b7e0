/**
 * Exact float encodings: rounding a JS number to half/bfloat/float (round-to-nearest-even) and
 * the hex forms LLVM prints (`0x` + 64-bit double bits for float/double, `0xH` half, `0xR` bfloat).
 */
import type { FloatKind } from './types.js';

const formats = { half: { e: 5, m: 10 }, bfloat: { e: 8, m: 7 } } as const;

function roundHalfEven(v: number): number {
  const r = Math.floor(v);
  const d = v - r;
  return d > 0.5 || (d === 0.5 && r % 2 !== 0) ? r + 1 : r;
}

/** Encodes `x` as the 16-bit pattern of `half` or `bfloat`, rounding to nearest even. NaN becomes a quiet NaN. */
export function encodeFloat16(x: number, kind: 'half' | 'bfloat'): number {
  const { e: eBits, m: mBits } = formats[kind];
  const bias = (1 << (eBits - 1)) - 1;
  const maxExp = (1 << eBits) - 1;
  const sign = x < 0 || Object.is(x, -0) ? 1 << (eBits + mBits) : 0;
  if (Number.isNaN(x)) return (maxExp << mBits) | (1 << (mBits - 1));
  const a = Math.abs(x);
  if (a === Infinity) return sign | (maxExp << mBits);
  if (a === 0) return sign;
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  if (e < 1 - bias) {
    // Subnormal: integer multiple of the smallest step; rounding up to 2^mBits lands on the smallest normal, which the encoding handles.
    const q = roundHalfEven(a / 2 ** (1 - bias - mBits));
    return sign | q;
  }
  let q = roundHalfEven((a / 2 ** e - 1) * 2 ** mBits);
  if (q === 1 << mBits) {
    q = 0;
    e++;
  }
  if (e > bias) return sign | (maxExp << mBits);
  return sign | ((e + bias) << mBits) | q;
}

/** Decodes a 16-bit `half`/`bfloat` pattern into a JS number. */
export function decodeFloat16(bits: number, kind: 'half' | 'bfloat'): number {
  const { e: eBits, m: mBits } = formats[kind];
  const bias = (1 << (eBits - 1)) - 1;
  const maxExp = (1 << eBits) - 1;
  const s = (bits >> (eBits + mBits)) & 1 ? -1 : 1;
  const e = (bits >> mBits) & maxExp;
  const m = bits & ((1 << mBits) - 1);
  if (e === maxExp) return m === 0 ? s * Infinity : NaN;
  if (e === 0) return s * m * 2 ** (1 - bias - mBits);
  return s * (1 + m / 2 ** mBits) * 2 ** (e - bias);
}

/** Rounds `x` to the nearest value representable in `kind` (what a constant of that type holds). */
export function roundToFloat(x: number, kind: FloatKind): number {
  if (kind === 'double') return x;
  if (kind === 'float') return Math.fround(x);
  return decodeFloat16(encodeFloat16(x, kind), kind);
}

const scratch = new DataView(new ArrayBuffer(8));

/** LLVM's exact hex spelling of a constant of this float type. */
export function floatHex(x: number, kind: FloatKind): string {
  if (kind === 'half') return `0xH${encodeFloat16(x, 'half').toString(16).toUpperCase().padStart(4, '0')}`;
  if (kind === 'bfloat') return `0xR${encodeFloat16(x, 'bfloat').toString(16).toUpperCase().padStart(4, '0')}`;
  // float constants are written as the double with the same value, so round first.
  const v = kind === 'float' ? Math.fround(x) : x;
  if (Number.isNaN(v)) return kind === 'float' ? '0x7FF8000000000000' : '0x7FF8000000000000';
  scratch.setFloat64(0, v);
  return `0x${scratch.getBigUint64(0).toString(16).toUpperCase().padStart(16, '0')}`;
}
