import { describe, expect, it } from 'vitest';
import { constI32 } from './constants.js';
import { printModule } from './printer.js';
import { gfx942, gfx950, sm_90 } from './targets/index.js';
import { compile } from './toolchain.js';
import { array, i32, i64, i8, ptr } from './types.js';

/** A kernel that copies 16 bytes per thread into shared memory with cp.async, then reads it back with ldmatrix.x4. */
function sharedKernel() {
  const m = sm_90.createModule();
  const lds = m.addGlobal({ name: 'lds', valueType: array(4096, i8), addrspace: 3, align: 16 });
  const b = sm_90.kernel(m, 'k', [{ name: 'src', type: ptr(1) }, { name: 'n', type: i64 }, { name: 'dst', type: ptr(1) }], { workgroupSize: 32 });
  const tid = sm_90.workitemId(b, 'x');
  const buf = sm_90.globalBuffer(b, b.arg('src'), b.arg('n'));
  const off = b.mul(tid, 16);
  sm_90.asyncCopy!.copy(b, buf, off, b.gep(i8, lds, [off]));
  sm_90.asyncCopy!.commit(b);
  sm_90.asyncCopy!.wait(b, 0);
  sm_90.barrier(b);
  const regs = sm_90.matrixLoad!(b, b.gep(i8, lds, [off]), 4);
  const out = sm_90.globalBuffer(b, b.arg('dst'), constI32(4096));
  regs.forEach((r, j) => sm_90.globalStore(b, out, b.add(off, j * 4), r));
  b.ret();
  return { m, regs };
}

describe('sm_90 shared-memory ops (ldmatrix, cp.async)', () => {
  it('emit ldmatrix.x4 and a zero-filling cp.async.cg with src-size', () => {
    const { m, regs } = sharedKernel();
    expect(regs).toHaveLength(4);
    expect(regs.every((r) => r.type === i32 || (r.type.kind === 'int' && r.type.bits === 32))).toBe(true);
    const text = printModule(m);
    expect(text).toMatch(/call \{ i32, i32, i32, i32 \} @llvm\.nvvm\.ldmatrix\.sync\.aligned\.m8n8\.x4\.b16\.p3\(ptr addrspace\(3\) %\S+\)/);
    // Out of range: the source falls back to the base and 0 bytes are read (the 16 bytes are zero-filled).
    expect(text).toMatch(/select i1 %in\.range\S*, ptr addrspace\(1\) %\S+, ptr addrspace\(1\) %src/);
    expect(text).toMatch(/select i1 %in\.range\S*, i32 16, i32 0/);
    expect(text).toContain('call void @llvm.nvvm.cp.async.commit.group()');
    expect(text).toContain('call void @llvm.nvvm.cp.async.wait.group(i32 0)');
  });

  it('compile with LLVM 22 + ptxas to the PTX instructions', async () => {
    const r = await compile(printModule(sharedKernel().m), sm_90);
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    expect(r.ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    expect(r.ptx).toMatch(/cp\.async\.cg\.shared\.global \[%rd?\w+\], \[%rd\w+\], 16, %r\w+;/);
    expect(r.ptx).toMatch(/cp\.async\.wait_group\s+0;/);
  });

  it('reject non-shared addresses and bad counts; AMD targets do not offer them', () => {
    const m = sm_90.createModule();
    const b = sm_90.kernel(m, 'k', [{ name: 'p', type: ptr(1) }], { workgroupSize: 32 });
    expect(() => sm_90.matrixLoad!(b, b.arg('p'), 4)).toThrow(/ldmatrix row address must be ptr addrspace\(3\)/);
    expect(() => sm_90.matrixLoad!(b, b.inttoptr(constI32(0), ptr(3)), 3 as never)).toThrow(/loads 1, 2 or 4 matrices/);
    const buf = sm_90.globalBuffer(b, b.arg('p'), constI32(64));
    expect(() => sm_90.asyncCopy!.copy(b, buf, constI32(0), b.arg('p'))).toThrow(/cp\.async destination must be ptr addrspace\(3\)/);
    expect(() => sm_90.asyncCopy!.wait(b, -1)).toThrow(/wait count/);
    expect(gfx950.matrixLoad).toBeUndefined();
    expect(gfx942.asyncCopy).toBeUndefined();
  });
});
