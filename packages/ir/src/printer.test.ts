import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constF32, constFloat, constI32, constVector, zero } from './constants.js';
import { Module } from './module.js';
import { printModule } from './printer.js';
import { findToolchain, verify } from './toolchain.js';
import { array, bfloat, f32, half, i1, i32, i64, ptr, struct, vec, voidT } from './types.js';

/** Every snapshot module, verified by llvm-as at the end. */
const printed: string[] = [];
const show = (m: Module) => {
  const text = printModule(m);
  printed.push(text);
  return text;
};

describe('printer', () => {
  it('prints a small elementwise kernel', () => {
    const m = new Module({ triple: 'amdgcn-amd-amdhsa' });
    const fn = m.addFunction('axpy', voidT, [
      { name: 'x', type: ptr(1), attributes: ['noalias', 'readonly'] },
      { name: 'y', type: ptr(1), attributes: ['noalias'] },
      { name: 'a', type: f32 },
    ], { callingConv: 'amdgpu_kernel', attributes: [{ key: 'amdgpu-flat-work-group-size', value: '64,64' }, { key: 'nounwind' }] });
    const b = new Builder(m, fn);
    const tid = b.intrinsic('llvm.amdgcn.workitem.id.x', i32, [], { name: 'tid' });
    const px = b.gep(f32, b.arg('x'), [tid], { inbounds: true, name: 'px' });
    const py = b.gep(f32, b.arg('y'), [tid], { inbounds: true, name: 'py' });
    const v = b.fadd(b.fmul(b.arg('a'), b.load(f32, px)), b.load(f32, py, { align: 4 }));
    b.store(v, py);
    b.ret();
    expect(show(m)).toMatchInlineSnapshot(`
      "target triple = "amdgcn-amd-amdhsa"

      declare i32 @llvm.amdgcn.workitem.id.x()

      define amdgpu_kernel void @axpy(ptr addrspace(1) noalias readonly %x, ptr addrspace(1) noalias %y, float %a) #0 {
      entry:
        %tid = call i32 @llvm.amdgcn.workitem.id.x()
        %px = getelementptr inbounds float, ptr addrspace(1) %x, i32 %tid
        %py = getelementptr inbounds float, ptr addrspace(1) %y, i32 %tid
        %0 = load float, ptr addrspace(1) %px, align 4
        %1 = fmul float %a, %0
        %2 = load float, ptr addrspace(1) %py, align 4
        %3 = fadd float %1, %2
        store float %3, ptr addrspace(1) %py, align 4
        ret void
      }

      attributes #0 = { "amdgpu-flat-work-group-size"="64,64" nounwind }
      "
    `);
  });

  it('numbers unnamed values in order and uniquifies hints', () => {
    const m = new Module();
    const fn = m.addFunction('f', i32, [{ name: 'a', type: i32 }]);
    const b = new Builder(m, fn);
    const x = b.add(b.arg('a'), 1, 'a'); // clashes with the parameter name
    const y = b.mul(x, 3, 'a');
    const z = b.sub(y, x);
    const w = b.shl(z, 2, '7bad name');
    b.ret(b.xor(w, -1));
    expect(show(m)).toMatchInlineSnapshot(`
      "define i32 @f(i32 %a) {
      entry:
        %a1 = add i32 %a, 1
        %a2 = mul i32 %a1, 3
        %0 = sub i32 %a2, %a1
        %_7bad_name = shl i32 %0, 2
        %1 = xor i32 %_7bad_name, -1
        ret i32 %1
      }
      "
    `);
  });

  it('prints constants, vectors, aggregates, globals and module flags', () => {
    const m = new Module({ triple: 't', dataLayout: 'e' });
    m.addGlobal({ name: 'lds', valueType: array(64, half), addrspace: 3 });
    m.addGlobal({ name: 'dyn', valueType: array(0, i32), addrspace: 3, linkage: 'external', align: 16 });
    m.addGlobal({ name: 'c', valueType: i64, init: zero(i64), constant: true, align: 8 });
    m.addFlag(1, 'amdhsa_code_object_version', 500);
    const fn = m.addFunction('g', vec(4, f32), [{ name: 'v', type: vec(4, f32) }, { name: 'p', type: i1 }]);
    const b = new Builder(m, fn);
    const k = constVector(vec(4, f32), [constF32(1), constF32(-0.5), constF32(0.1), zero(f32)]);
    const s = b.select(b.arg('p'), b.arg('v'), k);
    const sh = b.shuffleVector(s, s, [3, 2, -1, 0]);
    const e = b.extractElement(sh, 1);
    const ins = b.insertElement(sh, b.fneg(e), 0);
    const agg = b.insertValue({ kind: 'const.poison', type: struct([f32, i32]) }, e, [0]);
    const back = b.extractValue(agg, [0]);
    const hv = b.fptrunc(back, half);
    const bv = b.fptrunc(back, bfloat);
    b.store(b.fadd(hv, constFloat(half, 0.333)), m.getGlobal('lds')!, { align: 2 });
    b.store(bv, m.getGlobal('dyn')!, { volatile: true });
    b.fence('acquire', 'workgroup');
    b.ret(ins);
    expect(show(m)).toMatchInlineSnapshot(`
      "target datalayout = "e"
      target triple = "t"

      @lds = internal addrspace(3) global [64 x half] poison, align 16
      @dyn = external addrspace(3) global [0 x i32], align 16
      @c = internal constant i64 0, align 8

      define <4 x float> @g(<4 x float> %v, i1 %p) {
      entry:
        %0 = select i1 %p, <4 x float> %v, <4 x float> <float 0x3FF0000000000000, float 0xBFE0000000000000, float 0x3FB99999A0000000, float 0x0000000000000000>
        %1 = shufflevector <4 x float> %0, <4 x float> %0, <4 x i32> <i32 3, i32 2, i32 poison, i32 0>
        %2 = extractelement <4 x float> %1, i32 1
        %3 = fneg float %2
        %4 = insertelement <4 x float> %1, float %3, i32 0
        %5 = insertvalue { float, i32 } poison, float %2, 0
        %6 = extractvalue { float, i32 } %5, 0
        %7 = fptrunc float %6 to half
        %8 = fptrunc float %6 to bfloat
        %9 = fadd half %7, 0xH3554
        store half %9, ptr addrspace(3) @lds, align 2
        store volatile bfloat %8, ptr addrspace(3) @dyn, align 2
        fence syncscope("workgroup") acquire
        ret <4 x float> %4
      }

      !llvm.module.flags = !{!0}
      !0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
      "
    `);
  });

  it('prints loops with carried values, ifThenElse phis and inline asm', () => {
    const m = new Module();
    const fn = m.addFunction('sum', i32, [{ name: 'n', type: i32 }]);
    const b = new Builder(m, fn);
    const [s, t] = b.forLoop({ from: 0, to: b.arg('n'), step: 2, carried: [constI32(0), constI32(1)], name: 'k' }, (iv, [acc, prod]) => [b.add(acc!, iv), b.mul(prod!, 3)]);
    const [r] = b.ifThenElse(b.icmp('sgt', s!, t!), () => [s!], () => [b.sub(t!, s!)], 'pick');
    const asm = b.inlineAsm('mov.u32 $0, $1;', '=r,r', { ret: i32, params: [i32] });
    b.ret(b.call(asm, [r!], { name: 'moved', attributes: ['convergent'] }));
    expect(show(m)).toMatchInlineSnapshot(`
      "define i32 @sum(i32 %n) {
      entry:
        br label %k.header

      k.header:
        %k.iv = phi i32 [ 0, %entry ], [ %k.next, %k.body ]
        %k.c0 = phi i32 [ 0, %entry ], [ %0, %k.body ]
        %k.c1 = phi i32 [ 1, %entry ], [ %1, %k.body ]
        %k.cond = icmp slt i32 %k.iv, %n
        br i1 %k.cond, label %k.body, label %k.exit

      k.body:
        %0 = add i32 %k.c0, %k.iv
        %1 = mul i32 %k.c1, 3
        %k.next = add i32 %k.iv, 2
        br label %k.header

      k.exit:
        %2 = icmp sgt i32 %k.c0, %k.c1
        br i1 %2, label %pick.then, label %pick.else

      pick.then:
        br label %pick.end

      pick.else:
        %3 = sub i32 %k.c1, %k.c0
        br label %pick.end

      pick.end:
        %pick.v0 = phi i32 [ %k.c0, %pick.then ], [ %3, %pick.else ]
        %moved = call i32 asm sideeffect "mov.u32 $0, $1;", "=r,r"(i32 %pick.v0) convergent
        ret i32 %moved
      }
      "
    `);
  });

  it('prints text that llvm-as 22 accepts (every snapshot above)', async () => {
    expect(printed).toHaveLength(4);
    const tc = findToolchain();
    for (const text of printed) await verify(text.replace(/target triple = "t"\n|target datalayout = "e"\n/g, ''), tc);
  });

  it('is byte-identical for two identical constructions', () => {
    const build = () => {
      const m = new Module({ triple: 'x' });
      const fn = m.addFunction('k', voidT, [{ name: 'p', type: ptr(1) }], { attributes: [{ key: 'a', value: '1' }] });
      const b = new Builder(m, fn);
      b.forLoop({ from: 0, to: 8 }, (i) => {
        b.store(b.sitofp(i, f32), b.gep(f32, b.arg('p'), [i]));
      });
      b.ret();
      return printModule(m);
    };
    expect(build()).toBe(build());
  });

  it('shares attribute groups between functions with equal attributes', () => {
    const m = new Module();
    for (const name of ['a', 'b']) {
      const fn = m.addFunction(name, voidT, [], { attributes: [{ key: 'x', value: '1' }] });
      new Builder(m, fn).ret();
    }
    const text = printModule(m);
    expect(text.match(/^attributes #\d+/gm)).toEqual(['attributes #0']);
    expect(text).toContain('define void @b() #0 {');
  });

  it('refuses to print a block without a terminator or a value from another function', () => {
    const m = new Module();
    const f = m.addFunction('f', voidT, [{ name: 'p', type: i32 }]);
    const b = new Builder(m, f);
    b.add(b.arg('p'), b.arg('p'));
    expect(() => printModule(m)).toThrow(/block entry of @f does not end in a terminator/);
    b.ret();
    const g = m.addFunction('g', i32, []);
    const gb = new Builder(m, g);
    gb.ret(f.blocks[0]!.instructions[0] as never);
    expect(() => printModule(m)).toThrow(/@g uses instruction add that is not part of this function/);
  });
});
