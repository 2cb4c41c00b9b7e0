import { describe, expect, it } from 'vitest';
import {
  bf16BitsToFp32Bits,
  decodeDtype,
  dtypeValueTable,
  encodeDtype,
  fp16BitsToFp32Bits,
  fp32Bits,
  fp32BitsToBf16Bits,
  fp32BitsToFp16Bits,
  fp32FromBits,
  fromDtypeBits,
  maxFinite,
  minSubnormal,
  roundArrayToDtype,
  roundToDtype,
  toDtypeBits,
  type Dtype,
} from './dtype.js';
import { createRng } from './random.js';

/** Collects failures so exhaustive loops assert once (a failing case is still reported by value). */
class Failures {
  readonly list: string[] = [];
  check(ok: boolean, what: () => string): void {
    if (!ok && this.list.length < 20) this.list.push(what());
  }
}

const ALL = Uint16Array.from({ length: 65536 }, (_, i) => i);

function isFp16NaN(h: number): boolean {
  return (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
}
function isBf16NaN(b: number): boolean {
  return (b & 0x7f80) === 0x7f80 && (b & 0x7f) !== 0;
}

/** Value of a 16-bit pattern from the IEEE definition, written without bit tricks. */
function definitionValue(bits: number, dtype: Dtype): number {
  const [expBits, manBits, bias] = dtype === 'fp16' ? [5, 10, 15] : [8, 7, 127];
  const sign = bits >> 15 ? -1 : 1;
  const e = (bits >> manBits) & ((1 << expBits) - 1);
  const m = bits & ((1 << manBits) - 1);
  if (e === (1 << expBits) - 1) return m === 0 ? sign * Infinity : NaN;
  if (e === 0) return sign * m * 2 ** (1 - bias - manBits);
  return sign * 2 ** (e - bias) * (1 + m / 2 ** manBits);
}

/**
 * Round-to-nearest-even to fp16 by search over the sorted non-negative fp16 values, with distances
 * computed in fp64 (exact here). 65536, the value past 65504, stands for Inf.
 */
const fp16Ladder = Float64Array.from({ length: 0x7c01 }, (_, i) => (i === 0x7c00 ? 65536 : definitionValue(i, 'fp16')));
function referenceFp16(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65536) return sign | 0x7c00;
  let lo = 0;
  let hi = 0x7c00;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((fp16Ladder[mid] as number) <= a) lo = mid;
    else hi = mid;
  }
  const dLo = a - (fp16Ladder[lo] as number);
  const dHi = (fp16Ladder[hi] as number) - a;
  const pick = dLo < dHi ? lo : dHi < dLo ? hi : lo % 2 === 0 ? lo : hi;
  return sign | pick;
}

/** Round-to-nearest-even to bf16: the two candidates around x, distance compared in fp64. */
function referenceBf16(x: number): number {
  const bits = fp32Bits(x);
  const sign = bits >>> 31 ? 0x8000 : 0;
  const a = Math.abs(fp32FromBits(bits));
  const lo = (bits & 0x7fffffff) >>> 16;
  const loValue = definitionValue(lo, 'bf16');
  const hiValue = lo + 1 === 0x7f80 ? 2 ** 128 : definitionValue(lo + 1, 'bf16');
  const dLo = a - loValue;
  const dHi = hiValue - a;
  const pick = dLo < dHi ? lo : dHi < dLo ? lo + 1 : lo % 2 === 0 ? lo : lo + 1;
  return sign | pick;
}

describe('fp16 <-> fp32', () => {
  it('decodes all 65536 patterns to the value the IEEE definition gives', () => {
    const values = decodeDtype(ALL, 'fp16');
    const f = new Failures();
    for (let h = 0; h < 65536; h++) {
      const want = definitionValue(h, 'fp16');
      const ok = Number.isNaN(want) ? Number.isNaN(values[h]) : Object.is(values[h], want);
      f.check(ok, () => `0x${h.toString(16)}: ${values[h]} != ${want}`);
    }
    expect(f.list).toEqual([]);
  });

  it('round-trips all 65536 patterns through fp32 (bits, scalar and bulk); NaN stays NaN', () => {
    const bulk = encodeDtype(decodeDtype(ALL, 'fp16'), 'fp16');
    let nans = 0;
    const f = new Failures();
    for (let h = 0; h < 65536; h++) {
      const viaBits = fp32BitsToFp16Bits(fp16BitsToFp32Bits(h));
      const viaNumber = toDtypeBits(fromDtypeBits(h, 'fp16'), 'fp16');
      const got = () => `0x${h.toString(16)} -> ${viaBits}, ${viaNumber}, ${bulk[h]}`;
      if (isFp16NaN(h)) {
        nans++;
        f.check(isFp16NaN(viaBits) && isFp16NaN(viaNumber) && isFp16NaN(bulk[h] as number), got);
        f.check((viaBits & 0x8000) === (h & 0x8000), got);
      } else {
        f.check(viaBits === h && viaNumber === h && bulk[h] === h, got);
      }
    }
    expect(f.list).toEqual([]);
    expect(nans).toBe(2 * 1023);
  });

  it('keeps NaN payloads through the bulk path (quiet bit set, top payload bits kept)', () => {
    const f32 = decodeDtype(Uint16Array.of(0x7d55, 0xfe01), 'fp16');
    const bits = new Uint32Array(f32.buffer);
    expect(bits[0]).toBe(0x7faaa000);
    expect(Array.from(encodeDtype(f32, 'fp16'))).toEqual([0x7f55, 0xfe01]);
  });

  it('rounds to nearest even at every midpoint between fp16 values and one fp32 ulp either side', () => {
    const f = new Failures();
    for (let h = 0; h < 0x7c00; h++) {
      const lo = fp16Ladder[h] as number;
      const hi = fp16Ladder[h + 1] as number;
      const midBits = fp32Bits((lo + hi) / 2);
      f.check(fp32FromBits(midBits) === (lo + hi) / 2, () => `midpoint above 0x${h.toString(16)} is not an fp32 value`);
      for (const b of [midBits - 1, midBits, midBits + 1]) {
        for (const sign of [0, 0x80000000]) {
          const bits = (b | sign) >>> 0;
          const got = fp32BitsToFp16Bits(bits);
          const want = referenceFp16(fp32FromBits(bits));
          f.check(got === want, () => `fp32 0x${bits.toString(16)}: got 0x${got.toString(16)}, want 0x${want.toString(16)}`);
        }
      }
    }
    expect(f.list).toEqual([]);
  });

  it('rounds 200000 random fp32 patterns like the search-based reference', () => {
    const rng = createRng(11);
    const f = new Failures();
    for (let i = 0; i < 200000; i++) {
      const bits = rng.nextUint32();
      const x = fp32FromBits(bits);
      if (Number.isNaN(x)) continue;
      const got = fp32BitsToFp16Bits(bits);
      f.check(got === referenceFp16(x), () => `fp32 0x${bits.toString(16)}: got 0x${got.toString(16)}`);
    }
    expect(f.list).toEqual([]);
  });

  it('handles zeros, subnormals, overflow and infinities by hand', () => {
    expect(toDtypeBits(0, 'fp16')).toBe(0x0000);
    expect(toDtypeBits(-0, 'fp16')).toBe(0x8000);
    expect(toDtypeBits(2 ** -24, 'fp16')).toBe(0x0001);
    expect(toDtypeBits(2 ** -25, 'fp16')).toBe(0x0000); // tie -> even (0)
    expect(toDtypeBits(-(2 ** -25), 'fp16')).toBe(0x8000);
    expect(toDtypeBits(3 * 2 ** -25, 'fp16')).toBe(0x0002); // tie between 1 and 2 -> 2
    expect(toDtypeBits(2 ** -14 - 2 ** -25, 'fp16')).toBe(0x0400); // tie at the subnormal top -> min normal
    expect(toDtypeBits(65504, 'fp16')).toBe(0x7bff);
    expect(toDtypeBits(65519.99, 'fp16')).toBe(0x7bff);
    expect(toDtypeBits(65520, 'fp16')).toBe(0x7c00);
    expect(toDtypeBits(-1e9, 'fp16')).toBe(0xfc00);
    expect(toDtypeBits(Infinity, 'fp16')).toBe(0x7c00);
    expect(isFp16NaN(toDtypeBits(NaN, 'fp16'))).toBe(true);
    expect(fromDtypeBits(0x3c00, 'fp16')).toBe(1);
    expect(fromDtypeBits(0xc000, 'fp16')).toBe(-2);
    expect(fromDtypeBits(0x0001, 'fp16')).toBe(minSubnormal('fp16'));
    expect(fromDtypeBits(0x7bff, 'fp16')).toBe(maxFinite('fp16'));
    expect(Object.is(fromDtypeBits(0x8000, 'fp16'), -0)).toBe(true);
  });
});

describe('bf16 <-> fp32', () => {
  it('decodes all 65536 patterns to the value the IEEE definition gives', () => {
    const values = decodeDtype(ALL, 'bf16');
    const f = new Failures();
    for (let b = 0; b < 65536; b++) {
      const want = definitionValue(b, 'bf16');
      const ok = Number.isNaN(want) ? Number.isNaN(values[b]) : Object.is(values[b], want);
      f.check(ok, () => `0x${b.toString(16)}: ${values[b]} != ${want}`);
    }
    expect(f.list).toEqual([]);
  });

  it('round-trips all 65536 patterns through fp32 (bits, scalar and bulk); NaN stays NaN', () => {
    const bulk = encodeDtype(decodeDtype(ALL, 'bf16'), 'bf16');
    const f = new Failures();
    for (let b = 0; b < 65536; b++) {
      const viaBits = fp32BitsToBf16Bits(bf16BitsToFp32Bits(b));
      const viaNumber = toDtypeBits(fromDtypeBits(b, 'bf16'), 'bf16');
      const got = () => `0x${b.toString(16)} -> ${viaBits}, ${viaNumber}, ${bulk[b]}`;
      if (isBf16NaN(b)) {
        f.check(isBf16NaN(viaBits) && isBf16NaN(viaNumber), got);
        f.check(bulk[b] === (b | 0x40), got); // payload kept, made quiet
      } else {
        f.check(viaBits === b && viaNumber === b && bulk[b] === b, got);
      }
    }
    expect(f.list).toEqual([]);
  });

  it('rounds to nearest even at every midpoint between bf16 values and one fp32 ulp either side', () => {
    const f = new Failures();
    for (let b = 0; b < 0x7f80; b++) {
      for (const sign of [0, 0x80000000]) {
        const mid = ((b << 16) | 0x8000 | sign) >>> 0;
        for (const bits of [mid - 1, mid, mid + 1]) {
          const got = fp32BitsToBf16Bits(bits);
          f.check(got === referenceBf16(fp32FromBits(bits)), () => `fp32 0x${bits.toString(16)}: got 0x${got.toString(16)}`);
        }
      }
    }
    expect(f.list).toEqual([]);
    expect(fp32BitsToBf16Bits(0x3f808000)).toBe(0x3f80); // tie, low kept bit even: down
    expect(fp32BitsToBf16Bits(0x3f818000)).toBe(0x3f82); // tie, low kept bit odd: up
  });

  it('rounds 200000 random fp32 patterns like the two-candidate reference', () => {
    const rng = createRng(12);
    const f = new Failures();
    for (let i = 0; i < 200000; i++) {
      const bits = rng.nextUint32();
      if (Number.isNaN(fp32FromBits(bits))) continue;
      const got = fp32BitsToBf16Bits(bits);
      f.check(got === referenceBf16(fp32FromBits(bits)), () => `fp32 0x${bits.toString(16)}: got 0x${got.toString(16)}`);
    }
    expect(f.list).toEqual([]);
  });

  it('handles zeros, subnormals, overflow and infinities by hand', () => {
    expect(toDtypeBits(-0, 'bf16')).toBe(0x8000);
    expect(toDtypeBits(1, 'bf16')).toBe(0x3f80);
    expect(toDtypeBits(2 ** -133, 'bf16')).toBe(0x0001);
    expect(fromDtypeBits(0x0001, 'bf16')).toBe(minSubnormal('bf16'));
    expect(toDtypeBits(maxFinite('bf16'), 'bf16')).toBe(0x7f7f);
    expect(fp32BitsToBf16Bits(0x7f7fffff)).toBe(0x7f80); // fp32 max rounds up to Inf
    expect(toDtypeBits(-Infinity, 'bf16')).toBe(0xff80);
    expect(isBf16NaN(toDtypeBits(NaN, 'bf16'))).toBe(true);
    expect(fp32BitsToBf16Bits(0x7f800001)).toBe(0x7fc0); // a NaN whose payload sits below bf16: still NaN
  });
});

describe('bulk helpers', () => {
  it('encodes Float64Array and number[] via fp32, like the scalar path', () => {
    const xs = [1 / 3, -2.5e-6, 70000, 1 + 2 ** -12, -(1 + 3 * 2 ** -12)];
    for (const dtype of ['fp16', 'bf16'] as const) {
      const want = xs.map((x) => toDtypeBits(x, dtype));
      expect(Array.from(encodeDtype(xs, dtype))).toEqual(want);
      expect(Array.from(encodeDtype(Float64Array.from(xs), dtype))).toEqual(want);
      expect(Array.from(encodeDtype(Float32Array.from(xs), dtype))).toEqual(want);
    }
  });

  it('rounds arrays in place and exposes a value table equal to decode', () => {
    const v = Float32Array.of(1 / 3, 100.07, -1e-7);
    const want = Array.from(v, (x) => roundToDtype(x, 'bf16'));
    expect(Array.from(roundArrayToDtype(v, 'bf16'))).toEqual(want);
    expect(Array.from(v)).toEqual(want);
    const table = dtypeValueTable('fp16');
    expect(table[0x3555]).toBe(fromDtypeBits(0x3555, 'fp16'));
    expect(dtypeValueTable('fp16')).toBe(table);
  });

  it('rejects an output buffer of the wrong length', () => {
    expect(() => encodeDtype([1, 2], 'fp16', new Uint16Array(3))).toThrow(/output holds 3 elements, input 2/);
    expect(() => decodeDtype(new Uint16Array(2), 'bf16', new Float32Array(1))).toThrow(/output holds 1 elements, input 2/);
  });
});
