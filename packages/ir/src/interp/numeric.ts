/**
 * Scalar arithmetic of the interpreter's value representation:
 * - integers of 1..32 bits are unsigned JS numbers in [0, 2^bits) (i1 is 0 or 1);
 * - i64 is its signed value, a number when it is a safe integer and a bigint otherwise,
 *   so the common case (offsets, sizes) never touches BigInt;
 * - half / bfloat / float / double are JS numbers already rounded to the type.
 */

// ------------------------------------------------------------------ 16-bit floats

const f64 = new Float64Array(1);
const f64Hi = new Uint32Array(f64.buffer);
/** Index of the high word of a float64 in its Uint32Array view (little endian on every platform Node runs on). */
const HI = 1;
/** 2^52 + 2^51: adding and subtracting it rounds a double of magnitude < 2^51 to an integer, ties to even. */
const RNE_MAGIC = 6755399441055744;

function binaryExponent(x: number): number {
  f64[0] = x;
  return ((f64Hi[HI]! >>> 20) & 0x7ff) - 1023;
}

function makeRounder(mantBits: number, minExp: number, maxFinite: number): (x: number) => number {
  return (x: number): number => {
    if (x !== x || x === 0 || x === Infinity || x === -Infinity) return x;
    let e = binaryExponent(x);
    if (e < minExp) e = minExp;
    if (e > 1023 - mantBits) e = 1023 - mantBits;
    const ulp = 2 ** (e - mantBits);
    const q = x / ulp;
    const r = (q + RNE_MAGIC - RNE_MAGIC) * ulp;
    if (r > maxFinite) return Infinity;
    if (r < -maxFinite) return -Infinity;
    return r === 0 ? (x < 0 ? -0 : 0) : r;
  };
}

/** Rounds to the nearest IEEE half (ties to even), with overflow to infinity and gradual underflow. */
export const roundHalf: (x: number) => number = makeRounder(10, -14, 65504);
/** Rounds to the nearest bfloat16 (ties to even). */
export const roundBfloat: (x: number) => number = makeRounder(7, -126, 3.3895313892515355e38);

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Value of every half bit pattern, indexed by the pattern. */
export const HALF_VALUES: Float64Array = (() => {
  const t = new Float64Array(65536);
  for (let b = 0; b < 65536; b++) {
    const s = b & 0x8000 ? -1 : 1;
    const e = (b >> 10) & 0x1f;
    const m = b & 0x3ff;
    t[b] = e === 0x1f ? (m ? NaN : s * Infinity) : e === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return t;
})();

/** The value of a bfloat bit pattern. */
export function bfloatFromBits(bits: number): number {
  f32Bits[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** Bit pattern of a value that is exactly representable as bfloat (NaN → canonical quiet NaN). */
export function bfloatToBits(x: number): number {
  if (x !== x) return 0x7fc0;
  f32[0] = x;
  return f32Bits[0]! >>> 16;
}

/** Bit pattern of a value that is exactly representable as half (NaN → canonical quiet NaN). */
export function halfToBits(x: number): number {
  if (x !== x) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | Math.round(a * 2 ** 24);
  f64[0] = a;
  const hi = f64Hi[HI]!;
  const e = ((hi >>> 20) & 0x7ff) - 1023;
  return sign | ((e + 15) << 10) | ((hi >>> 10) & 0x3ff);
}

// ------------------------------------------------------------------ integers

/** Mask of the low `bits` bits as an unsigned number (bits <= 32). */
export const maskOf = (bits: number): number => (bits >= 32 ? 0xffffffff : (1 << bits) >>> 0) - (bits >= 32 ? 0 : 1);

/** Signed value of an unsigned `bits`-wide number (bits <= 32). */
export function toSigned(x: number, bits: number): number {
  if (bits === 32) return x | 0;
  const sh = 32 - bits;
  return (x << sh) >> sh;
}

/** Wraps any integer (number or bigint) to an unsigned `bits`-wide number (bits <= 32). */
export function wrapSmall(x: number | bigint, bits: number): number {
  if (typeof x === 'bigint') return Number(BigInt.asUintN(bits, x));
  if (!Number.isSafeInteger(x)) return Number(BigInt.asUintN(bits, BigInt(Math.trunc(x))));
  return bits === 32 ? x >>> 0 : (x >>> 0) & maskOf(bits);
}

/** An i64 value: number when safe, bigint otherwise. */
export type I64 = number | bigint;

/** Normalizes a bigint to the signed i64 range and to a number when that is exact. */
export function normI64(x: bigint): I64 {
  const w = BigInt.asIntN(64, x);
  return w >= -9007199254740991n && w <= 9007199254740991n ? Number(w) : w;
}
/** Wraps any integer to a canonical i64. */
export function wrapI64(x: number | bigint): I64 {
  if (typeof x === 'number') {
    if (Number.isSafeInteger(x)) return x;
    if (!Number.isFinite(x)) return 0;
    return normI64(BigInt(Math.trunc(x)));
  }
  return normI64(x);
}
const big = (x: I64): bigint => (typeof x === 'bigint' ? x : BigInt(x));
/** Unsigned bigint of an i64. */
export const u64 = (x: I64): bigint => BigInt.asUintN(64, big(x));

export function add64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  return normI64(big(a) + big(b));
}
export function sub64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b;
    if (Number.isSafeInteger(r)) return r;
  }
  return normI64(big(a) - big(b));
}
export function mul64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b;
    if (Number.isSafeInteger(r)) return r;
  }
  return normI64(big(a) * big(b));
}
export function sdiv64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number') return Math.trunc(a / b) + 0;
  return normI64(big(a) / big(b));
}
export function udiv64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0) return Math.floor(a / b);
  return normI64(u64(a) / u64(b));
}
export function srem64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number') return (a % b) + 0;
  return normI64(big(a) % big(b));
}
export function urem64(a: I64, b: I64): I64 {
  if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0) return a % b;
  return normI64(u64(a) % u64(b));
}
/** Bitwise ops: both operands in 0..2^31 stay on numbers. */
const small = (x: I64): boolean => typeof x === 'number' && x >= 0 && x <= 0x7fffffff;
export const and64 = (a: I64, b: I64): I64 => (small(a) && small(b) ? (a as number) & (b as number) : normI64(big(a) & big(b)));
export const or64 = (a: I64, b: I64): I64 => (small(a) && small(b) ? (a as number) | (b as number) : normI64(big(a) | big(b)));
export const xor64 = (a: I64, b: I64): I64 => (small(a) && small(b) ? (a as number) ^ (b as number) : normI64(big(a) ^ big(b)));
export function shl64(a: I64, s: number): I64 {
  if (typeof a === 'number' && s < 64) {
    const r = a * 2 ** s;
    if (Number.isSafeInteger(r)) return r;
  }
  return normI64(big(a) << BigInt(s));
}
export function ashr64(a: I64, s: number): I64 {
  if (typeof a === 'number') return Math.floor(a / 2 ** s);
  return normI64(a >> BigInt(s));
}
export function lshr64(a: I64, s: number): I64 {
  if (typeof a === 'number' && a >= 0) return Math.floor(a / 2 ** s);
  return normI64(u64(a) >> BigInt(s));
}
export function cmpS64(a: I64, b: I64): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
export function cmpU64(a: I64, b: I64): number {
  if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b >= 0) return a < b ? -1 : a > b ? 1 : 0;
  const x = u64(a);
  const y = u64(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
/** Unsigned value of an i64 as a JS number (exact below 2^53). */
export const u64Number = (x: I64): number => (typeof x === 'number' && x >= 0 ? x : Number(u64(x)));

/**
 * `p * q + c` rounded once to a format of at most 24 significand bits (`round`): the product of
 * two such values is exact in double, the sum is rounded to double *to odd* (TwoSum gives the
 * exact residual), and a round-to-odd double rounds correctly to any narrower format.
 */
export function fusedMultiplyAdd(p: number, q: number, c: number, round: (x: number) => number): number {
  const pq = p * q;
  const s = pq + c;
  if (!Number.isFinite(s)) return round(s);
  const bb = s - pq;
  const err = pq - (s - bb) + (c - bb);
  if (err === 0) return round(s);
  f64[0] = s;
  const LO = 1 - HI;
  if ((f64Hi[LO]! & 1) === 0) {
    // Even last bit: step one ulp toward the exact value (away from zero when err has the sign of s).
    if (s > 0 === err > 0) {
      f64Hi[LO] = f64Hi[LO]! + 1;
    } else if (f64Hi[LO] === 0) {
      f64Hi[LO] = 0xffffffff;
      f64Hi[HI] = f64Hi[HI]! - 1;
    } else f64Hi[LO] = f64Hi[LO]! - 1;
  }
  return round(f64[0]!);
}
