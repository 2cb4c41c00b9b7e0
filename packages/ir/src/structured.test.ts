import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constI32 } from './constants.js';
import type { Value } from './ir.js';
import { Module } from './module.js';
import { printModule } from './printer.js';
import { findToolchain, verify } from './toolchain.js';
import { i32, ptr, voidT } from './types.js';
import { validateModule } from './validate.js';

/** A random structured program: a tree of arithmetic, loops with carried values and branches. */
type Stmt =
  | { kind: 'arith'; op: 'add' | 'mul' | 'xor' | 'sub'; x: number; y: number }
  | { kind: 'loop'; trip: number; carried: number; body: Stmt[] }
  | { kind: 'if'; pick: number; then: Stmt[]; else: Stmt[] }
  | { kind: 'store'; x: number };

const stmt: fc.Memo<Stmt> = fc.memo((depth) =>
  depth <= 1
    ? fc.oneof(
        fc.record({ kind: fc.constant('arith' as const), op: fc.constantFrom('add' as const, 'mul' as const, 'xor' as const, 'sub' as const), x: fc.nat(), y: fc.nat() }),
        fc.record({ kind: fc.constant('store' as const), x: fc.nat() }),
      )
    : fc.oneof(
        stmt(1),
        fc.record({ kind: fc.constant('loop' as const), trip: fc.integer({ min: 0, max: 5 }), carried: fc.integer({ min: 0, max: 3 }), body: fc.array(stmt(depth - 1), { maxLength: 4 }) }),
        fc.record({ kind: fc.constant('if' as const), pick: fc.nat(), then: fc.array(stmt(depth - 1), { maxLength: 3 }), else: fc.array(stmt(depth - 1), { maxLength: 3 }) }),
      ),
);

/** Emits statements; `pool` holds the values in scope (what dominates the insertion point). */
function emit(b: Builder, stmts: Stmt[], pool: Value[]): void {
  const at = (n: number) => pool[n % pool.length]!;
  for (const s of stmts) {
    if (s.kind === 'arith') pool.push(b.intOp(s.op, at(s.x), at(s.y)));
    else if (s.kind === 'store') b.store(at(s.x), b.arg('out'), { align: 4 });
    else if (s.kind === 'loop') {
      const init = Array.from({ length: s.carried }, (_, n) => at(n * 7 + s.trip));
      const after = b.forLoop({ from: 0, to: b.add(b.arg('n'), s.trip), carried: init }, (iv, carried) => {
        const inner = [...pool, iv, ...carried];
        emit(b, s.body, inner);
        return carried.map((_, n) => inner[inner.length - 1 - n]!);
      });
      pool.push(...after);
    } else {
      const [v] = b.ifThenElse(
        b.icmp('slt', at(s.pick), at(s.pick + 1)),
        () => { const p = [...pool]; emit(b, s.then, p); return [p[p.length - 1]!]; },
        () => { const p = [...pool]; emit(b, s.else, p); return [p[p.length - 1]!]; },
      );
      pool.push(v!);
    }
  }
}

describe('structured control flow', () => {
  it('random nests of loops, branches and arithmetic print IR that llvm-as verifies', async () => {
    const programs = fc.sample(fc.array(stmt(4), { minLength: 1, maxLength: 6 }), { numRuns: 60, seed: 7 });
    const m = new Module();
    programs.forEach((p, n) => {
      const fn = m.addFunction(`p${n}`, voidT, [{ name: 'n', type: i32 }, { name: 'out', type: ptr(1) }]);
      const b = new Builder(m, fn);
      emit(b, p, [b.arg('n'), constI32(n + 1)]);
      b.ret();
    });
    expect(validateModule(m)).toEqual([]);
    const text = printModule(m);
    expect(text.match(/\bphi\b/g)?.length ?? 0).toBeGreaterThan(50);
    await verify(text, findToolchain());
  });
});
