import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constF32, constI32, constInt } from './constants.js';
import type { BinaryInst, Instruction, Value } from './ir.js';
import { Module } from './module.js';
import { printModule } from './printer.js';
import { f32, half, i16, i32, i64, i8, ptr, vec, voidT } from './types.js';

function fresh(params: { name: string; type: import('./types.js').Type }[] = []) {
  const m = new Module();
  const fn = m.addFunction('f', voidT, params);
  return { m, fn, b: new Builder(m, fn) };
}

const ops = (fnBlocks: { instructions: Instruction[] }[]) => fnBlocks.flatMap((bl) => bl.instructions.map((i) => i.op));

describe('Builder', () => {
  it('folds integer arithmetic on constants with LLVM wrap-around semantics', () => {
    const { b, fn } = fresh();
    const lit = (v: Value) => (v.kind === 'const.int' ? v.value : 'not folded');
    expect(lit(b.add(constI32(0x7fffffff), 1))).toBe(-0x80000000n);
    expect(lit(b.mul(constInt(i8, 16), 16))).toBe(0n);
    expect(lit(b.udiv(constI32(-1), 2))).toBe(0x7fffffffn);
    expect(lit(b.sdiv(constI32(-7), 2))).toBe(-3n);
    expect(lit(b.srem(constI32(-7), 2))).toBe(-1n);
    expect(lit(b.lshr(constI32(-8), 1))).toBe(0x7ffffffcn);
    expect(lit(b.ashr(constI32(-8), 1))).toBe(-4n);
    expect(lit(b.icmp('ult', constI32(-1), 1))).toBe(0n);
    expect(lit(b.icmp('slt', constI32(-1), 1))).toBe(-1n);
    expect(lit(b.zext(constInt(i8, -1), i32))).toBe(255n);
    expect(lit(b.sext(constInt(i8, -1), i32))).toBe(-1n);
    expect(lit(b.trunc(constI32(0x1ff), i8))).toBe(-1n);
    // Division by zero and shifts past the width are left to LLVM (poison/UB there).
    expect(b.udiv(constI32(1), 0).kind).toBe('inst');
    expect(b.shl(constI32(1), 32).kind).toBe('inst');
    expect(ops(fn.blocks)).toEqual(['udiv', 'shl']);
  });

  it('has typed constant helpers', () => {
    const { b } = fresh();
    expect(b.i32(-1)).toEqual(constI32(-1));
    expect(b.i64(2n ** 40n)).toEqual(constInt(i64, 2n ** 40n));
    expect(b.f32(0.1)).toMatchObject({ kind: 'const.float', type: f32, value: Math.fround(0.1) });
  });

  it('turns number operands into constants of the other operand type', () => {
    const { b } = fresh([{ name: 'x', type: i64 }, { name: 'h', type: half }]);
    const s = b.add(b.arg('x'), 5) as BinaryInst;
    expect(s.rhs).toEqual(constInt(i64, 5));
    const h = b.fmul(b.arg('h'), 0.5) as BinaryInst;
    expect(h.rhs).toMatchObject({ kind: 'const.float', type: half, value: 0.5 });
  });

  it('splats number operands against vectors and emits fma through llvm.fma', () => {
    const { b, m } = fresh([{ name: 'v', type: vec(4, f32) }, { name: 'x', type: half }]);
    const s = b.fmul(b.arg('v'), 2) as BinaryInst;
    expect(s.rhs).toMatchObject({ kind: 'const.vector', elems: Array(4).fill({ kind: 'const.float', type: f32, value: 2 }) });
    b.fma(b.arg('v'), b.arg('v'), 1);
    b.fma(b.arg('x'), 0.5, b.arg('x'));
    expect(() => b.fma(b.arg('v'), b.arg('x'), 0)).toThrow(/fma: operand types differ/);
    b.ret();
    const text = printModule(m);
    expect(text).toContain('fmul <4 x float> %v, <float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000>');
    expect(text).toContain('call <4 x float> @llvm.fma.v4f32(<4 x float> %v, <4 x float> %v, <4 x float> <float 0x3FF0000000000000');
    expect(text).toContain('call half @llvm.fma.f16(half %x, half 0xH3800, half %x)');
  });

  it('rejects mismatched or wrong-kind operands with a reason', () => {
    const { b } = fresh([{ name: 'x', type: i32 }, { name: 'y', type: i64 }, { name: 'f', type: f32 }, { name: 'p', type: ptr(1) }]);
    expect(() => b.add(b.arg('x'), b.arg('y'))).toThrow(/add: operand types differ \(%x : i32 vs %y : i64\)/);
    expect(() => b.fadd(b.arg('x'), 1)).toThrow(/fadd needs float operands/);
    expect(() => b.add(b.arg('f'), 1)).toThrow(/add needs integer operands/);
    expect(() => b.trunc(b.arg('x'), i64)).toThrow(/trunc from i32 to i64: needs a wider integer source/);
    expect(() => b.bitcast(b.arg('x'), i16)).toThrow(/sizes must match/);
    expect(() => b.bitcast(b.arg('p'), i64)).toThrow(/pointers are opaque/);
    expect(() => b.load(f32, b.arg('x'))).toThrow(/load needs a pointer/);
    expect(() => b.load(f32, b.arg('p'), { align: 3 })).toThrow(/power of two/);
    expect(() => b.extractElement(b.arg('x'), 0)).toThrow(/needs a vector/);
    expect(() => b.select(b.arg('x'), 1, 2)).toThrow(/select condition must be i1/);
    expect(() => b.ret(b.arg('x'))).toThrow(/@f returns void, got %x : i32/);
    expect(() => b.arg('nope')).toThrow(/@f has no parameter %nope \(has x, y, f, p\)/);
    expect(() => b.intrinsic('amdgcn.foo', voidT, [])).toThrow(/start with "llvm\."/);
  });

  it('asks for an explicit alignment where pointer widths differ between targets', () => {
    const { b } = fresh([{ name: 'l', type: ptr(3) }, { name: 'g', type: ptr(1) }]);
    expect(() => b.store(b.arg('l'), b.arg('g'))).toThrow(/size of ptr addrspace\(3\) depends on the target; pass an explicit size\/alignment/);
    b.store(b.arg('l'), b.arg('g'), { align: 4 });
    b.store(b.arg('g'), b.arg('g'));
    expect((b.block.instructions[1] as Extract<Instruction, { op: 'store' }>).align).toBe(8);
  });

  it('checks vector shapes', () => {
    const { b } = fresh([{ name: 'v', type: vec(4, f32) }]);
    expect(() => b.extractElement(b.arg('v'), 4)).toThrow(/index 4 out of range for <4 x float>/);
    expect(() => b.shuffleVector(b.arg('v'), b.arg('v'), [8])).toThrow(/mask entry 8 out of range -1..7/);
    expect(b.shuffleVector(b.arg('v'), b.arg('v'), [0, 7]).type).toEqual(vec(2, f32));
    expect(() => b.insertElement(b.arg('v'), constI32(1), 0)).toThrow(/insertelement of/);
    const v = b.vector([constF32(1), constF32(2)]);
    expect(v.type).toEqual(vec(2, f32));
    expect(b.elements(v)).toHaveLength(2);
  });

  it('interns intrinsic declarations by name and rejects a conflicting signature', () => {
    const { b, m } = fresh();
    b.intrinsic('llvm.amdgcn.workitem.id.x', i32, []);
    b.intrinsic('llvm.amdgcn.workitem.id.x', i32, []);
    expect(m.functions.filter((f) => f.name === 'llvm.amdgcn.workitem.id.x')).toHaveLength(1);
    expect(() => b.intrinsic('llvm.amdgcn.workitem.id.x', i64, [])).toThrow(/already declared as i32 \(\), not i64 \(\)/);
  });

  it('refuses to append after a terminator and to place phis late', () => {
    const { b } = fresh([{ name: 'x', type: i32 }]);
    b.add(b.arg('x'), b.arg('x'));
    expect(() => b.phi(i32)).toThrow(/phi must precede/);
    b.ret();
    expect(() => b.add(b.arg('x'), b.arg('x'))).toThrow(/already ends in a terminator/);
  });

  it('forLoop wires the induction variable and carried values through header phis', () => {
    const { b, fn, m } = fresh([{ name: 'n', type: i32 }]);
    const [out] = b.forLoop({ from: 1, to: b.arg('n'), carried: [constI32(7)] }, (iv, [acc]) => [b.mul(acc!, iv)]);
    b.ret();
    const header = fn.blocks[1]!;
    const [iv, acc] = header.instructions as [Extract<Instruction, { op: 'phi' }>, Extract<Instruction, { op: 'phi' }>];
    expect(out).toBe(acc);
    expect(iv.incoming.map((x) => x.block.name)).toEqual(['entry', 'loop.body']);
    expect(acc.incoming[0]!.value).toEqual(constI32(7));
    const next = iv.incoming[1]!.value as BinaryInst;
    expect(next.op).toBe('add');
    expect(next.lhs).toBe(iv);
    expect(next.rhs).toEqual(constI32(1));
    expect(printModule(m)).toContain('%loop.cond = icmp slt i32 %loop.iv, %n');
    expect(() => b.forLoop({ from: 0, to: 4, step: 0 }, () => [])).toThrow(/step must be positive/);
  });

  it('forLoop latches from the last block of a body that branches', () => {
    const { b, fn } = fresh([{ name: 'n', type: i32 }]);
    const [acc] = b.forLoop({ from: 0, to: b.arg('n'), carried: [constI32(0)], name: 'i' }, (iv, [a]) => {
      b.ifThen(b.icmp('eq', iv, 3), () => undefined, 'skip');
      return [b.add(a!, 1)];
    });
    b.ret();
    expect((acc as Extract<Instruction, { op: 'phi' }>).incoming.map((x) => x.block.name)).toEqual(['entry', 'skip.end']);
    expect(fn.blocks.map((x) => x.name)).toEqual(['entry', 'i.header', 'i.body', 'i.exit', 'skip.then', 'skip.end']);
    expect(() => b.forLoop({ from: 0, to: 4 }, () => [])).toThrow(/already ends in a terminator/);
  });

  it('forLoop requires as many next values as carried values', () => {
    const { b } = fresh();
    expect(() => b.forLoop({ from: 0, to: 4, carried: [constI32(0)] }, () => [])).toThrow(/returned 0 values for 1 carried values/);
  });

  it('module rejects duplicate symbols and bad names', () => {
    const m = new Module();
    m.addGlobal({ name: 'x', valueType: i32 });
    expect(() => m.addFunction('x', voidT, [])).toThrow(/@x is already defined/);
    expect(() => m.addFunction('a b', voidT, [])).toThrow(/invalid symbol name/);
    expect(() => m.addFunction('k', voidT, [{ name: 'p', type: i32 }, { name: 'p', type: i32 }])).toThrow(/duplicate parameter name %p/);
    expect(() => m.addGlobal({ name: 'y', valueType: i32, linkage: 'external', init: constI32(0) })).toThrow(/cannot have an initializer/);
    m.addFlag(1, 'k', 1);
    expect(() => m.addFlag(1, 'k', 2)).toThrow(/module flag "k" is already set/);
  });
});
