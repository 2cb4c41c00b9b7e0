import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kernargArgs, kernargLayout, kernargParams, readKernarg, writeKernarg, type KernargEntry } from './kernarg.js';
import { printModule } from './printer.js';
import { gfx950 } from './targets/index.js';
import { findToolchain } from './toolchain.js';
import { bfloat, f32, f64, half, i1, i16, i32, i64, i8, ptr, sizeOf, storeSizeOf, vec } from './types.js';
import type { Type } from './types.js';

const pool: Type[] = [i1, i8, i16, i32, i64, half, bfloat, f32, f64, ptr(1), ptr(4), vec(2, half), vec(4, i32), vec(3, i32), vec(3, f32), vec(2, i64), vec(8, bfloat), vec(4, i8)];

describe('kernargLayout', () => {
  it('places arguments at natural alignment; a launch passes the end of the last slot, llc reports it rounded to 4', () => {
    const l = kernargLayout([{ name: 'a', type: i32 }, { name: 'b', type: i8 }, { name: 'c', type: i64 }, { name: 'd', type: i16 }, { name: 'e', type: ptr(1) }]);
    expect(l.slots.map((s) => s.offset)).toEqual([0, 4, 8, 16, 24]);
    expect([l.size, l.segmentSize]).toEqual([32, 32]);
    const odd = kernargLayout([{ name: 'a', type: i32 }, { name: 'b', type: i8 }]);
    expect([odd.size, odd.segmentSize]).toEqual([5, 8]);
    // The cuLaunchKernel case: a pointer then a 16-bit value is 10 bytes, not a padded 16.
    expect(kernargLayout([{ name: 'a', type: ptr(1) }, { name: 'b', type: i16 }]).size).toBe(10);
    const v = kernargLayout([{ name: 'a', type: ptr(1) }, { name: 'b', type: i32 }, { name: 'c', type: half }, { name: 'd', type: vec(4, i32) }, { name: 'e', type: ptr(1) }]);
    expect(v.slots.map((s) => s.offset)).toEqual([0, 8, 12, 16, 32]);
    expect(v.align).toBe(16);
    expect(storeSizeOf(vec(3, i32))).toBe(12);
    expect(sizeOf(vec(3, i32))).toBe(16);
  });

  it('matches the offsets and sizes llc writes into gfx950 code-object metadata for random parameter lists', () => {
    const lists = fc.sample(fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 9 }), { numRuns: 25, seed: 3 });
    const m = gfx950.createModule();
    for (const [n, types] of lists.entries()) {
      const b = gfx950.kernel(m, `k${n}`, types.map((type, j) => ({ name: `a${j}`, type })), { workgroupSize: 64 });
      b.ret();
    }
    const tc = findToolchain();
    const dir = mkdtempSync(join(tmpdir(), 'rocke-ir-kernarg-'));
    try {
      const obj = join(dir, 'k.o');
      execFileSync(tc.llc, ['-mcpu=gfx950', '-filetype=obj', '-', '-o', obj], { input: printModule(m) });
      const readelf = tc.objdump.replace(/llvm-objdump([^/]*)$/, 'llvm-readelf$1');
      const notes = execFileSync(readelf, ['--notes', obj], { encoding: 'utf8' });
      // Per kernel: the .args list (offset/size pairs) and .kernarg_segment_size, in metadata order.
      const kernels = notes.split(/\n  - \.agpr_count:/).slice(1);
      expect(kernels).toHaveLength(lists.length);
      for (const text of kernels) {
        const name = /\.name:\s+(k\d+)\n/.exec(text.slice(text.lastIndexOf('.name:') - 1))?.[1];
        const types = lists[Number(name!.slice(1))]!;
        const want = kernargLayout(types.map((type, j) => ({ name: `a${j}`, type })));
        const offsets = [...text.matchAll(/\.offset:\s+(\d+)/g)].map((x) => Number(x[1]));
        const sizes = [...text.matchAll(/\.size:\s+(\d+)/g)].map((x) => Number(x[1]));
        expect({ name, offsets, sizes }).toEqual({ name, offsets: want.slots.map((s) => s.offset), sizes: want.slots.map((s) => s.size) });
        expect(Number(/\.kernarg_segment_size:\s+(\d+)/.exec(text)![1])).toBe(want.segmentSize);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lays out host kinds exactly as their IR types, and round-trips values through the slots', () => {
    const table = [
      { name: 'p', type: 'ptr', access: 'read', doc: '' },
      { name: 'n', type: 'i32', doc: '' },
      { name: 'q', type: 'i64', doc: '' },
      { name: 'a', type: 'f32', doc: '' },
      { name: 'y', type: 'ptr', access: 'write', doc: '' },
    ] as const satisfies readonly KernargEntry[];
    const host = kernargLayout(table);
    const ir = kernargLayout(kernargParams(table));
    expect(host.slots.map((s) => [s.offset, s.size])).toEqual(ir.slots.map((s) => [s.offset, s.size]));
    expect(host.slots.map((s) => s.offset)).toEqual([0, 8, 16, 24, 32]);
    expect([host.size, host.align]).toEqual([40, 8]);
    const values = [0x1234_5678_9abcn, -7, -(2n ** 40n), 1.5, 2n ** 64n - 1n];
    const view = new DataView(new ArrayBuffer(host.size));
    host.slots.forEach((s, i) => writeKernarg(view, s, values[i]!));
    expect(host.slots.map((s) => readKernarg(view, s))).toEqual(values);
    expect(kernargParams(table).map((p) => p.attributes)).toEqual([['noalias'], [], [], [], ['noalias']]);
    expect(kernargParams(table, { accessAttributes: true }).map((p) => p.attributes)).toEqual([['noalias', 'readonly'], [], [], [], ['noalias', 'writeonly']]);
    expect(() => kernargLayout([{ name: 'x', type: 'f16' as 'f32' }])).toThrow("unknown kernarg type 'f16'");
  });

  it('gives a kernel its arguments by name from a literal table', () => {
    const table = [{ name: 'x', type: 'ptr', doc: '' }, { name: 'n', type: 'i32', doc: '' }] as const satisfies readonly KernargEntry[];
    const b = gfx950.kernel(gfx950.createModule(), 'k', kernargParams(table), { workgroupSize: 64 });
    const args = kernargArgs(b, table);
    expect([args.x, args.n]).toEqual([b.arg('x'), b.arg('n')]);
    // @ts-expect-error: not a row of the table
    expect(args.m).toBeUndefined();
    expect(() => kernargArgs(b, [{ name: 'y' }])).toThrow('has no parameter %y');
  });

  it('rejects parameters without a size', () => {
    expect(() => kernargLayout([{ name: 'x', type: ptr(3) }])).toThrow(/size of ptr addrspace\(3\) depends on the target/);
  });
});
