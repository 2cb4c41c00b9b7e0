/** Barriers, wave collectives and scheduling: the bugs the interpreter exists to catch. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import type { Value } from '../ir.js';
import { getTarget } from '../targets/index.js';
import type { Target, TargetName } from '../targets/target.js';
import { printModule } from '../printer.js';
import { findToolchain } from '../toolchain.js';
import { array, bfloat, f32, i32, ptr, vec, voidT } from '../types.js';
import { InterpretError, interpret } from './index.js';

const WG = 256;

/** y[i] = x[WG-1-i] through LDS; `sync` (the target's barrier unless given) between the write and the read, or nothing. */
function reverseKernel(t: Target, withBarrier: boolean, sync: (b: Builder) => void = (b) => t.barrier(b)) {
  const m = t.createModule();
  const tile = m.addGlobal({ name: 'tile', valueType: array(WG, f32), addrspace: 3 });
  const b = t.kernel(m, 'rev', [{ name: 'x', type: ptr(1) }, { name: 'y', type: ptr(1) }], { workgroupSize: WG, ids: { workitem: ['x'], workgroup: [] } });
  const tid = t.workitemId(b, 'x');
  b.store(b.load(f32, b.gep(f32, b.arg('x'), [tid])), b.gep(f32, tile, [tid]));
  if (withBarrier) sync(b);
  const v = b.load(f32, b.gep(f32, tile, [b.sub(WG - 1, tid)]));
  b.store(v, b.gep(f32, b.arg('y'), [tid]));
  b.ret();
  return m;
}

function kernel(t: Target, body: (b: Builder, tid: Value) => void, params = [{ name: 'out', type: ptr(1) }], wg = WG) {
  const m = t.createModule();
  m.addGlobal({ name: 'lds', valueType: array(1024, f32), addrspace: 3 });
  const b = t.kernel(m, 'k', params, { workgroupSize: wg, ids: { workitem: ['x'], workgroup: ['x'] } });
  body(b, t.workitemId(b, 'x'));
  b.ret();
  return m;
}

const launch = (t: Target, m: ReturnType<typeof kernel>, args: unknown[], block = WG, extra = {}) =>
  interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [block, 1, 1], args: args as never, ...extra });

describe.each(['gfx950', 'sm_90'] as TargetName[])('%s', (tn) => {
  const t = getTarget(tn);
  const x = Float32Array.from({ length: WG }, (_, i) => i + 1);

  it('reverses through LDS with the barrier', () => {
    const y = new Float32Array(WG);
    interpret(reverseKernel(t, true), 'rev', { target: t, grid: [1, 1, 1], block: [WG, 1, 1], args: [x, y] });
    expect(Array.from(y)).toEqual(Array.from(x).reverse());
  });

  it('reports the missing barrier as an LDS data race', () => {
    const y = new Float32Array(WG);
    const run = () => interpret(reverseKernel(t, false), 'rev', { target: t, grid: [1, 1, 1], block: [WG, 1, 1], args: [x, y] });
    expect(run).toThrow(InterpretError);
    expect(run).toThrow(/LDS data race: thread \d+ writes byte \d+ that thread \d+ read since the last barrier \(missing barrier\?\)/);
  });

  it('without race detection the missing barrier gives wrong numbers (never-written LDS reads as NaN)', () => {
    const y = new Float32Array(WG);
    interpret(reverseKernel(t, false), 'rev', { target: t, grid: [1, 1, 1], block: [WG, 1, 1], args: [x, y], detectRaces: false });
    // Threads run one after another, so thread i reads slot WG-1-i before its owner wrote it whenever WG-1-i > i.
    expect(Number.isNaN(y[0]!)).toBe(true);
    expect(y.filter((v) => Number.isNaN(v)).length).toBe(WG / 2);
  });

  it('runs a barrier inside a loop: LDS tree reduction over many barrier intervals', () => {
    const out = new Float32Array(1);
    const m = kernel(t, (b, tid) => {
      const lds = b.module.getGlobal('lds')!;
      b.store(b.uitofp(b.add(tid, 1), f32), b.gep(f32, lds, [tid]));
      t.barrier(b);
      b.forLoop({ from: 0, to: 8, name: 'lvl' }, (lvl) => {
        const half = b.lshr(128, lvl);
        b.ifThen(b.icmp('ult', tid, half), () => {
          const a = b.load(f32, b.gep(f32, lds, [tid]));
          const c = b.load(f32, b.gep(f32, lds, [b.add(tid, half)]));
          b.store(b.fadd(a, c), b.gep(f32, lds, [tid]));
        });
        t.barrier(b);
      });
      b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.load(f32, lds), b.arg('out')));
    });
    launch(t, m, [out]);
    expect(out[0]).toBe((WG * (WG + 1)) / 2);
  });

  it('a barrier that only some threads reach is a divergent-barrier error naming both sides', () => {
    const m = kernel(t, (b, tid) => b.ifThen(b.icmp('ult', tid, 100), () => t.barrier(b)));
    expect(() => launch(t, m, [new Float32Array(1)])).toThrow(/divergent barrier: thread 0 of workgroup \(0,0,0\) waits at @k block %if\.then instruction #\d+ .* but thread 100 of workgroup \(0,0,0\) returned/);
  });

  it('threads at two different barriers are a divergent-barrier error', () => {
    const m = kernel(t, (b, tid) => {
      b.ifThenElse(b.icmp('ult', tid, 128), () => (t.barrier(b), []), () => (t.barrier(b), []));
    });
    expect(() => launch(t, m, [new Float32Array(1)])).toThrow(/divergent barrier: .* waits at @k block %if\.then .* but thread 128 .* waits at @k block %if\.else/);
  });

  it('an endless loop stops at the instruction budget', () => {
    const m = kernel(t, (b) => {
      const loop = b.newBlock('spin');
      b.br(loop);
      b.setBlock(loop);
      b.br(loop);
      b.setBlock(b.newBlock('after'));
    });
    expect(() => launch(t, m, [new Float32Array(1)], 32, { maxInstructions: 10000 })).toThrow(/instruction budget exhausted/);
  });
});

/**
 * AMD barriers must be `fence syncscope("workgroup") release` / `llvm.amdgcn.s.barrier` /
 * `fence syncscope("workgroup") acquire`, as target.barrier() emits. llc-22 (gfx942 and gfx950,
 * -O3) puts `s_waitcnt lgkmcnt(0)` between the `ds_write` and the `s_barrier` only with the
 * release fence (also at agent scope); for a bare barrier, or fences at `wavefront` or
 * `workgroup-one-as` scope, it emits none, so another wave's `ds_read` after the barrier can
 * miss the write. The last test here compiles both forms to keep that true.
 */
describe.each(['gfx950', 'gfx942'] as TargetName[])('%s barrier fences', (tn) => {
  const t = getTarget(tn);
  const x = Float32Array.from({ length: WG }, (_, i) => i + 1);
  const run = (sync: (b: Builder) => void) => () =>
    interpret(reverseKernel(t, true, sync), 'rev', { target: t, grid: [1, 1, 1], block: [WG, 1, 1], args: [x, new Float32Array(WG)] });
  const bare = (b: Builder) => b.intrinsic('llvm.amdgcn.s.barrier', voidT, []);

  it('target.barrier() passes', () => {
    expect(run((b) => t.barrier(b))).not.toThrow();
  });

  it('a bare s.barrier between the LDS write and read is an error naming the kernel and the instruction', () => {
    expect(run(bare)).toThrow(InterpretError);
    expect(run(bare)).toThrow(/^unfenced workgroup barrier: @llvm\.amdgcn\.s\.barrier needs a workgroup \(or wider\) release fence right before it and an acquire fence right after it; before it is a store, after it a sub\. .*no s_waitcnt lgkmcnt\(0\).* \[at @rev block %entry instruction #\d+ \(call @llvm\.amdgcn\.s\.barrier\) `call void @llvm\.amdgcn\.s\.barrier\(\)`\]$/);
  });

  it('is refused with only one of the fences, or with fences too narrow to cover the workgroup', () => {
    expect(run((b) => (b.fence('release', 'workgroup'), bare(b)))).toThrow(/before it is fence syncscope\("workgroup"\) release, after it a sub/);
    expect(run((b) => (bare(b), b.fence('acquire', 'workgroup')))).toThrow(/before it is a store, after it fence syncscope\("workgroup"\) acquire/);
    expect(run((b) => (b.fence('release', 'wavefront'), bare(b), b.fence('acquire', 'wavefront')))).toThrow(/unfenced workgroup barrier/);
    expect(run((b) => (b.fence('release', 'workgroup-one-as'), bare(b), b.fence('acquire', 'workgroup-one-as')))).toThrow(/unfenced workgroup barrier/);
    expect(run((b) => (b.fence('acquire', 'workgroup'), bare(b), b.fence('release', 'workgroup')))).toThrow(/unfenced workgroup barrier/);
  });

  it('accepts the stronger forms llc also waits for (acq_rel / seq_cst, agent or system scope)', () => {
    expect(run((b) => (b.fence('acq_rel', 'workgroup'), bare(b), b.fence('seq_cst', 'workgroup')))).not.toThrow();
    expect(run((b) => (b.fence('release', 'agent'), bare(b), b.fence('acquire')))).not.toThrow();
  });

  it('llc-22 emits s_waitcnt lgkmcnt(0) before s_barrier for target.barrier() and not for a bare barrier', () => {
    const tc = findToolchain();
    const asm = (sync: (b: Builder) => void) =>
      execFileSync(tc.llc, [`-mcpu=${t.name}`, '-O3', '-o', '-'], { input: printModule(reverseKernel(t, true, sync)), encoding: 'utf8' })
        .split('\n').map((l) => l.trim()).filter((l) => /^(ds_|s_waitcnt|s_barrier)/.test(l));
    // The waits between the LDS write and the barrier.
    const between = (lines: string[]) => lines.slice(lines.findIndex((l) => l.startsWith('ds_write')) + 1, lines.indexOf('s_barrier'));
    expect(between(asm((b) => t.barrier(b)))).toEqual(['s_waitcnt lgkmcnt(0)']);
    expect(between(asm(bare))).toEqual([]);
  });
});

describe('wave collectives', () => {
  it('an MFMA that only half of a wave reaches is a divergent wave-collective error', () => {
    const t = getTarget('gfx950');
    const m = kernel(t, (b, tid) => {
      b.ifThen(b.icmp('ult', tid, 32), () => {
        const z = b.bitcast(b.vector(Array.from({ length: 4 }, () => b.i32(0))), vec(8, bfloat));
        const c = b.bitcast(b.vector(Array.from({ length: 4 }, () => b.i32(0))), vec(4, f32));
        b.intrinsic('llvm.amdgcn.mfma.f32.16x16x32.bf16', vec(4, f32), [z, z, c, 0, 0, 0]);
      });
    }, undefined, 64);
    expect(() => launch(t, m, [new Float32Array(1)], 64)).toThrow(/divergent wave-collective: thread 0 .* waits at .*mfma.* but thread 32 of workgroup \(0,0,0\) returned/);
  });

  it('waves are 64 lanes on gfx950/gfx942 and 32 on sm_90 (lane ids through the target)', () => {
    for (const tn of ['gfx950', 'gfx942', 'sm_90'] as const) {
      const t = getTarget(tn);
      const out = new Int32Array(WG);
      const m = kernel(t, (b, tid) => b.store(t.laneId(b), b.gep(i32, b.arg('out'), [tid])));
      launch(t, m, [out]);
      expect(Array.from(out)).toEqual(Array.from({ length: WG }, (_, i) => i % t.waveSize));
    }
  });
});

describe('grid', () => {
  it('runs workgroups in a fixed order: the same launch gives the same bits', () => {
    const t = getTarget('gfx950');
    const m = kernel(t, (b, tid) => {
      // Every workgroup adds to one counter and records the value it saw: order-dependent by design.
      const wg = t.workgroupId(b, 'x');
      b.ifThen(b.icmp('eq', tid, 0), () => {
        const old = b.atomicRmw('add', b.arg('out'), b.i32(1), { ordering: 'monotonic' });
        b.store(old, b.gep(i32, b.arg('out'), [b.add(wg, 1)]));
      });
    });
    const runOnce = () => {
      const out = new Int32Array(9);
      interpret(m, 'k', { target: t, grid: [8, 1, 1], block: [64, 1, 1], args: [out] });
      return Array.from(out);
    };
    const a = runOnce();
    expect(a).toEqual([8, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect(runOnce()).toEqual(a);
  });
});

describe('invalid IR', () => {
  it('is refused before it runs (a use not dominated by its definition)', () => {
    const t = getTarget('gfx950');
    const m = t.createModule();
    const b = t.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 1, ids: { workitem: [], workgroup: [] } });
    const late = b.newBlock('late');
    const early = b.newBlock('early');
    b.br(early);
    b.setBlock(late);
    const v = b.add(b.ptrtoint(b.arg('out'), i32), 1);
    b.ret();
    b.setBlock(early);
    b.store(v, b.arg('out'));
    b.ret();
    expect(() => interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [1, 1, 1], args: [new Int32Array(1)] })).toThrow(/the module is not valid IR: /);
  });
});

describe('workgroup subsets', () => {
  it('runs only the listed workgroups, in order, with ids of the full grid', () => {
    const t = getTarget('sm_90');
    const m = kernel(t, (b, tid) => {
      const wg = t.workgroupId(b, 'x');
      const n = b.intrinsic('llvm.nvvm.read.ptx.sreg.nctaid.x', i32, []);
      b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.add(b.mul(n, 100), wg), b.gep(i32, b.arg('out'), [wg])));
    }, undefined, 32);
    const out = new Int32Array(8).fill(-1);
    const res = interpret(m, 'k', { target: t, grid: [8, 1, 1], block: [32, 1, 1], args: [out], workgroups: [[5, 0, 0], [2, 0, 0]] });
    expect(Array.from(out)).toEqual([-1, -1, 802, -1, -1, 805, -1, -1]);
    expect([res.workgroups, res.threads]).toEqual([2, 64]);
    expect(() => interpret(m, 'k', { target: t, grid: [8, 1, 1], block: [32, 1, 1], args: [out], workgroups: [[8, 0, 0]] })).toThrow(/workgroup \[8,0,0\] is not inside the grid \[8, 1, 1\]/);
  });
});
