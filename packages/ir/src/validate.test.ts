import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constI32 } from './constants.js';
import type { Value } from './ir.js';
import { Module } from './module.js';
import { getTarget, TARGET_NAMES } from './targets/index.js';
import { axpyKernel, ldsReverseKernel, mmaKernel } from './test-kernels.js';
import { i32, voidT } from './types.js';
import { validateModule } from './validate.js';

function fn(params = [{ name: 'n', type: i32 }]) {
  const m = new Module();
  const f = m.addFunction('f', voidT, params);
  return { m, f, b: new Builder(m, f) };
}

describe('validateModule', () => {
  it('accepts every test kernel on every target', () => {
    for (const name of TARGET_NAMES) {
      const t = getTarget(name);
      expect(validateModule(axpyKernel(t))).toEqual([]);
      expect(validateModule(ldsReverseKernel(t))).toEqual([]);
      for (const a of t.atoms) expect(validateModule(mmaKernel(t, a))).toEqual([]);
    }
  });

  it('reports a loop-body value used after the loop', () => {
    const { m, b } = fn();
    let inner: Value | undefined;
    b.forLoop({ from: 0, to: b.arg('n') }, (iv) => {
      inner = b.mul(iv, 3, 'inner');
    });
    b.add(inner!, 1, 'late');
    b.ret();
    expect(validateModule(m)).toEqual(['@f: %late (add) in loop.exit uses %inner (mul) from loop.body, which does not dominate the use']);
  });

  it('reports a use before its definition in the same block', () => {
    const { m, b, f } = fn();
    const x = b.add(b.arg('n'), 1, 'x');
    const y = b.add(x, 1, 'y');
    const insts = f.blocks[0]!.instructions;
    insts.splice(0, 2, y as never, x as never);
    b.ret();
    expect(validateModule(m)).toEqual(['@f: %y (add) in entry uses %x (add) from entry, which does not dominate the use']);
  });

  it('reports phis whose incoming blocks are not the predecessors', () => {
    const { m, b } = fn();
    const other = b.newBlock('other');
    const join = b.newBlock('join');
    b.condBr(b.icmp('eq', b.arg('n'), 0), other, join);
    b.setBlock(other);
    b.br(join);
    b.setBlock(join);
    b.phi(i32, [{ value: 1, block: other }], 'p');
    b.ret();
    expect(validateModule(m)).toEqual(['@f: phi %p (phi) in join has incoming [other] but predecessors [entry, other]']);
  });

  it('reports missing terminators, foreign values and foreign arguments', () => {
    const { m, b } = fn();
    const g = m.addFunction('g', voidT, [{ name: 'q', type: i32 }]);
    const gb = new Builder(m, g);
    const foreign = gb.add(gb.arg('q'), 1, 'foreign');
    gb.ret();
    b.add(foreign, gb.arg('q'), 'bad');
    const problems = validateModule(m);
    expect(problems).toContain('@f: block entry does not end in a terminator');
    expect(problems).toContain('@f: %bad (add) in entry uses %foreign (add), which is not in this function');
    expect(problems).toContain('@f: %bad (add) in entry uses argument %q of another function');
  });

  it('ignores unreachable blocks for dominance', () => {
    const { m, b } = fn();
    const dead = b.newBlock('dead');
    b.ret();
    b.setBlock(dead);
    b.add(constI32(1), b.arg('n'));
    b.ret();
    expect(validateModule(m)).toEqual([]);
  });
});
