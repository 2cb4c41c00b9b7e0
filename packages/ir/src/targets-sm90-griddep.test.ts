import { describe, expect, it } from 'vitest';
import { interpret } from './interp/index.js';
import { printModule } from './printer.js';
import { gfx942, gfx950, sm_90 } from './targets/index.js';
import { compile } from './toolchain.js';
import { f32, ptr } from './types.js';

/** y[i] = 2 * x[i] after waiting for the grid ahead; lets the next grid launch first thing. */
function dependentKernel() {
  const m = sm_90.createModule();
  const b = sm_90.kernel(m, 'k', [{ name: 'x', type: ptr(1) }, { name: 'y', type: ptr(1) }], { workgroupSize: 32 });
  const dep = sm_90.gridDependency!;
  dep.wait(b);
  dep.launchDependents(b);
  const tid = sm_90.workitemId(b, 'x');
  const v = b.load(f32, b.gep(f32, b.arg('x'), [tid]));
  b.store(b.fmul(v, 2), b.gep(f32, b.arg('y'), [tid]));
  b.ret();
  return m;
}

describe('sm_90 programmatic dependent launch (griddepcontrol)', () => {
  it('emits the two NVVM intrinsics, which LLVM 22 + ptxas lower to griddepcontrol', async () => {
    const text = printModule(dependentKernel());
    expect(text).toContain('call void @llvm.nvvm.griddepcontrol.wait()');
    expect(text).toContain('call void @llvm.nvvm.griddepcontrol.launch.dependents()');
    expect(text.indexOf('griddepcontrol.wait')).toBeLessThan(text.indexOf('load float'));
    const r = await compile(text, sm_90);
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    expect(r.ptx).toMatch(/griddepcontrol\.wait;/);
    expect(r.ptx).toMatch(/griddepcontrol\.launch_dependents;/);
  });

  it('runs in the interpreter, where the grid ahead has always completed', () => {
    const x = new Float32Array(32).map((_, i) => i - 3.5);
    const y = new Float32Array(32);
    interpret(dependentKernel(), 'k', { target: sm_90, grid: [1, 1, 1], block: [32, 1, 1], args: [x, y] });
    expect(Array.from(y)).toEqual(Array.from(x, (v) => 2 * v));
  });

  it('is absent on AMD targets', () => {
    expect(gfx950.gridDependency).toBeUndefined();
    expect(gfx942.gridDependency).toBeUndefined();
  });
});
