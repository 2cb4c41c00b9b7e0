/** Instruction semantics, one small kernel per case; results are read back with DataView, not the interpreter's codecs. */
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import { constFloat, constInt, constVector } from '../constants.js';
import type { Value } from '../ir.js';
import { getTarget } from '../targets/index.js';
import { bfloat, f32, f64, half, i1, i16, i32, i64, i8, ptr, struct, vec, voidT } from '../types.js';
import type { Type } from '../types.js';
import { interpret } from './index.js';

const t = getTarget('gfx950');

/** Runs `build` in one thread and returns the bytes it stored at `out`. */
function bytesOf(build: (b: Builder) => Value): DataView {
  const m = t.createModule();
  const b = t.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 1, ids: { workitem: [], workgroup: ['x'] } });
  b.store(build(b), b.arg('out'));
  b.ret();
  const out = new DataView(new ArrayBuffer(64));
  interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [1, 1, 1], args: [out] });
  return out;
}

const int = (bits: number, v: number | bigint) => constInt({ kind: 'int', bits }, v);
const fl = (type: Type, v: number) => constFloat(type as never, v);
const u8 = (f: (b: Builder) => Value) => bytesOf(f).getUint8(0);
const u16 = (f: (b: Builder) => Value) => bytesOf(f).getUint16(0, true);
const s32 = (f: (b: Builder) => Value) => bytesOf(f).getInt32(0, true);
const s64 = (f: (b: Builder) => Value) => bytesOf(f).getBigInt64(0, true);
const f32v = (f: (b: Builder) => Value) => bytesOf(f).getFloat32(0, true);

// Non-constant operands (the builder folds integer ops on two constants): an opaque copy through `select`.
const opaque = (b: Builder, v: Value) => b.select(b.icmp('eq', t.workgroupId(b, 'x'), 0), v, v);

describe('integer arithmetic wraps at its width', () => {
  it('i8 / i16', () => {
    expect(u8((b) => b.add(opaque(b, int(8, 200)), int(8, 100)))).toBe(44);
    expect(u8((b) => b.sub(opaque(b, int(8, 3)), int(8, 5)))).toBe(254);
    expect(u16((b) => b.mul(opaque(b, int(16, 300)), int(16, 300)))).toBe(90000 % 65536);
    expect(u8((b) => b.sdiv(opaque(b, int(8, -100)), int(8, 7)))).toBe(256 - 14);
    expect(u8((b) => b.ashr(opaque(b, int(8, -128)), int(8, 3)))).toBe(256 - 16);
    expect(u8((b) => b.lshr(opaque(b, int(8, -128)), int(8, 3)))).toBe(16);
  });

  it('i32 signed and unsigned division, remainder, shifts', () => {
    const op = (name: 'sdiv' | 'srem' | 'udiv' | 'urem' | 'ashr' | 'lshr' | 'shl' | 'mul' | 'xor', a: number, c: number) =>
      s32((b) => b.intOp(name, opaque(b, b.i32(a)), b.i32(c)));
    expect(op('sdiv', -7, 2)).toBe(-3);
    expect(op('srem', -7, 2)).toBe(-1);
    expect(op('udiv', -7, 2)).toBe(0x7ffffffc);
    expect(op('urem', -7, 2)).toBe(1);
    expect(op('ashr', -16, 2)).toBe(-4);
    expect(op('lshr', -16, 28)).toBe(15);
    expect(op('shl', 3, 31)).toBe(-2147483648);
    expect(op('mul', 0x10001, 0x10001)).toBe(0x20001);
    expect(op('xor', -1, 0x0f)).toBe(-16);
    // Over-wide shifts are poison in LLVM; the interpreter gives 0 so runs stay deterministic.
    expect(op('shl', 1, 32)).toBe(0);
  });

  it('division by zero is an error, not a number', () => {
    expect(() => s32((b) => b.udiv(opaque(b, b.i32(1)), opaque(b, b.i32(0))))).toThrow(/integer division by zero/);
  });

  it('i64 past 2^53 and past 2^63', () => {
    expect(s64((b) => b.add(opaque(b, int(64, 2n ** 62n)), int(64, 2n ** 62n)))).toBe(-(2n ** 63n));
    expect(s64((b) => b.mul(opaque(b, int(64, 5_000_000_000)), int(64, 5_000_000_000)))).toBe(25_000_000_000_000_000_000n - 2n ** 64n);
    expect(s64((b) => b.sext(opaque(b, b.i32(-5)), i64))).toBe(-5n);
    expect(s64((b) => b.zext(opaque(b, b.i32(-5)), i64))).toBe(2n ** 32n - 5n);
    expect(s32((b) => b.trunc(opaque(b, int(64, 2n ** 40n + 7n)), i32))).toBe(7);
    expect(s32((b) => b.zext(b.icmp('ult', opaque(b, int(64, -1)), int(64, 1)), i32))).toBe(0);
    expect(s32((b) => b.zext(b.icmp('slt', opaque(b, int(64, -1)), int(64, 1)), i32))).toBe(1);
    expect(s64((b) => b.lshr(opaque(b, int(64, -1)), int(64, 4)))).toBe(2n ** 60n - 1n);
  });

  it('sext / trunc / icmp on narrow types', () => {
    expect(s32((b) => b.sext(opaque(b, int(8, 0x80)), i32))).toBe(-128);
    expect(s32((b) => b.sext(opaque(b, int(1, -1)), i32))).toBe(-1);
    expect(s32((b) => b.zext(opaque(b, int(1, -1)), i32))).toBe(1);
    expect(u8((b) => b.trunc(opaque(b, b.i32(0x1234)), i8))).toBe(0x34);
    expect(s32((b) => b.zext(b.icmp('sgt', opaque(b, int(16, 0x8000)), int(16, 1)), i32))).toBe(0);
    expect(s32((b) => b.zext(b.icmp('ugt', opaque(b, int(16, 0x8000)), int(16, 1)), i32))).toBe(1);
  });
});

describe('floating point', () => {
  it('half and bfloat arithmetic rounds to nearest even after every operation', () => {
    expect(u16((b) => b.fadd(opaque(b, fl(half, 2048)), fl(half, 1)))).toBe(0x6800); // 2049 -> 2048
    expect(u16((b) => b.fadd(opaque(b, fl(half, 2048)), fl(half, 3)))).toBe(0x6802); // 2051 -> 2052
    expect(u16((b) => b.fmul(opaque(b, fl(half, 300)), fl(half, 300)))).toBe(0x7c00); // 90000 -> inf
    expect(u16((b) => b.fadd(opaque(b, fl(bfloat, 256)), fl(bfloat, 1)))).toBe(0x4380); // 257 -> 256
    expect(u16((b) => b.fadd(opaque(b, fl(bfloat, 256)), fl(bfloat, 3)))).toBe(0x4382); // 259 -> 260
  });

  it('fptrunc rounds to nearest even; fpext is exact', () => {
    expect(u16((b) => b.fptrunc(opaque(b, fl(f32, 1 + 2 ** -11)), half))).toBe(0x3c00);
    expect(u16((b) => b.fptrunc(opaque(b, fl(f32, 1 + 3 * 2 ** -11)), half))).toBe(0x3c02);
    expect(u16((b) => b.fptrunc(opaque(b, fl(f32, 3 * 2 ** -25)), half))).toBe(0x0002);
    expect(u16((b) => b.fptrunc(opaque(b, fl(f32, 1 + 3 * 2 ** -8)), bfloat))).toBe(0x3f82);
    expect(u16((b) => b.fptrunc(opaque(b, fl(f64, 65520)), half))).toBe(0x7c00);
    expect(f32v((b) => b.fpext(opaque(b, fl(half, 0.1)), f32))).toBe(0.0999755859375);
  });

  it('float ops round to f32', () => {
    expect(f32v((b) => b.fadd(opaque(b, fl(f32, 1)), fl(f32, 2 ** -24)))).toBe(1);
    expect(f32v((b) => b.fdiv(opaque(b, fl(f32, 1)), fl(f32, 3)))).toBe(Math.fround(1 / 3));
    expect(f32v((b) => b.frem(opaque(b, fl(f32, -7.5)), fl(f32, 2)))).toBe(-1.5);
    expect(f32v((b) => b.fneg(opaque(b, fl(f32, 2))))).toBe(-2);
  });

  it('fcmp ordered vs unordered with NaN', () => {
    const cmp = (pred: 'oeq' | 'une' | 'uno' | 'ord' | 'ult' | 'olt', a: number, c: number) =>
      s32((b) => b.zext(b.fcmp(pred, opaque(b, fl(f32, a)), fl(f32, c)), i32));
    expect([cmp('oeq', NaN, NaN), cmp('une', NaN, NaN), cmp('uno', 1, NaN), cmp('ord', 1, NaN)]).toEqual([0, 1, 1, 0]);
    expect([cmp('ult', NaN, 1), cmp('olt', NaN, 1), cmp('olt', 1, 2)]).toEqual([1, 0, 1]);
  });

  it('int <-> float casts', () => {
    expect(s32((b) => b.fptosi(opaque(b, fl(f32, -3.9)), i32))).toBe(-3);
    expect(s32((b) => b.fptoui(opaque(b, fl(f32, 3.9)), i32))).toBe(3);
    expect(f32v((b) => b.uitofp(opaque(b, b.i32(-1)), f32))).toBe(4294967296);
    expect(f32v((b) => b.sitofp(opaque(b, b.i32(-1)), f32))).toBe(-1);
    expect(f32v((b) => b.sitofp(opaque(b, b.i32(16777217)), f32))).toBe(16777216);
    expect(u16((b) => b.sitofp(opaque(b, b.i32(2049)), half))).toBe(0x6800);
    expect(s32((b) => b.bitcast(opaque(b, fl(f32, 1)), i32))).toBe(0x3f800000);
    expect(s32((b) => b.bitcast(opaque(b, constVector(vec(2, half), [fl(half, 1), fl(half, -2)])), i32))).toBe((0xc000 << 16) | 0x3c00);
  });
});

describe('vectors, aggregates, control flow', () => {
  const v4 = (b: Builder, xs: number[]) => opaque(b, constVector(vec(4, i32), xs.map((x) => b.i32(x) as never)));

  it('element-wise vector arithmetic, insert/extract with runtime indices, shufflevector with poison', () => {
    expect(s32((b) => b.extractElement(b.add(v4(b, [1, 2, 3, 4]), v4(b, [10, 20, 30, 40])), opaque(b, b.i32(2))))).toBe(33);
    const dv = bytesOf((b) => b.insertElement(v4(b, [1, 2, 3, 4]), b.i32(9), opaque(b, b.i32(1))));
    expect([0, 1, 2, 3].map((i) => dv.getInt32(4 * i, true))).toEqual([1, 9, 3, 4]);
    const sv = bytesOf((b) => b.shuffleVector(v4(b, [1, 2, 3, 4]), v4(b, [5, 6, 7, 8]), [7, 0, -1, 4, 2]));
    expect([0, 1, 3, 4].map((i) => sv.getInt32(4 * i, true))).toEqual([8, 1, 5, 3]);
    expect(() => s32((b) => b.extractElement(v4(b, [1, 2, 3, 4]), opaque(b, b.i32(4))))).toThrow(/extractelement index 4 out of range 0\.\.3/);
  });

  it('select on a vector condition, extractvalue/insertvalue on structs', () => {
    const dv = bytesOf((b) => b.select(b.icmp('slt', v4(b, [1, 5, 2, 8]), v4(b, [3, 3, 3, 3])), v4(b, [1, 1, 1, 1]), v4(b, [0, 0, 0, 0])));
    expect([0, 1, 2, 3].map((i) => dv.getInt32(4 * i, true))).toEqual([1, 0, 1, 0]);
    expect(f32v((b) => {
      const s0 = b.insertValue(opaque(b, { kind: 'const.zero', type: struct([i32, f32]) }), fl(f32, 2.5), [1]);
      return b.extractValue(b.insertValue(s0, b.i32(3), [0]), [1]);
    })).toBe(2.5);
  });

  it('phis move in parallel: a loop that swaps two carried values', () => {
    const out = (n: number) => s32((b) => {
      const [a, c] = b.forLoop({ from: 0, to: n, carried: [b.i32(1), b.i32(2)] }, (_, [x, y]) => [y!, x!]);
      return b.add(b.mul(a!, 10), c!);
    });
    expect([out(0), out(1), out(2), out(3)]).toEqual([12, 21, 12, 21]);
  });

  it('an atomicrmw returns the old value; lanes update LDS one after another', () => {
    const m = t.createModule();
    const s = m.addGlobal({ name: 's', valueType: i32, addrspace: 3 });
    const b = t.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 64, ids: { workitem: ['x'], workgroup: [] } });
    const tid = t.workitemId(b, 'x');
    b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.i32(100), s));
    t.barrier(b);
    const old = b.atomicRmw('add', s, b.i32(1), { ordering: 'monotonic', syncscope: 'workgroup' });
    b.store(old, b.gep(i32, b.arg('out'), [tid]));
    t.barrier(b);
    b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.load(i32, s), b.gep(i32, b.arg('out'), [64])));
    b.ret();
    const out = new Int32Array(65);
    interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [64, 1, 1], args: [out] });
    expect(out[64]).toBe(164);
    expect(Array.from(out.subarray(0, 64)).sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => 100 + i));
  });
});

describe('what the interpreter does not model is an error naming it', () => {
  const build = (target: string, f: (b: Builder) => void) => {
    const tt = getTarget(target);
    const m = tt.createModule();
    const b = tt.kernel(m, 'k', [], { workgroupSize: 1, ids: { workitem: [], workgroup: ['x'] } });
    f(b);
    b.ret();
    return () => interpret(m, 'k', { target: tt, grid: [1, 1, 1], block: [1, 1, 1], args: [] });
  };

  it('an unknown intrinsic', () => {
    expect(build('gfx950', (b) => b.intrinsic('llvm.amdgcn.ds.bpermute', i32, [0, 0]))).toThrow(/intrinsic @llvm\.amdgcn\.ds\.bpermute is not modeled by the interpreter \[at @k block %entry instruction #0/);
  });

  it('inline asm, by its text', () => {
    expect(build('sm_90', (b) => b.call(b.inlineAsm('mov.u32 $0, %clock;', '=r', { ret: i32, params: [] }), []))).toThrow(/inline asm "mov\.u32 \$0, %clock;" \(constraints "=r"\) is not modeled/);
  });

  it('an intrinsic of the other vendor', () => {
    expect(build('sm_90', (b) => b.intrinsic('llvm.amdgcn.s.barrier', voidT, []))).toThrow(/AMD intrinsic @llvm\.amdgcn\.s\.barrier in a kernel run for sm_90/);
    expect(build('gfx942', (b) => b.intrinsic('llvm.nvvm.read.ptx.sreg.tid.x', i32, []))).toThrow(/NVVM intrinsic .* for gfx942/);
  });

  it('unsupported widths', () => {
    expect(build('gfx950', (b) => b.add(opaque(b, int(48, 1)), int(48, 2)))).toThrow(/i48 is not modeled/);
    expect(build('gfx950', (b) => b.store(opaque(b, constVector(vec(2, i1), [int(1, 1), int(1, 0)])), b.gep(i8, b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [b.inttoptr(b.i32(0), ptr(1)), int(16, 0), int(64, 0), 0x27000]), [0])))).toThrow(/not modeled/);
  });
});
