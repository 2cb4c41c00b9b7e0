import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeFloat16, encodeFloat16, floatHex, roundToFloat } from './float.js';

describe('float encodings', () => {
  it('prints float/double constants as the 64-bit hex of the equal double', () => {
    expect(floatHex(1, 'float')).toBe('0x3FF0000000000000');
    // 0.1 is not a float: it is rounded to the nearest float first (0x3DCCCCCD), whose double is 0x3FB99999A0000000.
    expect(floatHex(0.1, 'float')).toBe('0x3FB99999A0000000');
    expect(floatHex(0.1, 'double')).toBe('0x3FB999999999999A');
    expect(floatHex(-0, 'float')).toBe('0x8000000000000000');
    expect(floatHex(Infinity, 'float')).toBe('0x7FF0000000000000');
  });

  it('prints half as 0xH and bfloat as 0xR with round-to-nearest-even', () => {
    expect(floatHex(1, 'half')).toBe('0xH3C00');
    expect(floatHex(-2, 'half')).toBe('0xHC000');
    expect(floatHex(65504, 'half')).toBe('0xH7BFF');
    expect(floatHex(65520, 'half')).toBe('0xH7C00'); // halfway to the next binade rounds to even = inf
    expect(floatHex(1, 'bfloat')).toBe('0xR3F80');
    expect(floatHex(0.1, 'bfloat')).toBe('0xR3DCD');
    // 1 + 2^-8 is exactly halfway between bfloat 1 and 1 + 2^-7: ties go to the even mantissa (1).
    expect(floatHex(1 + 2 ** -8, 'bfloat')).toBe('0xR3F80');
    expect(floatHex(1 + 3 * 2 ** -8, 'bfloat')).toBe('0xR3F82');
    expect(floatHex(2 ** -24, 'half')).toBe('0xH0001'); // smallest subnormal
    expect(floatHex(2 ** -25, 'half')).toBe('0xH0000'); // tie to even (0)
    expect(floatHex(NaN, 'half')).toBe('0xH7E00');
  });

  it('agrees with Float32 rounding for bfloat bit patterns (bfloat = top half of float)', () => {
    const view = new DataView(new ArrayBuffer(4));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), (bits) => {
        view.setUint32(0, bits << 16);
        const x = view.getFloat32(0);
        if (Number.isNaN(x)) return;
        expect(encodeFloat16(x, 'bfloat')).toBe(bits);
      }),
    );
  });

  it('round-trips every finite half pattern and rounds to a representable neighbour', () => {
    const wrong: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const x = decodeFloat16(bits, 'half');
      if (!Number.isNaN(x) && encodeFloat16(x, 'half') !== bits) wrong.push(bits);
    }
    expect(wrong).toEqual([]);
    fc.assert(
      fc.property(fc.double({ min: -60000, max: 60000, noNaN: true }), (x) => {
        const r = roundToFloat(x, 'half');
        const bits = encodeFloat16(r, 'half');
        const up = decodeFloat16(bits + (r >= 0 ? 1 : -1), 'half');
        expect(Math.abs(r - x)).toBeLessThanOrEqual(Math.abs(up - r) / 2 + 1e-30);
      }),
    );
  });
});
