import { f32, i32, i64, ptr, typeEquals } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { KERNARG_TABLE, SplitReduceError, buildSplitReduce, defaultSpec, kernargValues, kernelName, kernelParams, orderKernargs, resolveKernargs } from './index.js';

const ws = { buffer: 'ws' as const, offsetBytes: 0 };
const y = { buffer: 'y' as const, offsetBytes: 0 };

describe('kernel ABI', () => {
  it('one table, in kernel-parameter order', () => {
    expect(KERNARG_TABLE.map((e) => `${e.name}:${e.type}`)).toEqual(['ws:ptr', 'y:ptr', 'ws_bytes:i32', 'y_bytes:i32', 'count:i32', 'splits:i32', 'slice_stride:i64']);
    for (const e of KERNARG_TABLE) expect(e.doc.length).toBeGreaterThan(10);
  });

  it('the kernel parameters are generated from the table', () => {
    const spec = defaultSpec('gfx950', 'bf16', 8);
    const fn = buildSplitReduce(spec).getFunction(kernelName(spec))!;
    expect(fn.args.map((a) => a.name)).toEqual(KERNARG_TABLE.map((e) => e.name));
    const irType = { ptr: ptr(1), i32, i64, f32 } as const;
    fn.args.forEach((a, n) => expect(typeEquals(a.type, irType[KERNARG_TABLE[n]!.type])).toBe(true));
    expect(kernelParams()[0]!.attributes).toEqual(['noalias', 'readonly']);
    expect(kernelParams()[1]!.attributes).toEqual(['noalias', 'writeonly']);
  });

  it('kernargValues derives byte counts from count and dtype', () => {
    expect(kernargValues({ ws, y, count: 1000, splits: 3, sliceStride: 1000, dtype: 'fp16' })).toEqual([ws, y, 4000, 2000, 1000, 3, 1000]);
    expect(kernargValues({ ws: 0x1000n, y: 0x2000n, count: 5, splits: 1, sliceStride: 2 ** 40, dtype: 'bf16' })).toEqual([0x1000n, 0x2000n, 20, 10, 5, 1, 2 ** 40]);
  });

  it('orderKernargs names every missing and unexpected argument', () => {
    expect(() => orderKernargs({ ws, y, ws_bytes: 4, y_bytes: 2, count: 1, splits: 1 })).toThrow('split-reduce kernargs do not match the ABI table: missing slice_stride');
    expect(() => orderKernargs({ ws, y, ws_bytes: 4, y_bytes: 2, count: 1, splits: 1, slice_stride: 1, N: 1 })).toThrow(/unexpected N$/);
  });

  it('rejects values out of their type or past the view limit', () => {
    const ok = { ws, y, ws_bytes: 4, y_bytes: 2, count: 1, splits: 1, slice_stride: 1 };
    const bad = (patch: object) => () => orderKernargs({ ...ok, ...patch });
    expect(bad({ splits: 0 })).toThrow('kernarg splits (i32): at least one slice is needed');
    expect(bad({ count: 2 ** 31 })).toThrow('kernarg count (i32): 2147483648 does not fit an i32');
    expect(bad({ count: 1.5 })).toThrow(/count \(i32\): 1.5 is not a non-negative integer/);
    expect(bad({ ws_bytes: 0x7f000004 })).toThrow('kernarg ws_bytes (i32): 2130706436 bytes exceed the per-view limit 0x7F000000');
    expect(bad({ ws: 5 })).toThrow('kernarg ws (ptr): expects a bigint address or a buffer view');
    expect(bad({ y: { buffer: 'y', offsetBytes: -2 } })).toThrow('kernarg y (ptr): offset -2 is not a non-negative integer');
    expect(bad({ ws: -1n })).toThrow(/address -1 is not a 64-bit unsigned value/);
    expect(bad({ slice_stride: 2 ** 40 })).not.toThrow(); // i64
    expect(bad({ ws_bytes: 4 })).not.toThrow(SplitReduceError);
  });

  it('resolveKernargs turns views into addresses', () => {
    const values = kernargValues({ ws: { buffer: 'ws', offsetBytes: 64 }, y: { buffer: 'y', offsetBytes: 32 }, count: 8, splits: 2, sliceStride: 8, dtype: 'fp16' });
    expect(resolveKernargs(values, { ws: 0x10000n, y: 0x20000n })).toEqual([0x10040n, 0x20020n, 32, 16, 8, 2, 8]);
    expect(() => resolveKernargs(values, { ws: 0x10000n })).toThrow('no address for buffer y');
  });
});
