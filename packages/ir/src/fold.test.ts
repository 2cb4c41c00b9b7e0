import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constInt } from './constants.js';
import type { IcmpPred, IntBinaryOp } from './ir.js';
import { Module } from './module.js';
import { printModule } from './printer.js';
import { findToolchain } from './toolchain.js';
import { i1, int } from './types.js';

const ops: IntBinaryOp[] = ['add', 'sub', 'mul', 'udiv', 'sdiv', 'urem', 'srem', 'shl', 'lshr', 'ashr', 'and', 'or', 'xor'];
const preds: IcmpPred[] = ['eq', 'ne', 'ugt', 'uge', 'ult', 'ule', 'sgt', 'sge', 'slt', 'sle'];

interface Case { op: IntBinaryOp | IcmpPred; bits: number; a: bigint; b: bigint }

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    op: fc.constantFrom<IntBinaryOp | IcmpPred>(...ops, ...preds),
    bits: fc.constantFrom(8, 16, 32, 64),
    a: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
    b: fc.oneof(fc.bigInt({ min: -4n, max: 70n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  });

describe('constant folding agrees with LLVM', () => {
  it('for random integer ops and compares at widths 8..64 (checked against opt -O1)', () => {
    const cases = fc.sample(caseArb, { numRuns: 300, seed: 20261202 });
    // One function per case whose body LLVM folds: `ret <op> A, B` written without our folding.
    const m = new Module();
    const expected: (bigint | undefined)[] = [];
    cases.forEach((c, n) => {
      const t = int(c.bits);
      const isCmp = (preds as string[]).includes(c.op);
      const fn = m.addFunction(`f${n}`, isCmp ? i1 : t, []);
      const b = new Builder(m, fn);
      const lhs = constInt(t, BigInt.asIntN(c.bits, c.a));
      const rhs = constInt(t, BigInt.asIntN(c.bits, c.b));
      const folded = isCmp ? b.icmp(c.op as IcmpPred, lhs, rhs) : b.intOp(c.op as IntBinaryOp, lhs, rhs);
      expected.push(folded.kind === 'const.int' ? folded.value : undefined);
      fn.blocks[0]!.instructions.length = 0; // re-emit the operation unfolded for LLVM to evaluate
      const inst = isCmp
        ? { kind: 'inst' as const, op: 'icmp' as const, type: i1, name: 'r', pred: c.op as IcmpPred, lhs, rhs }
        : { kind: 'inst' as const, op: c.op as IntBinaryOp, type: t, name: 'r', lhs, rhs, flags: [] };
      fn.blocks[0]!.instructions.push(inst);
      b.ret(inst);
    });
    const tc = findToolchain();
    const out = execFileSync(tc.opt, ['-O1', '-S', '-', '-o', '-'], { input: printModule(m), encoding: 'utf8' });
    const llvm = new Map<string, string>();
    for (const [, name, body] of out.matchAll(/define [^@]*@(f\d+)\(\)[^{]*\{\n([\s\S]*?)\n\}/g)) llvm.set(name!, body!.trim().split('\n').pop()!.trim());
    let compared = 0;
    cases.forEach((c, n) => {
      const want = expected[n];
      const got = llvm.get(`f${n}`);
      if (want === undefined) return; // we leave division by zero, overflow and over-wide shifts to LLVM
      const isCmp = (preds as string[]).includes(c.op);
      const literal = isCmp ? (want === 0n ? 'false' : 'true') : want.toString();
      expect({ c: `${c.op} i${c.bits} ${c.a} ${c.b}`, got }).toEqual({ c: `${c.op} i${c.bits} ${c.a} ${c.b}`, got: `ret ${isCmp ? 'i1' : `i${c.bits}`} ${literal}` });
      compared++;
    });
    expect(compared).toBeGreaterThan(200);
  });
});

