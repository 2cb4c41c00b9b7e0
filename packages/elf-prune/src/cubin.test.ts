// A real sm_90 cubin built during the run (llc-22 → PTX 8.0 → ptxas -v), cross-checked against
// ptxas's own report. Skips with a stated reason when ptxas is absent; LLVM 22 is required.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCubin } from './cubin.js';
import { EM_CUDA } from './elf.js';
import { codeFacts, kernelFacts, sha256Hex } from './facts.js';
import type { NvidiaKernelFacts } from './facts.js';
import { parseKernelFacts } from './facts-schema.js';
import { EIATTR, EIFMT_SVAL, readNvInfo } from './nvinfo.js';
import { nvBlocksPerSm, SM90_OCCUPANCY_MODEL } from './occupancy.js';
import { compileNv, findPtxas, fixture, llvm22, ptxasReport, scratch, symbolBytesByReadelf } from './testing/toolchain.js';
import type { NvBuild } from './testing/toolchain.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ptxas = findPtxas();
const title = ptxas ? 'NVIDIA cubin (llc-22 + ptxas, sm_90)' : 'NVIDIA cubin (skipped: ptxas not found on PATH or in /usr/local/cuda/bin)';

describe.skipIf(!ptxas)(title, () => {
  const tmp = scratch();
  let nv: NvBuild;
  let cubinPath = '';
  const nvFacts = (name: string): NvidiaKernelFacts => {
    const f = kernelFacts(nv.cubin, name);
    if (f.vendor !== 'nvidia') throw new Error('expected NVIDIA facts');
    return f;
  };

  beforeAll(() => {
    llvm22();
    nv = compileNv(tmp.dir, 'nv', fixture('nv-kernels.ll'), ptxas ?? 'ptxas');
    cubinPath = join(tmp.dir, 'nv.cubin');
    writeFileSync(cubinPath, nv.cubin);
  });
  afterAll(() => tmp.dispose());

  it('reads the cubin header and finds both kernels', () => {
    const cubin = readCubin(nv.cubin);
    expect(cubin.elf.header.machine).toBe(EM_CUDA);
    expect(cubin.sm).toBe(90);
    expect(cubin.kernels.map((k) => k.name).sort()).toEqual(['nv_shared', 'nv_spill']);
  });

  it('matches registers and stack frame with ptxas -v', () => {
    const report = ptxasReport(nv.ptxasLog);
    const cubin = readCubin(nv.cubin);
    expect(report.size).toBe(2);
    for (const k of cubin.kernels) {
      const r = report.get(k.name);
      expect(r, k.name).toBeDefined();
      expect(k.registers, `${k.name} registers`).toBe(r?.registers);
      expect(k.frameSize, `${k.name} frame`).toBe(r?.frame);
    }
  });

  it('flags the kernel ptxas spilled, through the spill/refill annotations', () => {
    const report = ptxasReport(nv.ptxasLog);
    const spill = nvFacts('nv_spill');
    const clean = nvFacts('nv_shared');
    expect(report.get('nv_spill')?.spillStores).toBeGreaterThan(0);
    expect(spill.spills.any).toBe(true);
    expect(spill.spills.instructions).toBeGreaterThan(0);
    // Each listed offset is an instruction (16-byte aligned on sm_90) inside the kernel's code.
    const offsets = readCubin(nv.cubin).kernels.find((k) => k.name === 'nv_spill')?.spillRefillOffsets ?? [];
    expect(offsets).toHaveLength(spill.spills.instructions);
    expect(offsets.every((o) => o % 16 === 0 && o < spill.codeBytes)).toBe(true);
    expect(spill.scratchBytes).toBe(report.get('nv_spill')?.frame);
    expect(report.get('nv_shared')?.spillStores).toBe(0);
    expect(clean.spills).toEqual({ instructions: 0, any: false });
    expect(clean.scratchBytes).toBe(0);
  });

  it('reads the per-kernel attributes the PTX asked for', () => {
    const cubin = readCubin(nv.cubin);
    const spill = cubin.kernels.find((k) => k.name === 'nv_spill');
    const shared = cubin.kernels.find((k) => k.name === 'nv_shared');
    // fixtures/nv-kernels.ll: nv_spill has maxntid 128 and maxnreg 32; nv_shared maxntid 256.
    expect(spill?.maxThreads).toEqual([128, 1, 1]);
    expect(spill?.maxRegCount).toBe(32);
    expect(spill?.registers).toBeLessThanOrEqual(32);
    expect(shared?.maxThreads).toEqual([256, 1, 1]);
    expect(shared?.records.some((r) => r.attr === EIATTR.MAXREG_COUNT)).toBe(true);
  });

  it('rejects a fixed-size attribute whose payload has the wrong number of words', () => {
    // Relabel another word-list record of nv_shared as EIATTR_MAX_THREADS, which must hold 3 words.
    const elf = readCubin(nv.cubin).elf;
    const info = elf.section('.nv.info.nv_shared');
    expect(info).toBeDefined();
    const victim = readNvInfo(elf, info!).find((r) => r.format === EIFMT_SVAL && r.payload.byteLength % 4 === 0 && r.payload.byteLength !== 12);
    expect(victim).toBeDefined();
    const forged = nv.cubin.slice();
    forged[victim!.offset + 1] = EIATTR.MAX_THREADS;
    const words = victim!.payload.byteLength / 4;
    expect(() => readCubin(forged)).toThrow(new RegExp(`^\\.nv\\.info\\.nv_shared: attribute 0x5 has ${words} words, expected 3 \\(at file offset 0x${victim!.offset.toString(16)}\\)$`));
  });

  it('reads a cubin whose .nv.info has sh_link 0 (older ptxas) through the file symbol table, as llvm-readelf does', () => {
    const info = readCubin(nv.cubin).elf.section('.nv.info');
    expect(info?.link).toBeGreaterThan(0);
    const unlinked = nv.cubin.slice();
    new DataView(unlinked.buffer).setUint32(info!.headerOffset + 40, 0, true);
    const path = join(tmp.dir, 'unlinked.cubin');
    writeFileSync(path, unlinked);
    // llvm-readelf locates the kernels' bytes in the patched file exactly as in the original.
    for (const f of codeFacts(unlinked)) expect(f.textDigest).toBe(sha256Hex(symbolBytesByReadelf(path, f.name)));
    expect(codeFacts(unlinked)).toEqual(codeFacts(nv.cubin));
    // A link to a section that is not a symbol table is still refused, naming it by index.
    new DataView(unlinked.buffer).setUint32(info!.headerOffset + 40, info!.index, true);
    expect(() => readCubin(unlinked)).toThrow(new RegExp(`^section ${info!.index} \\(\\.nv\\.info\\) is not a symbol table`));
  });

  it('reports the static shared section, which holds the 4 KiB tile plus the per-block reservation', () => {
    const report = ptxasReport(nv.ptxasLog);
    const f = nvFacts('nv_shared');
    // ptxas -v prints the kernel's own shared bytes; the section adds sm_90's reserved 1 KiB.
    expect(report.get('nv_shared')?.smem).toBe(1024 * 4);
    expect(f.ldsBytes).toBe((report.get('nv_shared')?.smem ?? 0) + SM90_OCCUPANCY_MODEL.reservedSharedBytesPerBlock);
    expect(nvFacts('nv_spill').ldsBytes).toBe(0);
  });

  it('stores as JSON and reads back through KernelFactsSchema unchanged', () => {
    for (const f of codeFacts(nv.cubin)) expect(parseKernelFacts(JSON.parse(JSON.stringify(f)))).toEqual(f);
    expect(() => parseKernelFacts({ ...nvFacts('nv_spill'), vendor: 'amd' })).toThrow(/not elf-prune kernel facts/);
  });

  it('digests each kernel .text.<name> as llvm-readelf locates it', () => {
    for (const f of codeFacts(nv.cubin)) {
      const bytes = symbolBytesByReadelf(cubinPath, f.name);
      expect(f.codeBytes).toBe(bytes.byteLength);
      expect(f.textDigest).toBe(sha256Hex(bytes));
    }
    expect(nvFacts('nv_shared').textDigest).not.toBe(nvFacts('nv_spill').textDigest);
  });

  it('estimates blocks per SM from registers, threads and shared memory', () => {
    const spill = nvFacts('nv_spill');
    const shared = nvFacts('nv_shared');
    expect(spill.maxThreadsPerBlock).toBe(128);
    expect(shared.maxThreadsPerBlock).toBe(256);
    expect(spill.occupancy).toEqual(
      nvBlocksPerSm(SM90_OCCUPANCY_MODEL, { registers: spill.registers.regs, sharedBytes: 0, threadsPerBlock: 128 }),
    );
    expect(shared.occupancy?.unit).toBe('blocks/sm');
    expect(shared.occupancy?.value).toBeGreaterThan(0);
  });
});

describe('sm_90 blocks-per-SM model (cuda_occupancy.h rules)', () => {
  const model = SM90_OCCUPANCY_MODEL;
  it('is bounded by warps for small kernels', () => {
    // 256 threads = 8 warps; 64 warps per SM → 8 blocks; 32 regs · 32 lanes = 1024 per warp fits 64 warps.
    expect(nvBlocksPerSm(model, { registers: 32, sharedBytes: 0, threadsPerBlock: 256 })).toEqual({ unit: 'blocks/sm', value: 8, limitedBy: 'warps' });
  });
  it('is bounded by registers, allocated per warp in 256-register units and per partition', () => {
    // 128 regs → 4096 per warp → 16384/4096 = 4 warps per partition → 16 warps → 2 blocks of 8 warps.
    expect(nvBlocksPerSm(model, { registers: 128, sharedBytes: 0, threadsPerBlock: 256 })).toEqual({ unit: 'blocks/sm', value: 2, limitedBy: 'registers' });
    // 33 regs round up to 40 (1280 per warp): 16384/1280 = 12 warps per partition → 48 warps → 6 blocks.
    expect(nvBlocksPerSm(model, { registers: 33, sharedBytes: 0, threadsPerBlock: 256 }).value).toBe(6);
  });
  it('is bounded by shared memory with the per-block reservation and 128-byte granule', () => {
    // 100 KiB static (+ nothing: the section already holds the reservation) → 2 blocks in 228 KiB.
    expect(nvBlocksPerSm(model, { registers: 16, sharedBytes: 100 * 1024, threadsPerBlock: 64 })).toEqual({ unit: 'blocks/sm', value: 2, limitedBy: 'shared' });
    // No shared section: still charged 1 KiB per block, so 32 tiny blocks fit (block limit).
    expect(nvBlocksPerSm(model, { registers: 16, sharedBytes: 0, threadsPerBlock: 32 })).toEqual({ unit: 'blocks/sm', value: 32, limitedBy: 'blocks' });
  });
});
