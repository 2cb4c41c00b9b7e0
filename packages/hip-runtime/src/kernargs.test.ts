import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KernargError } from './errors.js';
import type { KernargSignature, KernargType } from './kernargs.js';
import { kernargLayout, packKernargs, sameKernargTypes, unpackKernargs } from './kernargs.js';

const sig = (...types: KernargType[]): KernargSignature => types.map((type, i) => ({ name: `p${i}`, type }));
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('kernargLayout', () => {
  it('places each parameter at its natural alignment, in order, with no tail padding', () => {
    const layout = kernargLayout(sig('i32', 'i64', 'ptr'));
    expect(layout.slots.map((f) => f.offset)).toEqual([0, 8, 16]);
    expect(layout.size).toBe(24);
    expect(layout.align).toBe(8);
  });

  it('matches the smoke kernel ew(y, x, n, base, a, idx): 0, 8, 16, 24, 32, 40 / 48 bytes', () => {
    const layout = kernargLayout(sig('ptr', 'ptr', 'i32', 'i64', 'f32', 'ptr'));
    expect(layout.slots.map((f) => f.offset)).toEqual([0, 8, 16, 24, 32, 40]);
    expect(layout.size).toBe(48);
  });

  it('packs 4-byte parameters back to back and ends at the last one', () => {
    expect(kernargLayout(sig('ptr', 'i32', 'f32', 'i32')).slots.map((f) => f.offset)).toEqual([0, 8, 12, 16]);
    expect(kernargLayout(sig('ptr', 'i32', 'f32', 'i32')).size).toBe(20);
    expect(kernargLayout(sig('ptr', 'ptr', 'ptr', 'i32', 'i32', 'i32')).size).toBe(36);
    expect(kernargLayout(sig('i32')).size).toBe(4);
  });

  it('caches layouts of frozen signatures only, so a mutated array is laid out again', () => {
    const frozen = Object.freeze([Object.freeze({ name: 'a', type: 'i32' as const })]);
    expect(kernargLayout(frozen)).toBe(kernargLayout(frozen));
    const open: { name: string; type: KernargType }[] = [{ name: 'a', type: 'i32' }];
    expect(kernargLayout(open).size).toBe(4);
    open.unshift({ name: 'p', type: 'ptr' });
    expect(kernargLayout(open).size).toBe(12);
  });

  it('an empty signature is 0 bytes', () => {
    expect(kernargLayout([])).toEqual({ slots: [], size: 0, segmentSize: 0, align: 1 });
  });

  it('rejects duplicate names, unknown types and malformed entries', () => {
    expect(() => kernargLayout([{ name: 'a', type: 'i32' }, { name: 'a', type: 'f32' }])).toThrow(/names 'a' twice/);
    expect(() => kernargLayout([{ name: 'h', type: 'f16' as KernargType }])).toThrow(/unknown type 'f16'/);
    expect(() => kernargLayout([{ name: '', type: 'i32' }])).toThrow(/has no name/);
    expect(() => kernargLayout([null as never])).toThrow(KernargError);
    expect(() => kernargLayout('ptr' as never)).toThrow(/must be an array/);
  });

  it('property: offsets are aligned, increasing, non-overlapping, and size ends at the last field', () => {
    const types = fc.constantFrom<KernargType>('ptr', 'i32', 'i64', 'f32');
    fc.assert(
      fc.property(fc.array(types, { maxLength: 24 }), (list) => {
        const { slots: fields, size } = kernargLayout(sig(...list));
        let end = 0;
        for (const f of fields) {
          expect(f.offset % f.size).toBe(0);
          expect(f.offset).toBeGreaterThanOrEqual(end);
          expect(f.offset - end).toBeLessThan(f.size); // padding only up to the alignment
          end = f.offset + f.size;
        }
        expect(size).toBe(end);
      }),
    );
  });
});

describe('packKernargs encodings', () => {
  it('writes little-endian two-complement i32 and i64, IEEE f32, 64-bit pointers, zeroed padding', () => {
    const packed = packKernargs(sig('i32', 'i64', 'f32', 'ptr'), [-2, -(2n ** 35n) + 7n, 1.5, 0x1122334455667788n]);
    expect(hex(packed.bytes)).toBe(
      'feffffff' + '00000000' + // i32 -2, then 4 bytes of padding
        '07000000f8ffffff' + // i64 -2^35 + 7
        '0000c03f' + '00000000' + // f32 1.5 = 0x3fc00000, padding
        '8877665544332211', // ptr
    );
  });

  it('accepts safe-integer numbers for i64 and null for a pointer', () => {
    const packed = packKernargs(sig('i64', 'ptr'), [2 ** 40 + 3, null]);
    expect(unpackKernargs(packed.layout, packed.bytes)).toEqual({ p0: 2n ** 40n + 3n, p1: 0n });
  });

  it('rounds f32 to nearest and keeps NaN and infinities', () => {
    const packed = packKernargs(sig('f32', 'f32', 'f32'), [0.1, Number.NaN, -Infinity]);
    const back = unpackKernargs(packed.layout, packed.bytes);
    expect(back.p0).toBe(Math.fround(0.1));
    expect(back.p1).toBeNaN();
    expect(back.p2).toBe(-Infinity);
  });

  it('takes a device buffer through its address and remembers it for the launch', () => {
    const buffer = { address: 0x7f00_0000_1000n };
    const packed = packKernargs(sig('ptr', 'i32'), [buffer, 5]);
    expect(unpackKernargs(packed.layout, packed.bytes).p0).toBe(0x7f00_0000_1000n);
    expect(packed.pointers).toEqual([buffer]);
  });

  it('takes values keyed by name in any order', () => {
    const signature: KernargSignature = [
      { name: 'x', type: 'ptr' },
      { name: 'n', type: 'i32' },
      { name: 'scale', type: 'f32' },
    ];
    const byName = packKernargs(signature, { scale: 2, n: 9, x: 16n });
    expect(byName.bytes).toEqual(packKernargs(signature, [16n, 9, 2]).bytes);
  });

  it('property: unpack(pack(values)) gives the values back', () => {
    const value = {
      i32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      i64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      f32: fc.float({ noNaN: true }),
      ptr: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    };
    const entry = fc.constantFrom<KernargType>('ptr', 'i32', 'i64', 'f32').chain((type) => value[type].map((v) => ({ type, v })));
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 16 }), (entries) => {
        const signature = sig(...entries.map((e) => e.type));
        const packed = packKernargs(signature, entries.map((e) => e.v as number | bigint));
        const back = unpackKernargs(packed.layout, packed.bytes);
        entries.forEach((e, i) => expect(back[`p${i}`]).toBe(e.v));
      }),
    );
  });
});

describe('packKernargs errors', () => {
  const errorOf = (run: () => unknown): KernargError => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(KernargError);
      return error as KernargError;
    }
    throw new Error('expected a KernargError');
  };

  it('wrong count names the parameters', () => {
    expect(errorOf(() => packKernargs(sig('ptr', 'i32'), [1n])).message).toBe('expected 2 kernel argument(s) (p0, p1), got 1');
  });

  it('unknown and missing names', () => {
    expect(errorOf(() => packKernargs(sig('i32'), { p0: 1, extra: 2 })).message).toMatch(/unknown kernel argument\(s\): extra/);
    expect(errorOf(() => packKernargs(sig('i32', 'i32'), { p0: 1 })).message).toMatch(/missing kernel argument\(s\): p1/);
  });

  it.each([
    ['i32', 1.5, /integer number/],
    ['i32', 2 ** 31, /\[-2\^31, 2\^31-1\]/],
    ['i32', 7n, /integer number, got 7n/],
    ['i32', '3', /integer number, got "3"/],
    ['i64', 2 ** 53, /bigint or a safe-integer/],
    ['i64', 2n ** 63n, /\[-2\^63, 2\^63-1\]/],
    ['f32', 4e38, /round to infinity/],
    ['f32', 1n, /must be a number/],
    ['ptr', 4096, /device buffer, a view, a bigint address or null/],
    ['ptr', -1n, /64-bit address/],
    ['ptr', 2n ** 64n, /64-bit address/],
    ['ptr', { address: 5 }, /address is a bigint/],
  ] as const)('%s rejects %s', (type, value, message) => {
    const error = errorOf(() => packKernargs([{ name: 'arg', type }], [value as never]));
    expect(error.message).toMatch(message);
    expect(error.argument).toBe('arg');
  });

  it('a freed buffer cannot be packed', () => {
    const freed = {
      get address(): bigint {
        throw new Error('the buffer was freed');
      },
    };
    expect(() => packKernargs(sig('ptr'), [freed])).toThrow('the buffer was freed');
  });

  it('non-array, non-object values', () => {
    expect(errorOf(() => packKernargs(sig('i32'), 5 as never)).message).toMatch(/array or an object/);
  });
});

describe('sameKernargTypes', () => {
  it('compares types in order and ignores names', () => {
    expect(sameKernargTypes(sig('ptr', 'i32'), [{ name: 'a', type: 'ptr' }, { name: 'b', type: 'i32' }])).toBe(true);
    expect(sameKernargTypes(sig('ptr', 'i32'), sig('i32', 'ptr'))).toBe(false);
    expect(sameKernargTypes(sig('ptr'), sig('ptr', 'ptr'))).toBe(false);
  });
});
