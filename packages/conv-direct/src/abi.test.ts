import { describe, expect, it } from 'vitest';
import { KERNEL_ABI, KernargError, kernargLayout, kernargTable, kernargValues, orderKernargs, packKernargs, resolveKernargs, type KernargEntry } from './abi.js';
import { problem3x3 } from './test-fixtures.js';

const DENSE = ['x', 'w', 'y', 'x_bytes', 'w_bytes', 'y_bytes', 'N', 'H', 'W', 'Ho', 'Wo', 'groups', 'C', 'K', 'x_stride_n', 'x_stride_h', 'x_stride_w', 'y_stride_n', 'y_stride_h', 'y_stride_w'];

describe('kernarg tables', () => {
  it('lists the dense ABI in order and extends it per variant', () => {
    expect(kernargTable('dense').map((e) => e.name)).toEqual(DENSE);
    expect(kernargTable('grouped').map((e) => e.name)).toEqual([...DENSE, 'cpg', 'kpg']);
    expect(kernargTable('split_c').map((e) => e.name)).toEqual([...DENSE, 'ws', 'ws_bytes', 'splits']);
    for (const table of Object.values(KERNEL_ABI) as (readonly KernargEntry[])[]) {
      expect(new Set(table.map((e) => e.name)).size).toBe(table.length);
      for (const e of table) expect(e.type).toBe(['x', 'w', 'y', 'ws'].includes(e.name) ? 'ptr' : 'i32');
      expect(table.filter((e) => e.access === 'read').map((e) => e.name)).toEqual(['x', 'w']);
    }
  });

  it("lays pointers at 8-byte and i32 at 4-byte alignment (@rocke/ir's layout of the table)", () => {
    const dense = kernargLayout('dense');
    expect(dense.slots.slice(0, 4).map((s) => s.offset)).toEqual([0, 8, 16, 24]);
    expect(dense.slots.at(-1)).toEqual({ name: 'y_stride_w', type: 'i32', offset: 24 + 16 * 4, size: 4, align: 4 });
    expect(dense.size).toBe(92); // no tail padding: the buffer a launch passes ends at the last argument
    const split = kernargLayout('split_c');
    expect(split.slots.find((s) => s.name === 'ws')).toMatchObject({ offset: 96, size: 8 }); // 92 padded to 96
    expect(split.size).toBe(112);
  });
});

describe('kernargValues', () => {
  const p = problem3x3({ N: 2, H: 16, W: 32, C: 64, K: 128, strideH: 2, strideW: 2 }); // Ho 8, Wo 16
  const bufs = { x: 0x1000n, w: 0x2000n, y: 0x3000n };

  it('fills every dense slot from the problem', () => {
    expect(kernargValues('dense', p, bufs)).toEqual([
      0x1000n, 0x2000n, 0x3000n,
      2 * 2 * 16 * 32 * 64, 2 * 128 * 9 * 64, 2 * 2 * 8 * 16 * 128,
      2, 16, 32, 8, 16, 1, 64, 128,
      16 * 32 * 64, 32 * 64, 64,
      8 * 16 * 128, 16 * 128, 128,
    ]);
  });

  it('adds cpg/kpg for grouped and ws/ws_bytes/splits for split_c', () => {
    const g = kernargValues('grouped', { ...p, groups: 4 }, bufs);
    expect(g.slice(-2)).toEqual([16, 32]);
    expect(g[5]).toBe(2 * 2 * 8 * 16 * 128);
    expect(g[4]).toBe(2 * 128 * 9 * 16);
    const s = kernargValues('split_c', p, { ...bufs, ws: { buffer: 'ws', offsetBytes: 0 } }, { splits: 4 });
    expect(s.slice(-3)).toEqual([{ buffer: 'ws', offsetBytes: 0 }, 4 * 4 * 2 * 8 * 16 * 128, 4]);
  });

  it('refuses missing split counts, stray workspaces and byte counts past the range', () => {
    expect(() => kernargValues('split_c', p, bufs, { splits: 2 })).toThrow('split_c kernargs need the ws buffer');
    expect(() => kernargValues('split_c', p, { ...bufs, ws: 1n })).toThrow('split_c kernargs need a split count');
    expect(() => kernargValues('dense', p, { ...bufs, ws: 1n })).toThrow('dense kernargs take no ws buffer');
    expect(() => kernargValues('dense', p, bufs, { splits: 2 })).toThrow('dense kernargs take no split count (got 2)');
    const huge = problem3x3({ N: 300, H: 256, W: 256, C: 64, K: 64 });
    expect(() => kernargValues('dense', huge, bufs)).toThrow(/kernarg x_bytes \(i32\): \d+ is not an i32/);
    const nearly = problem3x3({ N: 255, H: 256, W: 256, C: 64, K: 64, R: 1, S: 1, padH: 0, padW: 0 });
    expect(() => kernargValues('dense', { ...nearly, N: 255 }, bufs)).toThrow('kernarg x_bytes (i32): 2139095040 bytes exceed the per-launch limit 2130706432');
  });
});

describe('orderKernargs', () => {
  const named = (): Record<string, number | bigint> => Object.fromEntries(DENSE.map((n, i) => [n, ['x', 'w', 'y'].includes(n) ? BigInt(i) : i]));

  it('orders by the table regardless of insertion order', () => {
    const reversed = Object.fromEntries(Object.entries(named()).reverse());
    expect(orderKernargs('dense', reversed)).toEqual(DENSE.map((n, i) => (['x', 'w', 'y'].includes(n) ? BigInt(i) : i)));
  });

  it('names every missing and unexpected kernarg', () => {
    const v = named();
    delete v.Ho;
    delete v.K;
    v.Hout = 3;
    expect(() => orderKernargs('dense', v)).toThrow(new KernargError('dense kernargs do not match the ABI table: missing Ho, K unexpected Hout'));
  });

  it('type-checks values', () => {
    expect(() => orderKernargs('dense', { ...named(), N: 1.5 })).toThrow('kernarg N (i32): 1.5 is not an i32');
    expect(() => orderKernargs('dense', { ...named(), x: 7 })).toThrow('kernarg x (ptr): expects a bigint address or a buffer view');
    expect(() => orderKernargs('dense', { ...named(), x: -1n })).toThrow(/is not a 64-bit unsigned value/);
  });
});

describe('packKernargs', () => {
  it('writes little-endian values at the layout offsets', () => {
    const p = problem3x3();
    const values = resolveKernargs(
      kernargValues('split_c', p, { x: { buffer: 'x', offsetBytes: 16 }, w: 0xabcdn, y: { buffer: 'y', offsetBytes: 0 }, ws: { buffer: 'ws', offsetBytes: 8 } }, { splits: 2 }),
      { x: 0x1_0000_0000n, y: 0x2000n, ws: 0x3000n },
    );
    const bytes = packKernargs('split_c', values);
    const view = new DataView(bytes.buffer);
    expect(bytes.length).toBe(112);
    expect(view.getBigUint64(0, true)).toBe(0x1_0000_0010n);
    expect(view.getBigUint64(8, true)).toBe(0xabcdn);
    expect(view.getBigUint64(16, true)).toBe(0x2000n);
    expect(view.getInt32(24, true)).toBe(2 * 2 * 16 * 32 * 64);
    expect(view.getInt32(24 + 3 * 4, true)).toBe(2); // N, after the three byte counts
    expect(view.getBigUint64(96, true)).toBe(0x3008n);
    expect(view.getInt32(108, true)).toBe(2); // splits
    expect(() => packKernargs('dense', values)).toThrow('dense takes 20 kernargs, got 23');
    expect(() => resolveKernargs([{ buffer: 'ws', offsetBytes: 0 }], {})).toThrow('no address for buffer ws');
  });
});
