import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printModule } from './printer.js';
import { gfx942, gfx950, sm_90 } from './targets/index.js';
import type { Target } from './targets/target.js';
import { axpyKernel, ldsReverseKernel, mmaKernel } from './test-kernels.js';
import { ToolError, ToolchainError, compile, disassemble, findToolchain, toolchainFingerprint, verify } from './toolchain.js';
import { array, f32, i8, ptr } from './types.js';
import { zero } from './constants.js';

const tc = findToolchain();
const targets: Target[] = [gfx950, gfx942, sm_90];
/** Instruction text of an llvm-objdump listing, without addresses/encodings comments. */
const instructions = (asm: string) => asm.split('\n').filter((l) => /^\s/.test(l) && l.includes('//')).map((l) => l.split('//')[0]!.trim().replace(/\s+/g, ' '));
const isElf = (b: Uint8Array | undefined) => !!b && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46;

describe('toolchain', () => {
  it('compile() kills a tool past its timeout and stops on an abort signal, rejecting with ToolError', async () => {
    const text = printModule(axpyKernel(gfx950));
    const slow = await compile(text, gfx950, { timeoutMs: 1 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(ToolError);
    expect((slow as ToolError).message).toMatch(/killed by SIGKILL \(timeout 1 ms\)/);
    const controller = new AbortController();
    const pending = compile(text, gfx950, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('stop'));
    const stopped = await pending;
    expect(stopped instanceof ToolError || (stopped as Error).message === 'stop').toBe(true);
    await expect(compile(text, gfx950, { signal: controller.signal })).rejects.toThrow('stop');
    // Without limits the same text compiles.
    expect((await compile(text, gfx950)).vendor).toBe('amd');
  });

  it('fingerprints the tools compile() runs: the LLVM version, and ptxas for NVIDIA', async () => {
    expect(await toolchainFingerprint('amd')).toMatch(/LLVM version \d+/);
    const nv = await toolchainFingerprint('nvidia');
    expect(nv).toMatch(/LLVM version/);
    expect(nv).toMatch(findToolchain().ptxas ? /release/ : /no ptxas/);
  });

  it('finds LLVM >= 20 (22 here) with every tool', () => {
    expect(tc.major).toBeGreaterThanOrEqual(20);
    expect(tc.llc).toMatch(/llc/);
    expect(tc.ldLld).toMatch(/ld\.lld/);
  });

  it('reports every place it looked when ROCKE_LLVM_DIR points nowhere useful', () => {
    expect(() => findToolchain({ ROCKE_LLVM_DIR: '/nonexistent/llvm', PATH: '' })).toThrow(ToolchainError);
    expect(() => findToolchain({ ROCKE_LLVM_DIR: '/nonexistent/llvm', PATH: '' })).toThrow(/ROCKE_LLVM_DIR=\/nonexistent\/llvm: llvm-as\/opt\/llc\/ld\.lld\/llvm-objdump not all present/);
  });

  it('finds llc-22-style suffixed tools on PATH, and skips an install older than 20', () => {
    const bin = mkdtempSync(join(tmpdir(), 'rocke-ir-path-'));
    try {
      for (const [tool, path] of [['llvm-as', tc.llvmAs], ['opt', tc.opt], ['llc', tc.llc], ['ld.lld', tc.ldLld], ['llvm-objdump', tc.objdump]] as const) {
        symlinkSync(path, join(bin, `${tool}-22`));
      }
      const found = findToolchain({ PATH: bin }, { installDirs: [] });
      expect(found.llc).toBe(join(bin, 'llc-22'));
      expect(found.major).toBe(tc.major);
      // An "LLVM 19" llc (a script printing that version) is passed over with the reason recorded.
      const old = mkdtempSync(join(tmpdir(), 'rocke-ir-old-'));
      for (const tool of ['llvm-as', 'opt', 'ld.lld', 'llvm-objdump']) symlinkSync(join(bin, `${tool}-22`), join(old, tool));
      writeFileSync(join(old, 'llc'), '#!/bin/sh\necho "LLVM version 19.1.0"\n', { mode: 0o755 });
      expect(() => findToolchain({ PATH: '' }, { installDirs: [old] })).toThrow(/LLVM 19\.1\.0 is older than 20/);
      rmSync(old, { recursive: true, force: true });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('honours ROCKE_LLVM_DIR given as a prefix', () => {
    const prefix = tc.llc.replace(/\/bin\/llc[^/]*$/, '');
    if (!tc.llc.endsWith('/bin/llc')) return; // suffixed tools on PATH: no prefix to point at
    expect(findToolchain({ ROCKE_LLVM_DIR: prefix, PATH: '' }).llc).toBe(`${prefix}/bin/llc`);
  });

  it.each(targets.map((t) => [t.name, t] as const))('%s: data layout is what LLVM 22 uses for the triple', (_, t) => {
    const out = execFileSync(tc.opt, [`-mtriple=${t.triple}`, '-S', '-', '-o', '-'], { input: '', encoding: 'utf8' });
    expect(out).toContain(`target datalayout = "${t.dataLayout}"`);
  });

  it('verify rejects bad IR with a ToolError carrying the command and llvm-as stderr', async () => {
    const err = await verify('define void @f() {\n  ret i32 0\n}\n', tc).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    const te = err as ToolError;
    expect(te.command[0]).toBe(tc.llvmAs);
    expect(te.stderr).toMatch(/value doesn't match function result type 'void'/);
    expect(te.exitCode).not.toBe(0);
  });

  it('compile failures carry the failing command and the tool stderr (LDS over the gfx942 limit)', async () => {
    const m = gfx942.createModule();
    const big = m.addGlobal({ name: 'big', valueType: array(65540, i8), addrspace: 3 });
    const b = gfx942.kernel(m, 'k', [{ name: 'p', type: ptr(1) }], { workgroupSize: 64 });
    const tid = gfx942.workitemId(b, 'x');
    b.store(b.trunc(tid, i8), b.gep(i8, big, [tid]));
    b.store(b.load(i8, b.gep(i8, big, [b.add(tid, 1)])), b.arg('p'));
    b.ret();
    const err = (await compile(printModule(m), gfx942, { toolchain: tc }).catch((e: unknown) => e)) as ToolError;
    expect(err).toBeInstanceOf(ToolError);
    expect(err.command.some((a) => a.includes('llc'))).toBe(true);
    expect(err.stderr).toMatch(/local memory \(65540\) exceeds limit \(65536\)/);
    expect(err.message).toContain('-mcpu=gfx942');
  });

  it('refuses an LLVM older than the flavor needs', async () => {
    await expect(compile('', gfx950, { toolchain: { ...tc, major: 20, version: '20.1.0' } })).rejects.toThrow(/IR flavor llvm22 needs LLVM >= 22, found LLVM 20\.1\.0/);
  });

  it('sm_90 launch bounds reach the PTX (.maxntid, .minnctapersm, .maxnreg)', async () => {
    const m = sm_90.createModule();
    const b = sm_90.kernel(m, 'bounded', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128, minBlocksPerSm: 2, maxRegisters: 64 });
    b.store(b.f32(1), b.arg('p'));
    b.ret();
    const r = await compile(printModule(m), sm_90, { toolchain: tc });
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    expect(r.ptx).toMatch(/\.maxntid 128, 1, 1\s+\.minnctapersm 2\s+\.maxnreg 64/);
  });

  it.each(targets.map((t) => [t.name, t] as const))('%s: dynamic LDS (external [0 x i8]) compiles', async (_, t) => {
    const m = t.createModule();
    const dyn = m.addGlobal({ name: 'dyn', valueType: array(0, i8), addrspace: 3, linkage: 'external' });
    const b = t.kernel(m, 'dynlds', [{ name: 'p', type: ptr(1) }], { workgroupSize: 64 });
    const tid = t.workitemId(b, 'x');
    const slot = b.gep(f32, dyn, [tid]);
    b.store(b.sitofp(tid, f32), slot, { align: 4 });
    t.barrier(b);
    const out = t.globalBuffer(b, b.arg('p'), b.i32(256));
    t.globalStore(b, out, b.shl(tid, 2), b.load(f32, b.gep(f32, dyn, [b.xor(tid, 1)]), { align: 4 }));
    b.ret();
    expect(m.staticLdsBytes()).toBe(0);
    const r = await compile(printModule(m), t, { toolchain: tc });
    if (r.vendor === 'nvidia') expect(r.ptx).toContain('.extern .shared .align 16 .b8 dyn[];');
    else expect(instructions(await disassemble(r.object, t, tc)).some((l) => l.startsWith('ds_read_b32'))).toBe(true);
  });

  it('sm_90: ldmatrix registers feed the mma atom through one bitcast (README recipe)', async () => {
    const atom = sm_90.atom('16x8x16.bf16');
    const m = sm_90.createModule();
    const a = m.addGlobal({ name: 'a', valueType: array(16 * 16 * 2, i8), addrspace: 3 });
    const bt = m.addGlobal({ name: 'bt', valueType: array(8 * 16 * 2, i8), addrspace: 3 });
    const b = sm_90.kernel(m, 'ldm_mma', [{ name: 'd', type: ptr(1) }], { workgroupSize: 32 });
    const l = sm_90.laneId(b);
    const aRow = b.add(b.and(l, 7), b.shl(b.and(b.lshr(l, 3), 1), 3));
    const aAddr = b.gep(i8, a, [b.add(b.mul(aRow, 32), b.shl(b.lshr(l, 4), 4))]);
    const bAddr = b.gep(i8, bt, [b.add(b.mul(b.and(l, 7), 32), b.shl(b.and(b.lshr(l, 3), 1), 4))]);
    const av = b.bitcast(b.vector(sm_90.matrixLoad!(b, aAddr, 4)), atom.aType);
    const bv = b.bitcast(b.vector(sm_90.matrixLoad!(b, bAddr, 2)), atom.bType);
    const d = atom.emit(b, av, bv, zero(atom.cType));
    b.store(d, b.gep(f32, b.arg('d'), [b.shl(l, 2)]), { align: 16 });
    b.ret();
    const r = await compile(printModule(m), sm_90, { toolchain: tc });
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    const ldm = [...r.ptx.matchAll(/ldmatrix\.sync\.aligned\.m8n8\.x(\d)\.shared\.b16 \{([^}]*)\}/g)];
    expect(ldm.map((x) => x[1])).toEqual(['4', '2']);
    const mma = /mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32\s+\{[^}]*\},\s*\{([^}]*)\},\s*\{([^}]*)\}/.exec(r.ptx);
    // The mma reads the very registers ldmatrix wrote (no repacking in between).
    expect(mma?.[1]?.replace(/\s/g, '')).toBe(ldm[0]![2]!.replace(/\s/g, ''));
    expect(mma?.[2]?.replace(/\s/g, '')).toBe(ldm[1]![2]!.replace(/\s/g, ''));
  });

  it('disassemble is for AMD code objects only', async () => {
    await expect(disassemble(new Uint8Array(), sm_90, tc)).rejects.toThrow(/sm_90 produces PTX text/);
  });
});

describe('small kernels compile with LLVM 22 for each target', () => {
  it.each(targets.map((t) => [t.name, t] as const))('%s: elementwise kernel', async (_, t) => {
    const r = await compile(printModule(axpyKernel(t)), t, { toolchain: tc });
    if (r.vendor === 'amd') {
      expect(isElf(r.object)).toBe(true);
      expect(r.object[8]).toBe(3); // EI_ABIVERSION 3 = code object v5, from the module flag
      // amdgpu-no-implicitarg-ptr: the kernarg segment holds the four explicit arguments only (8+8+4+4 bytes).
      const notes = execFileSync(tc.objdump.replace(/llvm-objdump([^/]*)$/, 'llvm-readelf$1'), ['--notes', '-'], { input: r.object, encoding: 'utf8' });
      expect(notes).toMatch(/\.kernarg_segment_size: 24\n/);
      expect(notes).not.toMatch(/hidden_/);
      const asm = await disassemble(r.object, t, tc);
      expect(asm).toMatch(/buffer_load_dword v\d+, v\d+, s\[\d+:\d+\], 0 offen/);
      expect(asm).toMatch(/buffer_store_dword /);
    } else {
      expect(r.ptx).toContain('.maxntid 256, 1, 1');
      expect(r.ptx).toMatch(/@%p\d+ (ld|st)\.global|@!?%p\d+ bra/); // guarded access
      expect(isElf(r.cubin)).toBe(true);
    }
  });

  it.each(targets.map((t) => [t.name, t] as const))('%s: LDS + barrier kernel', async (_, t) => {
    const r = await compile(printModule(ldsReverseKernel(t)), t, { toolchain: tc });
    if (r.vendor === 'amd') {
      const code = instructions(await disassemble(r.object, t, tc));
      const write = code.findIndex((l) => l.startsWith('ds_write_b32'));
      const barrier = code.indexOf('s_barrier');
      const read = code.findIndex((l) => l.startsWith('ds_read_b32'));
      // The release fence makes the LDS write complete (lgkmcnt 0) before the barrier; the read comes after it.
      expect(write).toBeGreaterThanOrEqual(0);
      expect(barrier).toBeGreaterThan(write);
      expect(code.slice(write + 1, barrier)).toContain('s_waitcnt lgkmcnt(0)');
      expect(read).toBeGreaterThan(barrier);
    } else {
      expect(r.ptx).toContain('bar.sync 	0;');
      expect(r.ptx).toMatch(/st\.shared\.b32/);
      expect(r.ptxasLog).toMatch(/Used \d+ registers, used 1 barriers/);
    }
  });

  const atomCases = targets.flatMap((t) => t.atoms.map((a) => [`${t.name} ${a.name}`, t, a] as const));
  it.each(atomCases)('%s: MMA atom kernel lowers to its instruction', async (_, t, atom) => {
    const r = await compile(printModule(mmaKernel(t, atom)), t, { toolchain: tc });
    if (r.vendor === 'amd') {
      const asm = await disassemble(r.object, t, tc);
      const mfma = asm.split('\n').filter((l) => /\bv_mfma_/.test(l)).map((l) => l.trim().split(/\s+/)[0]);
      expect(mfma).toEqual([atom.instruction]);
    } else {
      expect(r.ptx).toContain(atom.instruction);
      expect(r.ptx).toMatch(/mma\.sync\.aligned\.m16n8k16\.row\.col/);
      expect(isElf(r.cubin)).toBe(true); // ptxas accepted it
    }
  });
});

