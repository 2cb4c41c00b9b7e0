/** Intrinsic families, each against hand-computed results. */
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import { constFloat } from '../constants.js';
import type { Value } from '../ir.js';
import { getTarget } from '../targets/index.js';
import type { Target } from '../targets/target.js';
import { array, f32, i16, i32, ptr, struct, vec, voidT } from '../types.js';
import { interpret } from './index.js';

const gfx950 = getTarget('gfx950');
const sm90 = getTarget('sm_90');

/** A kernel storing `values(b)` (i32 each) at out[thread * count + i]. */
function perThread(t: Target, count: number, values: (b: Builder, flat: Value) => Value[], o: { block: [number, number, number]; grid?: [number, number, number] }) {
  const m = t.createModule();
  const b = t.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: o.block[0] * o.block[1] * o.block[2], ids: { workitem: ['x', 'y', 'z'], workgroup: ['x', 'y', 'z'] } });
  const [tx, ty, tz] = (['x', 'y', 'z'] as const).map((a) => t.workitemId(b, a));
  const [gx, gy, gz] = (['x', 'y', 'z'] as const).map((a) => t.workgroupId(b, a));
  const grid = o.grid ?? [1, 1, 1];
  const wg = b.add(gx!, b.mul(grid[0], b.add(gy!, b.mul(grid[1], gz!))));
  const local = b.add(tx!, b.mul(o.block[0], b.add(ty!, b.mul(o.block[1], tz!))));
  const flat = b.add(b.mul(wg, o.block[0] * o.block[1] * o.block[2]), local);
  values(b, flat).forEach((v, i) => b.store(v, b.gep(i32, b.arg('out'), [b.add(b.mul(flat, count), i)])));
  b.ret();
  const total = grid[0] * grid[1] * grid[2] * o.block[0] * o.block[1] * o.block[2];
  const out = new Int32Array(total * count);
  interpret(m, 'k', { target: t, grid, block: o.block, args: [out] });
  return Array.from({ length: total }, (_, i) => Array.from(out.subarray(i * count, (i + 1) * count)));
}

describe('ids', () => {
  it('AMD workitem / workgroup ids in three dimensions', () => {
    const rows = perThread(gfx950, 6, (b) => [
      ...(['x', 'y', 'z'] as const).map((a) => gfx950.workitemId(b, a)),
      ...(['x', 'y', 'z'] as const).map((a) => gfx950.workgroupId(b, a)),
    ], { block: [4, 2, 2], grid: [2, 3, 1] });
    // Flat thread 23 = workgroup 1 (x=1, y=0), local 7 = (3, 1, 0).
    expect(rows[23]).toEqual([3, 1, 0, 1, 0, 0]);
    // Flat thread 16*5 + 14 = workgroup 5 (x=1, y=2), local 14 = (2, 1, 1).
    expect(rows[94]).toEqual([2, 1, 1, 1, 2, 0]);
  });

  it('NVVM special registers', () => {
    const sreg = (b: Builder, n: string) => b.intrinsic(`llvm.nvvm.read.ptx.sreg.${n}`, i32, []);
    const rows = perThread(sm90, 7, (b) => ['tid.y', 'ntid.x', 'ntid.z', 'ctaid.x', 'nctaid.x', 'laneid', 'warpsize'].map((n) => sreg(b, n)), { block: [8, 5, 2], grid: [3, 1, 1] });
    // Workgroup 2, local 37 = (5, 4, 0): lane 37 % 32 = 5.
    expect(rows[80 * 2 + 37]).toEqual([4, 8, 2, 2, 3, 5, 32]);
  });

  it('mbcnt counts mask bits below the lane (lo: bits 0..31, hi: bits 32..63)', () => {
    const rows = perThread(gfx950, 2, (b) => {
      const lo = b.intrinsic('llvm.amdgcn.mbcnt.lo', i32, [0xaaaaaaaa | 0, 0]);
      return [lo, b.intrinsic('llvm.amdgcn.mbcnt.hi', i32, [-1, lo])];
    }, { block: [128, 1, 1] });
    expect(rows[5]).toEqual([2, 2]); // bits 1, 3
    expect(rows[40]).toEqual([16, 24]); // 16 of the low word + lanes 32..39
    expect(rows[64 + 5]).toEqual([2, 2]); // lane 5 of the second wave
  });
});

describe('sm_90 warp collectives', () => {
  it('ldmatrix x1/x2/x4, plain and .trans, with lanes giving permuted row addresses', () => {
    for (const count of [1, 2, 4]) {
      for (const trans of [false, true]) {
        const m = sm90.createModule();
        const lds = m.addGlobal({ name: 'tile', valueType: array(64 * 8, i16), addrspace: 3 });
        const b = sm90.kernel(m, 'k', [{ name: 'src', type: ptr(1) }, { name: 'rows', type: ptr(1) }, { name: 'out', type: ptr(1) }], { workgroupSize: 32 });
        const lane = sm90.workitemId(b, 'x');
        b.forLoop({ from: 0, to: 16 }, (i) => {
          const e = b.add(b.mul(lane, 16), i);
          b.store(b.load(i16, b.gep(i16, b.arg('src'), [e])), b.gep(i16, lds, [e]));
        });
        sm90.barrier(b);
        const row = b.load(i32, b.gep(i32, b.arg('rows'), [lane]));
        const name = `llvm.nvvm.ldmatrix.sync.aligned.m8n8.x${count}${trans ? '.trans' : ''}.b16.p3`;
        const ret = count === 1 ? i32 : struct(Array(count).fill(i32));
        const r = b.intrinsic(name, ret, [b.gep(i16, lds, [b.mul(row, 8)])]);
        for (let j = 0; j < count; j++) b.store(count === 1 ? r : b.extractValue(r, [j]), b.gep(i32, b.arg('out'), [b.add(b.mul(lane, count), j)]));
        b.ret();
        const src = Uint16Array.from({ length: 512 }, (_, i) => (i * 37 + 11) & 0xffff);
        const rows = Int32Array.from({ length: 32 }, (_, l) => (l * 13 + 5) % 64);
        const out = new Uint32Array(32 * count);
        interpret(m, 'k', { target: sm90, grid: [1, 1, 1], block: [32, 1, 1], args: [src, rows, out] });
        // Matrix j row i comes from the address lane 8j+i gave (PTX ISA, ldmatrix).
        const M = (j: number, i: number, c: number) => src[rows[8 * j + i]! * 8 + c]!;
        for (let l = 0; l < 32; l++) {
          for (let j = 0; j < count; j++) {
            const [lo, hi] = trans
              ? [M(j, 2 * (l & 3), l >> 2), M(j, 2 * (l & 3) + 1, l >> 2)]
              : [M(j, l >> 2, 2 * (l & 3)), M(j, l >> 2, 2 * (l & 3) + 1)];
            expect(out[l * count + j], `x${count}${trans ? ' trans' : ''} lane ${l} reg ${j}`).toBe((lo | (hi << 16)) >>> 0);
          }
        }
      }
    }
  });

  it('shfl.sync idx / up / down / bfly, full warp and 8-lane segments', () => {
    const shfl = (mode: string, bv: number, c: number) => {
      const rows = perThread(sm90, 1, (b, flat) => [b.intrinsic(`llvm.nvvm.shfl.sync.${mode}.i32`, i32, [-1, b.mul(flat, 10), bv, c])], { block: [32, 1, 1] });
      return rows.map((r) => r[0]! / 10);
    };
    const lanes = Array.from({ length: 32 }, (_, l) => l);
    expect(shfl('idx', 5, 0x1f)).toEqual(lanes.map(() => 5));
    expect(shfl('bfly', 1, 0x1f)).toEqual(lanes.map((l) => l ^ 1));
    expect(shfl('up', 3, 0)).toEqual(lanes.map((l) => (l >= 3 ? l - 3 : l)));
    expect(shfl('down', 3, 0x1f)).toEqual(lanes.map((l) => (l + 3 <= 31 ? l + 3 : l)));
    // width 8: c = ((32 - 8) << 8) | 0x1f; idx 2 reads lane 2 of each group of 8.
    expect(shfl('idx', 2, 0x181f)).toEqual(lanes.map((l) => (l & ~7) | 2));
    expect(shfl('down', 1, 0x181f)).toEqual(lanes.map((l) => ((l & 7) === 7 ? l : l + 1)));
  });
});

describe('AMD wave ops and scheduling hints', () => {
  it('readfirstlane gives every lane the value of lane 0', () => {
    const rows = perThread(gfx950, 1, (b, flat) => [b.intrinsic('llvm.amdgcn.readfirstlane.i32', i32, [b.add(flat, 5)])], { block: [128, 1, 1] });
    expect(rows.map((r) => r[0])).toEqual([...Array(64).fill(5), ...Array(64).fill(69)]);
  });

  it('sched_barrier / sched_group_barrier / iglp_opt / s_waitcnt change nothing', () => {
    const rows = perThread(gfx950, 1, (b, flat) => {
      b.intrinsic('llvm.amdgcn.sched.barrier', voidT, [0]);
      b.intrinsic('llvm.amdgcn.sched.group.barrier', voidT, [8, 1, 0]);
      b.intrinsic('llvm.amdgcn.iglp.opt', voidT, [0]);
      b.intrinsic('llvm.amdgcn.s.waitcnt', voidT, [0]);
      return [b.add(flat, 1)];
    }, { block: [2, 1, 1] });
    expect(rows).toEqual([[1], [2]]);
  });
});

describe('generic math intrinsics', () => {
  const c = (v: number) => constFloat(f32, v);
  const f = (build: (b: Builder) => Value) => {
    const rows = perThread(gfx950, 1, (b) => [b.bitcast(build(b), i32)], { block: [1, 1, 1] });
    return new Float32Array(Int32Array.from([rows[0]![0]!]).buffer)[0];
  };
  it('fma, fmuladd, fabs, sqrt, minnum/maxnum (NaN-ignoring)', () => {
    expect(f((b) => b.intrinsic('llvm.fma.f32', f32, [c(3), c(4), c(-5)]))).toBe(7);
    expect(f((b) => b.intrinsic('llvm.fmuladd.f32', f32, [c(0.5), c(0.5), c(1)]))).toBe(1.25);
    expect(f((b) => b.intrinsic('llvm.fabs.f32', f32, [c(-2.5)]))).toBe(2.5);
    expect(f((b) => b.intrinsic('llvm.sqrt.f32', f32, [c(2)]))).toBe(Math.fround(Math.SQRT2));
    expect(f((b) => b.intrinsic('llvm.minnum.f32', f32, [c(NaN), c(3)]))).toBe(3);
    expect(f((b) => b.intrinsic('llvm.maxnum.f32', f32, [c(-1), c(2)]))).toBe(2);
    const v = perThread(gfx950, 2, (b) => {
      const r = b.intrinsic('llvm.maxnum.v2f32', vec(2, f32), [b.vector([c(1), c(5)]), b.vector([c(4), c(2)])]);
      return b.elements(r).map((x) => b.fptosi(x, i32));
    }, { block: [1, 1, 1] });
    expect(v[0]).toEqual([4, 5]);
  });

  it('smin / smax / umin / umax', () => {
    const rows = perThread(gfx950, 4, (b) => ['smin', 'smax', 'umin', 'umax'].map((op) => b.intrinsic(`llvm.${op}.i32`, i32, [-3, 2])), { block: [1, 1, 1] });
    expect(rows[0]).toEqual([-3, 2, 2, -3]);
  });
});
