import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeFloat16, encodeFloat16, roundToFloat } from '../float.js';
import {
  HALF_VALUES, fusedMultiplyAdd, add64, and64, ashr64, bfloatFromBits, bfloatToBits, cmpS64, cmpU64, halfToBits, lshr64, mul64, normI64, or64, roundBfloat,
  roundHalf, sdiv64, shl64, srem64, sub64, udiv64, urem64, xor64,
} from './numeric.js';
import type { I64 } from './numeric.js';

describe('16-bit float rounding (checked against the slow reference in float.ts)', () => {
  it('every half and bfloat bit pattern round-trips', () => {
    for (let b = 0; b < 65536; b++) {
      const h = HALF_VALUES[b]!;
      if (!Number.isNaN(h)) {
        expect(halfToBits(h)).toBe(b);
        expect(h).toBe(decodeFloat16(b, 'half'));
      }
      const f = bfloatFromBits(b);
      if (!Number.isNaN(f)) {
        expect(bfloatToBits(f)).toBe(b);
        expect(f).toBe(decodeFloat16(b, 'bfloat'));
      }
    }
  });

  it('midpoints between neighbouring values round to the even one (half and bfloat)', () => {
    for (const [kind, round] of [['half', roundHalf], ['bfloat', roundBfloat]] as const) {
      for (let b = 0; b < 0x7bff; b += 7) {
        const lo = decodeFloat16(b, kind);
        const hi = decodeFloat16(b + 1, kind);
        if (!Number.isFinite(hi)) continue;
        const even = b % 2 === 0 ? lo : hi;
        expect(round((lo + hi) / 2)).toBe(even);
        expect(round(-(lo + hi) / 2)).toBe(-even);
      }
    }
  });

  it('hand-picked cases: ties, overflow, subnormals, signed zero', () => {
    expect(roundHalf(1 + 2 ** -11)).toBe(1);
    expect(roundHalf(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(roundHalf(65519)).toBe(65504);
    expect(roundHalf(65520)).toBe(Infinity);
    expect(roundHalf(2 ** -25)).toBe(0);
    expect(roundHalf(3 * 2 ** -25)).toBe(2 ** -23);
    expect(Object.is(roundHalf(-(2 ** -26)), -0)).toBe(true);
    expect(roundBfloat(1 + 2 ** -8)).toBe(1);
    expect(roundBfloat(1 + 3 * 2 ** -8)).toBe(1 + 2 ** -6);
    expect(roundBfloat(3.4e38)).toBe(Infinity);
    expect(Number.isNaN(roundHalf(NaN))).toBe(true);
  });

  it('agrees with roundToFloat on arbitrary doubles', () => {
    fc.assert(fc.property(fc.double({ noNaN: true }), (x) => {
      expect(roundHalf(x)).toBe(roundToFloat(x, 'half'));
      expect(roundBfloat(x)).toBe(roundToFloat(x, 'bfloat'));
      expect(halfToBits(roundHalf(x))).toBe(encodeFloat16(x, 'half'));
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.float({ noNaN: true }), (x) => {
      expect(roundHalf(x)).toBe(roundToFloat(x, 'half'));
      expect(roundBfloat(x)).toBe(roundToFloat(x, 'bfloat'));
    }), { numRuns: 3000 });
  });
});

describe('i64 arithmetic on number | bigint (checked against BigInt.asIntN)', () => {
  const i64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }), fc.constantFrom(0n, 1n, -1n, 2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)));
  const w = (x: bigint) => BigInt.asIntN(64, x);
  const u = (x: bigint) => BigInt.asUintN(64, x);
  const big = (x: I64) => BigInt(x);

  it('stays on numbers for safe values and wraps like LLVM', () => {
    expect(add64(1, 2)).toBe(3);
    expect(add64(2 ** 52, 2 ** 52)).toBe(2n ** 53n); // 2^53 is not a safe integer
    expect(sub64(2n ** 53n, 1)).toBe(2 ** 53 - 1); // and back to a number
    expect(add64(normI64(2n ** 63n - 1n), 1)).toBe(-(2n ** 63n));
    expect(mul64(2 ** 40, 2 ** 30)).toBe(0); // 2^70 wraps to 0
  });

  it('matches BigInt for every operation', () => {
    fc.assert(fc.property(i64, i64, fc.integer({ min: 0, max: 63 }), (a, b, s) => {
      const x = normI64(a);
      const y = normI64(b);
      expect(big(add64(x, y))).toBe(w(a + b));
      expect(big(sub64(x, y))).toBe(w(a - b));
      expect(big(mul64(x, y))).toBe(w(a * b));
      expect(big(and64(x, y))).toBe(w(a & b));
      expect(big(or64(x, y))).toBe(w(a | b));
      expect(big(xor64(x, y))).toBe(w(a ^ b));
      expect(big(shl64(x, s))).toBe(w(a << BigInt(s)));
      expect(big(ashr64(x, s))).toBe(w(a >> BigInt(s)));
      expect(big(lshr64(x, s))).toBe(w(u(a) >> BigInt(s)));
      expect(cmpS64(x, y)).toBe(a < b ? -1 : a > b ? 1 : 0);
      expect(cmpU64(x, y)).toBe(u(a) < u(b) ? -1 : u(a) > u(b) ? 1 : 0);
      if (b !== 0n) {
        expect(big(sdiv64(x, y))).toBe(w(a / b));
        expect(big(srem64(x, y))).toBe(w(a % b));
        expect(big(udiv64(x, y))).toBe(w(u(a) / u(b)));
        expect(big(urem64(x, y))).toBe(w(u(a) % u(b)));
      }
      // Canonical form: a number exactly when the value is a safe integer.
      const r = add64(x, y);
      expect(typeof r === 'number').toBe(Number.isSafeInteger(Number(w(a + b))) && BigInt(Number(w(a + b))) === w(a + b));
    }), { numRuns: 2000 });
  });
});

describe('fusedMultiplyAdd rounds once', () => {
  it('a residual below double precision still breaks an f32 tie (naive p*q+c would round the wrong way)', () => {
    const p = 1 + 2 ** -12; // p*p = 1 + 2^-11 + 2^-24: exactly halfway between two floats
    expect(Math.fround(p * p + 2 ** -70)).toBe(1 + 2 ** -11); // double rounding: tie to even, down
    expect(fusedMultiplyAdd(p, p, 2 ** -70, Math.fround)).toBe(1 + 2 ** -11 + 2 ** -23);
    expect(fusedMultiplyAdd(p, p, -(2 ** -70), Math.fround)).toBe(1 + 2 ** -11);
    expect(fusedMultiplyAdd(-p, p, 2 ** -70, Math.fround)).toBe(-(1 + 2 ** -11));
  });

  it('matches exact rational arithmetic on random f32 triples', () => {
    // The exact a*b + c in BigInt units of 2^-298 (f32 values are multiples of 2^-149); no float may be closer than the result.
    fc.assert(fc.property(fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), (a, b, c) => {
      const r = fusedMultiplyAdd(a, b, c, Math.fround);
      const exact = (x: number) => BigInt(x * 2 ** 149);
      const e = exact(a) * exact(b) + exact(c) * 2n ** 149n; // in units of 2^-298
      expect(Math.fround(r)).toBe(r);
      // r is the nearest float to e: no float lies strictly closer.
      const dist = (v: number) => { const d = exact(v) * 2n ** 149n - e; return d < 0n ? -d : d; };
      const up = (v: number): number => {
        if (v === 0) return 2 ** -149;
        const f = Float32Array.of(v);
        const u = new Int32Array(f.buffer);
        u[0] = u[0]! + (v > 0 ? 1 : -1);
        return f[0]!;
      };
      expect(dist(r) <= dist(up(r))).toBe(true);
      expect(dist(r) <= dist(-up(-r))).toBe(true);
    }), { numRuns: 500 });
  });
});
