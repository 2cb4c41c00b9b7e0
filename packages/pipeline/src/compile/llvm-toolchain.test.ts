import { kernelFacts } from '@rocke/elf-prune';
import { describe, expect, it } from 'vitest';
import { axpyFamily } from './axpy-family.js';
import { compile, findToolchain, getTarget, ToolError } from '@rocke/ir';
import { LlvmToolchain } from './llvm-toolchain.js';

const tc = new LlvmToolchain();

describe('LlvmToolchain', () => {
  it('uses the IR flavor of @rocke/ir and refuses an LLVM older than it', () => {
    expect(tc.flavor).toBe('llvm22');
    const tools = findToolchain();
    expect(() => new LlvmToolchain({ ...tools, major: 21, version: '21.1.0' })).toThrow(/IR flavor llvm22 needs LLVM >= 22, found LLVM 21\.1\.0/);
  });

  it('compiles the axpy family for gfx950 (ELF .hsaco) and sm_90 (cubin ELF)', async () => {
    const fam = axpyFamily({ scales: [2] });
    for (const target of ['gfx950', 'sm_90'] as const) {
      for (const c of fam.candidates(target)) {
        const k = fam.build(c, target, tc.flavor);
        const code = await tc.compile(k.ir, target);
        expect(code.kind).toBe(target === 'sm_90' ? 'cubin' : 'hsaco');
        // ELF magic, and the kernel symbol is in the string table.
        expect([...code.bytes.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
        expect(Buffer.from(code.bytes).includes(k.kernelName)).toBe(true);
      }
    }
  });

  it('links a waves_per_eu=3 twin of a simple kernel to identical code bytes', async () => {
    const fam = axpyFamily({ scales: [1] });
    const cands = fam.candidates('gfx950').filter((c) => c.variant === 'plain');
    expect(cands.map((c) => (c.spec as { waves_per_eu: number | null }).waves_per_eu)).toEqual([null, 3]);
    const built = cands.map((c) => fam.build(c, 'gfx950', tc.flavor));
    expect(built.map((k) => k.kernelName)).toEqual(['axpy_s1', 'axpy_s1_we3']);
    const codes = await Promise.all(built.map((k) => tc.compile(k.ir, 'gfx950')));
    const facts = codes.map((c, i) => kernelFacts(c.bytes, built[i]!.kernelName));
    expect(facts[0]!.textDigest).toBe(facts[1]!.textDigest);
    expect(built[0]!.ir).not.toBe(built[1]!.ir);
  });

  it('makes the pressure kernel spill and the scratch kernel use scratch, on both vendors', async () => {
    const fam = axpyFamily({ scales: [1] });
    for (const target of ['gfx950', 'sm_90'] as const) {
      const byKind = new Map(fam.candidates(target).map((c) => [c.variant, c]));
      const pressure = fam.build(byKind.get('pressure')!, target, tc.flavor);
      const scratch = fam.build(byKind.get('scratch')!, target, tc.flavor);
      const pf = kernelFacts((await tc.compile(pressure.ir, target)).bytes, pressure.kernelName);
      const sf = kernelFacts((await tc.compile(scratch.ir, target)).bytes, scratch.kernelName);
      expect(pf.spills.any).toBe(true);
      expect(sf.spills.any).toBe(false);
      expect(sf.scratchBytes).toBeGreaterThan(0);
    }
  });

  it('reports a failing tool with its command and stderr', async () => {
    const err = await tc.compile('define void @f( {', 'gfx950').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    const te = err as ToolError;
    expect(te.command[0]).toMatch(/opt/);
    expect(te.exitCode).not.toBe(0);
    expect(te.message).toMatch(/error/);
  });

  it('fingerprints name the LLVM version (and ptxas for sm_90)', async () => {
    expect(await tc.fingerprint('gfx950')).toMatch(/LLVM version \d+/);
    const nv = await tc.fingerprint('sm_90');
    expect(nv).toMatch(/LLVM version/);
    if (tc.tools.ptxas) expect(nv).toMatch(/release/);
  });

  it("is @rocke/ir's compile(): same code, ptxas without -v", async () => {
    const fam = axpyFamily({ scales: [2] });
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const) {
      const k = fam.build(fam.candidates(target)[0]!, target, tc.flavor);
      const ours = await tc.compile(k.ir, target);
      const theirs = await compile(k.ir, getTarget(target));
      if (theirs.vendor === 'amd') {
        expect(Buffer.from(ours.bytes).equals(Buffer.from(theirs.object))).toBe(true);
      } else if (theirs.cubin) {
        // ptxas records its options in the cubin (compile() adds -v), so compare the kernel code.
        expect(kernelFacts(ours.bytes, k.kernelName).textDigest).toBe(kernelFacts(theirs.cubin, k.kernelName).textDigest);
      } else {
        expect(Buffer.from(ours.bytes).toString('utf8')).toBe(theirs.ptx);
      }
    }
  });
});
