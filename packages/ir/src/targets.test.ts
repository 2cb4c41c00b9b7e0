import { describe, expect, it } from 'vitest';
import { Builder } from './builder.js';
import { constI32, zero } from './constants.js';
import { Module } from './module.js';
import { printModule } from './printer.js';
import { atomForIntrinsic, gfx942, gfx950, getTarget, sm_90, TARGETS, TARGET_NAMES } from './targets/index.js';
import type { MmaAtom, Target } from './targets/target.js';
import { isTargetName, TargetError } from './targets/target.js';
import { array, f32, i32, i64, i8, ptr, vec, voidT } from './types.js';

const allAtoms: MmaAtom[] = [gfx950, gfx942, sm_90].flatMap((t) => [...t.atoms]);

function coverage(atom: MmaAtom, which: 'a' | 'b' | 'c'): Map<string, number> {
  const count = (which === 'a' ? atom.aType : which === 'b' ? atom.bType : atom.cType).count;
  const seen = new Map<string, number>();
  for (let lane = 0; lane < atom.lanes; lane++) {
    for (let i = 0; i < count; i++) {
      const { row, col } = atom[which](lane, i);
      const key = `${row},${col}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  return seen;
}

describe('targets', () => {
  it('have the documented atoms, and only those', () => {
    expect(gfx950.atoms.map((a) => a.name)).toEqual(['32x32x16.f16', '32x32x16.bf16', '16x16x32.f16', '16x16x32.bf16']);
    expect(gfx942.atoms.map((a) => a.name)).toEqual(['32x32x8.f16', '32x32x8.bf16', '16x16x16.f16', '16x16x16.bf16']);
    expect(sm_90.atoms.map((a) => a.name)).toEqual(['16x8x16.f16', '16x8x16.bf16']);
    expect(TARGET_NAMES).toEqual(['gfx950', 'gfx942', 'sm_90']);
  });

  it('hold the residency facts the kernel packages plan with, one object per name', () => {
    expect(TARGETS).toEqual({ gfx950, gfx942, sm_90 });
    const row = (t: Target) => [t.waveSize, t.ldsBytes, t.computeUnits, t.chiplets, t.maxThreadsPerUnit, t.sharedBytesPerUnit, t.sharedReservedPerBlock, t.maxBlocksPerUnit];
    expect(row(gfx950)).toEqual([64, 160 * 1024, 256, 8, 2048, 160 * 1024, 0, null]);
    expect(row(gfx942)).toEqual([64, 64 * 1024, 304, 8, 2048, 64 * 1024, 0, null]);
    expect(row(sm_90)).toEqual([32, 227 * 1024, 132, 1, 2048, 228 * 1024, 1024, 32]);
    // A full CU: 4 SIMDs x 8 waves x 64 lanes is the 2048 resident threads.
    for (const t of [gfx950, gfx942]) expect(t.registers).toEqual({ kind: 'simd', simdsPerUnit: 4, perLane: 512, maxWavesPerSimd: 8 });
    expect(sm_90.registers).toEqual({ kind: 'file', perUnit: 65536, maxPerThread: 255 });
    expect([isTargetName('sm_90'), isTargetName('gfx1100'), isTargetName(90)]).toEqual([true, false, false]);
  });

  it('are frozen: shared target objects cannot be changed by one user under another', () => {
    for (const t of [gfx950, gfx942, sm_90]) {
      expect(Object.isFrozen(t)).toBe(true);
      expect(Object.isFrozen(t.atoms)).toBe(true);
      expect(t.atoms.every((a) => Object.isFrozen(a))).toBe(true);
      expect(() => {
        (t as { waveSize: number }).waveSize = 1;
      }).toThrow(TypeError);
    }
    expect(Object.isFrozen(TARGET_NAMES)).toBe(true);
  });

  it('refuse an atom they lack with a TargetError naming the alternatives', () => {
    expect(() => gfx942.atom('32x32x16.bf16')).toThrow(TargetError);
    expect(() => gfx942.atom({ m: 32, n: 32, k: 16, dtype: 'bf16' })).toThrow(/gfx942 has no MMA atom 32x32x16\.bf16 \(available: 32x32x8\.f16, 32x32x8\.bf16, 16x16x16\.f16, 16x16x16\.bf16\)/);
    expect(() => sm_90.atom('16x16x32.f16')).toThrow(/sm_90 has no MMA atom/);
    expect(gfx950.hasAtom({ m: 16, n: 16, k: 32, dtype: 'f16' })).toBe(true);
    expect(gfx950.hasAtom('32x32x8.bf16')).toBe(false);
    expect(() => getTarget('gfx90a')).toThrow(/unknown target "gfx90a" \(known: gfx950, gfx942, sm_90\)/);
    expect(() => getTarget('gfx950', { flavor: 'llvm19' as never })).toThrow(/unknown LLVM flavor/);
  });

  it.each(allAtoms.map((a) => [`${a.target} ${a.name}`, a] as const))('%s layouts cover each matrix element exactly once', (_, atom) => {
    for (const [which, rows, cols] of [['a', atom.m, atom.k], ['b', atom.k, atom.n], ['c', atom.m, atom.n]] as const) {
      const seen = coverage(atom, which);
      expect(seen.size).toBe(rows * cols);
      for (const [key, n] of seen) {
        const [r, c] = key.split(',').map(Number) as [number, number];
        expect(n).toBe(1);
        expect(r >= 0 && r < rows && c >= 0 && c < cols).toBe(true);
      }
    }
    expect(atom.aType.count * atom.lanes).toBe(atom.m * atom.k);
  });

  it("gfx950 MFMA layouts match the CDNA4 ISA guide's MFMA operand tables", () => {
    const a16 = gfx950.atom('16x16x32.bf16');
    expect(a16.a(17, 3)).toEqual({ row: 1, col: 11 });
    expect(a16.b(63, 7)).toEqual({ row: 31, col: 15 });
    expect(a16.c(17, 2)).toEqual({ row: 6, col: 1 });
    const a32 = gfx950.atom('32x32x16.f16');
    // Rows of r = 0..15 for lanes 0-31 (Modular's ACC_ROW_OFFSETS_32x32); lanes 32-63 add 4.
    expect(Array.from({ length: 16 }, (_, r) => a32.c(5, r).row)).toEqual([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);
    expect(Array.from({ length: 16 }, (_, r) => a32.c(37, r).row)).toEqual([4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]);
    expect(a32.c(37, 0).col).toBe(5);
    expect(a32.a(40, 2)).toEqual({ row: 8, col: 10 });
    expect(a32.aType).toEqual(vec(8, { kind: 'float', name: 'half' }));
    expect(a32.cType).toEqual(vec(16, f32));
  });

  it('gfx942 MFMA layouts use 4 k per lane', () => {
    const a = gfx942.atom('16x16x16.bf16');
    expect(a.a(20, 1)).toEqual({ row: 4, col: 5 });
    expect(a.b(63, 3)).toEqual({ row: 15, col: 15 });
    expect(a.aType.count).toBe(4);
    const b = gfx942.atom('32x32x8.bf16');
    expect(b.a(33, 3)).toEqual({ row: 1, col: 7 });
    expect(b.c(33, 15)).toEqual({ row: 31, col: 1 });
  });

  it('sm_90 mma.sync m16n8k16 layouts match the PTX ISA fragment tables', () => {
    const a = sm_90.atom('16x8x16.bf16');
    // lane 5: g = 1, t = 1
    expect(a.a(5, 0)).toEqual({ row: 1, col: 2 });
    expect(a.a(5, 3)).toEqual({ row: 9, col: 3 });
    expect(a.a(5, 5)).toEqual({ row: 1, col: 11 });
    expect(a.a(5, 6)).toEqual({ row: 9, col: 10 });
    expect(a.b(5, 2)).toEqual({ row: 10, col: 1 });
    expect(a.c(5, 3)).toEqual({ row: 9, col: 3 });
    expect(a.lanes).toBe(32);
    expect(() => a.a(32, 0)).toThrow(/lane 32 outside 0..31/);
    expect(() => a.c(0, 4)).toThrow(/element 4 outside 0..3/);
  });

  it.each(allAtoms.map((a) => [`${a.target} ${a.name}`, a] as const))('%s IR layout twins compute the pure layouts for every lane', (_, atom) => {
    const m = new Module();
    const b = new Builder(m, m.addFunction('f', voidT, []));
    for (const which of ['a', 'b', 'c'] as const) {
      const count = (which === 'a' ? atom.aType : which === 'b' ? atom.bType : atom.cType).count;
      const at = which === 'a' ? atom.aAt : which === 'b' ? atom.bAt : atom.cAt;
      for (let lane = 0; lane < atom.lanes; lane++) {
        for (let i = 0; i < count; i++) {
          // With a constant lane the builder folds the emitted arithmetic to a constant.
          const { row, col } = at(b, constI32(lane), i);
          expect({ row: row.kind === 'const.int' ? Number(row.value) : NaN, col: col.kind === 'const.int' ? Number(col.value) : NaN }).toEqual(atom[which](lane, i));
        }
      }
    }
    expect(b.block.instructions).toHaveLength(0);
  });

  it('emit checks operand types', () => {
    const atom = gfx950.atom('16x16x32.bf16');
    const m = gfx950.createModule();
    const b = gfx950.kernel(m, 'k', [], { workgroupSize: 64 });
    expect(() => atom.emit(b, zero(vec(8, { kind: 'float', name: 'half' })), zero(atom.bType), zero(atom.cType))).toThrow(/atom 16x16x32\.bf16 on gfx950: A must be <8 x bfloat>, got <8 x half>/);
    const d = atom.emit(b, zero(atom.aType), zero(atom.bType), zero(atom.cType));
    expect(d.type).toEqual(atom.cType);
    b.ret();
    expect(printModule(m)).toContain('call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat> zeroinitializer, <8 x bfloat> zeroinitializer, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)');
  });

  it('gfx942 bf16 atoms pass the bf16 bits as <4 x i16> (.1k forms)', () => {
    const m = gfx942.createModule();
    const b = gfx942.kernel(m, 'k', [{ name: 'v', type: vec(4, { kind: 'float', name: 'bfloat' }) }], { workgroupSize: 64 });
    const atom = gfx942.atom('32x32x8.bf16');
    atom.emit(b, b.arg('v'), b.arg('v'), zero(atom.cType));
    b.ret();
    const text = printModule(m);
    expect(text).toContain('bitcast <4 x bfloat> %v to <4 x i16>');
    expect(text).toContain('@llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>');
  });

  it('AMD kernels carry flat work-group size, waves-per-eu and amdgpu-no-* for unused inputs', () => {
    const attrs = gfx950.kernelAttributes({ workgroupSize: 256, wavesPerEu: [2, 3], ids: { workitem: ['x', 'y'], workgroup: ['x'] } });
    const keys = attrs.map((a) => (a.value === undefined ? a.key : `${a.key}=${a.value}`));
    expect(keys.slice(0, 2)).toEqual(['amdgpu-flat-work-group-size=256,256', 'amdgpu-waves-per-eu=2,3']);
    expect(keys).toContain('amdgpu-no-workitem-id-z');
    expect(keys).not.toContain('amdgpu-no-workitem-id-y');
    expect(keys).toContain('amdgpu-no-workgroup-id-y');
    expect(keys).toContain('amdgpu-no-implicitarg-ptr');
    expect(gfx950.kernelAttributes({ workgroupSize: 64, wavesPerEu: 3 }).find((a) => a.key === 'amdgpu-waves-per-eu')?.value).toBe('3');
    expect(() => gfx950.kernelAttributes({ workgroupSize: 2048 })).toThrow(/workgroupSize must be an integer in 1..1024/);
    expect(() => gfx950.kernelAttributes({ workgroupSize: 64, wavesPerEu: [4, 2] })).toThrow(/wavesPerEu must be 1..8/);
  });

  it('AMD refuses ids the kernel declared unused instead of lying to LLVM', () => {
    const m = gfx950.createModule();
    const b = gfx950.kernel(m, 'k', [], { workgroupSize: 64, ids: { workitem: ['x'], workgroup: ['x'] } });
    expect(() => gfx950.workitemId(b, 'y')).toThrow(/@k was declared without workitem id y/);
    expect(() => gfx950.workgroupId(b, 'z')).toThrow(/without workgroup id z/);
    expect(gfx950.workgroupId(b, 'x').type).toEqual(i32);
  });

  it('NVIDIA kernels are ptx_kernel with nvvm.maxntid / nvvm.minctasm', () => {
    const m = sm_90.createModule();
    const b = sm_90.kernel(m, 'k', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128, minBlocksPerSm: 2, wavesPerEu: 3 });
    b.ret();
    const text = printModule(m);
    expect(text).toContain('define ptx_kernel void @k(ptr addrspace(1) %p) #0 {');
    expect(text).toContain('attributes #0 = { "nvvm.maxntid"="128,1,1" "nvvm.minctasm"="2" }');
    expect(sm_90.kernelAttributes({ workgroupSize: 64, maxRegisters: 128 })).toContainEqual({ key: 'nvvm.maxnreg', value: '128' });
    expect(() => sm_90.kernelAttributes({ workgroupSize: 64, maxRegisters: 300 })).toThrow(/maxRegisters must be an integer in 16..255/);
    expect(gfx950.kernelAttributes({ workgroupSize: 64, maxRegisters: 128 }).some((a) => a.key.startsWith('nvvm'))).toBe(false);
    expect(text).toContain('target triple = "nvptx64-nvidia-cuda"');
  });

  it('barriers: AMD fences around s.barrier, NVIDIA bar.sync through barrier.cta.sync.aligned.all', () => {
    for (const [t, expected] of [
      [gfx950, ['fence syncscope("workgroup") release', 'call void @llvm.amdgcn.s.barrier()', 'fence syncscope("workgroup") acquire']],
      [sm_90, ['call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)']],
    ] as const) {
      const m = t.createModule();
      const b = t.kernel(m, 'k', [], { workgroupSize: 64 });
      t.barrier(b);
      b.ret();
      const body = printModule(m).split('\n').filter((l) => l.startsWith('  ') && !l.includes('ret void')).map((l) => l.trim());
      expect(body).toEqual(expected);
    }
  });

  it('global memory: AMD uses an i64-num_records buffer resource, NVIDIA a guarded load', () => {
    const m = gfx950.createModule();
    const b = gfx950.kernel(m, 'k', [{ name: 'p', type: ptr(1) }, { name: 'n', type: i32 }], { workgroupSize: 64 });
    const buf = gfx950.globalBuffer(b, b.arg('p'), b.arg('n'));
    const v = gfx950.globalLoad(b, buf, constI32(16), vec(4, f32));
    gfx950.globalStore(b, buf, constI32(32), v);
    expect(() => gfx950.globalLoad(b, buf, constI32(0), vec(3, i8))).toThrow(/buffer access of <3 x i8> is not supported/);
    expect(() => gfx950.globalLoad(b, buf, b.zext(constI32(0), i64), f32)).toThrow(/byte offsets are i32/);
    expect(() => gfx950.globalBuffer(b, constI32(0), b.arg('n'))).toThrow(/base must be ptr addrspace\(1\)/);
    b.ret();
    const text = printModule(m);
    expect(text).toContain('call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %p, i16 0, i64 %0, i32 159744)');
    expect(text).toContain('call <4 x float> @llvm.amdgcn.raw.ptr.buffer.load.v4f32(ptr addrspace(8) %rsrc, i32 16, i32 0, i32 0)');
    expect(text).toContain('call void @llvm.amdgcn.raw.ptr.buffer.store.v4f32(<4 x float> %1, ptr addrspace(8) %rsrc, i32 32, i32 0, i32 0)');

    // An i64 size is clamped to the 32-bit range the descriptor holds; constants fold.
    const c = gfx942.createModule();
    const cb = gfx942.kernel(c, 'k', [{ name: 'p', type: ptr(1) }, { name: 'n', type: i64 }], { workgroupSize: 64 });
    gfx942.globalBuffer(cb, cb.arg('p'), cb.arg('n'));
    expect(gfx942.globalBuffer(cb, cb.arg('p'), cb.i64(2n ** 32n + 16n)).numBytes).toEqual(cb.i64(0xffffffff));
    expect(gfx942.globalBuffer(cb, cb.arg('p'), cb.i64(4096)).numBytes).toEqual(cb.i64(4096));
    cb.ret();
    const ctext = printModule(c);
    expect(ctext).toContain('%0 = icmp ult i64 %n, 4294967295');
    expect(ctext).toContain('%num.records = select i1 %0, i64 %n, i64 4294967295');
    expect(ctext).toContain('i64 %num.records, i32 159744)');

    const n = sm_90.createModule();
    const nb = sm_90.kernel(n, 'k', [{ name: 'p', type: ptr(1) }, { name: 'n', type: i64 }], { workgroupSize: 64 });
    const nbuf = sm_90.globalBuffer(nb, nb.arg('p'), nb.arg('n'));
    expect(() => gfx950.globalLoad(nb, nbuf, constI32(0), f32)).toThrow(/buffer was made for nvidia/);
    sm_90.globalLoad(nb, nbuf, constI32(16), vec(4, f32));
    nb.ret();
    const ntext = printModule(n);
    expect(ntext).toContain('%in.range = icmp ule i64 32, %n'); // 16 + 16 bytes, folded
    expect(ntext).toContain('%gload.v0 = phi <4 x float> [ %1, %gload.then ], [ zeroinitializer, %gload.else ]');
  });

  it('AMD modules pin code object v5 unless asked otherwise', () => {
    expect(printModule(gfx950.createModule())).toContain('!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}');
    expect(printModule(getTarget('gfx950', { codeObjectVersion: null }).createModule())).not.toContain('amdhsa_code_object_version');
    expect(printModule(getTarget('gfx942', { codeObjectVersion: 600 }).createModule())).toContain('i32 600}');
  });

  it('atomForIntrinsic maps every atom intrinsic back to its atom (and nothing else)', () => {
    for (const a of allAtoms) expect(atomForIntrinsic(a.intrinsic)).toBe(a);
    expect(new Set(allAtoms.map((a) => a.intrinsic)).size).toBe(allAtoms.length);
    expect(atomForIntrinsic('llvm.amdgcn.s.barrier')).toBeUndefined();
    expect(atomForIntrinsic('llvm.amdgcn.mfma.f32.32x32x8bf16.1k')).toMatchObject({ target: 'gfx942', m: 32, k: 8, dtype: 'bf16' });
  });

  it('staticLdsBytes sums addrspace(3) globals with their alignment, dynamic LDS adds nothing', () => {
    const m = gfx950.createModule();
    m.addGlobal({ name: 'a', valueType: array(10, i8), addrspace: 3, align: 4 });
    m.addGlobal({ name: 'b', valueType: array(4, f32), addrspace: 3, align: 16 });
    m.addGlobal({ name: 'g', valueType: array(100, f32), addrspace: 1 });
    m.addGlobal({ name: 'dyn', valueType: array(0, i8), addrspace: 3, linkage: 'external' });
    expect(m.staticLdsBytes()).toBe(16 + 16);
  });
});
