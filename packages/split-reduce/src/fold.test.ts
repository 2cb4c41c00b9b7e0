import { encodeFloat16 } from '@rocke/ir';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { f32ToBf16Bits, f32ToF16Bits, foldSlices } from './index.js';

const fromBits = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0]!;

describe('fp32 -> fp16 / bf16, round to nearest even', () => {
  it('known patterns: normals, ties, overflow, subnormals, signed zero, infinities, NaN', () => {
    const h = f32ToF16Bits;
    expect(h(1)).toBe(0x3c00);
    expect(h(-2)).toBe(0xc000);
    expect(h(65504)).toBe(0x7bff); // largest half
    expect(h(65519)).toBe(0x7bff); // below the midpoint to 65536
    expect(h(65520)).toBe(0x7c00); // the tie rounds to even: Inf
    expect(h(1 + 2 ** -11)).toBe(0x3c00); // tie, even mantissa stays
    expect(h(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, odd mantissa rounds up
    expect(h(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(h(2 ** -25)).toBe(0x0000); // tie to even: zero
    expect(h(3 * 2 ** -26)).toBe(0x0001);
    expect(h(3 * 2 ** -25)).toBe(0x0002); // 1.5 units: tie to even 2
    expect(h(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the smallest normal
    expect(h(-0)).toBe(0x8000);
    expect(h(-Infinity)).toBe(0xfc00);
    expect(h(NaN) & 0x7e00).toBe(0x7e00);
    const b = f32ToBf16Bits;
    expect(b(1)).toBe(0x3f80);
    expect(b(fromBits(0x3f808000))).toBe(0x3f80); // tie, even stays
    expect(b(fromBits(0x3f818000))).toBe(0x3f82); // tie, odd rounds up
    expect(b(fromBits(0x3f808001))).toBe(0x3f81);
    expect(b(fromBits(0x7f7fffff))).toBe(0x7f80); // largest float rounds to Inf
    expect(b(-0)).toBe(0x8000);
    expect(b(NaN) & 0x7fc0).toBe(0x7fc0);
  });

  it('agree with @rocke/ir encodeFloat16 (a separate, double-based implementation) on 20000 random fp32 bit patterns', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (bits) => {
        const x = fromBits(bits >>> 0);
        if (Number.isNaN(x)) return true;
        return f32ToF16Bits(x) === encodeFloat16(x, 'half') && f32ToBf16Bits(x) === encodeFloat16(x, 'bfloat');
      }),
      { numRuns: 20000 },
    );
  });
});

describe('foldSlices', () => {
  it('adds the slices in the order s = 0..splits-1, each sum rounded to fp32', () => {
    // 2^24 + 1 rounds back to 2^24 in fp32, so ((2^24 + 1) + 1) - 2^24 is 0 while 2^24 - 2^24 + 1 + 1 would be 2.
    const ws = new Float32Array([2 ** 24, 1, 1, -(2 ** 24)]);
    expect(foldSlices(ws, 1, 4, 'fp16')).toEqual(new Uint16Array([0x0000]));
    const reordered = new Float32Array([2 ** 24, -(2 ** 24), 1, 1]);
    expect(foldSlices(reordered, 1, 4, 'fp16')).toEqual(new Uint16Array([0x4000]));
  });

  it('splits = 1 is a conversion, -0 kept; a stride larger than count is honoured', () => {
    expect(foldSlices(new Float32Array([-0, 1.5, 70000]), 3, 1, 'fp16')).toEqual(new Uint16Array([0x8000, 0x3e00, 0x7c00]));
    const ws = new Float32Array([1, 2, 99, 10, 20, 99]);
    expect(foldSlices(ws, 2, 2, 'bf16', 3)).toEqual(new Uint16Array([f32ToBf16Bits(11), f32ToBf16Bits(22)]));
  });

  it('rejects a workspace that is too small or bad counts', () => {
    expect(() => foldSlices(new Float32Array(5), 3, 2, 'fp16')).toThrow('ws holds 5 values; 2 slices of 3 with stride 3 need 6');
    expect(() => foldSlices(new Float32Array(5), 3, 0, 'fp16')).toThrow('splits must be a positive integer (got 0)');
    expect(() => foldSlices(new Float32Array(5), 3, 1, 'fp16', 2)).toThrow('sliceStride 2 must be an integer >= count 3');
  });
});
