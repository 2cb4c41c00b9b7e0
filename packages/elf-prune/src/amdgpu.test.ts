// Real gfx950 code objects compiled from fixtures/*.ll during the run, cross-checked against
// llvm-readelf --notes, llvm-objdump's descriptor directives and llc's occupancy comments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAmdgpuCodeObject } from './amdgpu.js';
import { ElfFile, ET_DYN, ET_REL } from './elf.js';
import { codeFacts, kernelFacts, sha256Hex } from './facts.js';
import type { AmdKernelFacts } from './facts.js';
import { parseKernelFacts } from './facts-schema.js';
import {
  asmOccupancy,
  compileAmd,
  fixture,
  llvm22,
  objdumpDescriptor,
  readelfKernels,
  scratch,
  symbolBytesByReadelf,
  withAttribute,
} from './testing/toolchain.js';
import type { AmdBuild } from './testing/toolchain.js';

const WE3 = '"amdgpu-waves-per-eu"="3,3"';
const tmp = scratch();
const builds: Record<string, AmdBuild> = {};
const build = (name: string): AmdBuild => {
  const b = builds[name];
  if (!b) throw new Error(`build ${name} missing`);
  return b;
};
const amd = (bytes: Uint8Array, name?: string): AmdKernelFacts => {
  const f = kernelFacts(bytes, name);
  if (f.vendor !== 'amd') throw new Error('expected AMD facts');
  return f;
};

beforeAll(() => {
  builds['spill'] = compileAmd(tmp.dir, 'spill', fixture('amd-spill.ll'));
  builds['lds'] = compileAmd(tmp.dir, 'lds', fixture('amd-lds.ll'));
  builds['smallNone'] = compileAmd(tmp.dir, 'small-none', fixture('twin-small.ll'));
  builds['smallWe3'] = compileAmd(tmp.dir, 'small-we3', withAttribute(fixture('twin-small.ll'), WE3));
  builds['wideNone'] = compileAmd(tmp.dir, 'wide-none', fixture('twin-wide.ll'));
  builds['wideWe3'] = compileAmd(tmp.dir, 'wide-we3', withAttribute(fixture('twin-wide.ll'), WE3));
  builds['lds942'] = compileAmd(tmp.dir, 'lds-942', fixture('amd-lds.ll'), 'gfx942');
  builds['sgpr'] = compileAmd(tmp.dir, 'sgpr', fixture('amd-sgpr.ll'));
});
afterAll(() => tmp.dispose());

describe('AMDGPU code object header and metadata (LLVM 22, gfx950)', () => {
  it('decodes the ELF header of a linked code object', () => {
    const obj = readAmdgpuCodeObject(build('spill').hsaco);
    expect(obj.elf.header.type).toBe(ET_DYN);
    expect(obj.elf.header.osabi).toBe(64);
    expect(obj.target.processor).toBe('gfx950');
    expect(obj.target.mach).toBe(0x4f);
    expect(obj.target.codeObjectVersion).toBe(6);
    expect(obj.metadata.target).toBe(/amdhsa\.target:\s+(\S+)/.exec(build('spill').notes)?.[1]);
    expect(obj.metadata.version).toEqual([1, 2]);
    expect(readAmdgpuCodeObject(build('lds942').hsaco).target.processor).toBe('gfx942');
  });

  it('matches every scalar kernel key that llvm-readelf --notes prints', () => {
    const keys: [string, keyof AmdgpuKernelRecord][] = [
      ['.symbol', 'symbol'],
      ['.sgpr_count', 'sgprCount'],
      ['.vgpr_count', 'vgprCount'],
      ['.agpr_count', 'agprCount'],
      ['.sgpr_spill_count', 'sgprSpillCount'],
      ['.vgpr_spill_count', 'vgprSpillCount'],
      ['.private_segment_fixed_size', 'privateSegmentFixedSize'],
      ['.group_segment_fixed_size', 'groupSegmentFixedSize'],
      ['.kernarg_segment_size', 'kernargSegmentSize'],
      ['.kernarg_segment_align', 'kernargSegmentAlign'],
      ['.max_flat_workgroup_size', 'maxFlatWorkgroupSize'],
      ['.wavefront_size', 'wavefrontSize'],
      ['.uses_dynamic_stack', 'usesDynamicStack'],
    ];
    let compared = 0;
    for (const b of Object.values(builds)) {
      const expected = readelfKernels(b.notes);
      const obj = readAmdgpuCodeObject(b.hsaco);
      expect(obj.kernels.map((k) => k.metadata.name).sort()).toEqual([...expected.keys()].sort());
      for (const k of obj.kernels) {
        const yaml = expected.get(k.metadata.name);
        for (const [yamlKey, field] of keys) {
          const text = yaml?.get(yamlKey);
          expect(text, `${k.metadata.name} ${yamlKey}`).toBeDefined();
          expect(String(k.metadata[field]), `${k.metadata.name} ${yamlKey}`).toBe(text);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(80);
  });

  it('decodes .args with offsets and value kinds in the order readelf prints them', () => {
    for (const b of Object.values(builds)) {
      const kinds = [...b.notes.matchAll(/^ {6}(?:- |  )\.value_kind:\s+(\S+)/gm)].map((m) => m[1]);
      const offsets = [...b.notes.matchAll(/^ {6}(?:- |  )\.offset:\s+(\d+)/gm)].map((m) => Number(m[1]));
      const obj = readAmdgpuCodeObject(b.hsaco);
      expect(obj.kernels.flatMap((k) => k.metadata.args.map((a) => a.valueKind))).toEqual(kinds);
      expect(obj.kernels.flatMap((k) => k.metadata.args.map((a) => a.offset))).toEqual(offsets);
    }
    const scale = readAmdgpuCodeObject(build('lds').hsaco).kernels.find((k) => k.metadata.name === 'scale');
    expect(scale?.metadata.args.map((a) => [a.name, a.valueKind, a.offset, a.size])).toEqual([
      ['out', 'global_buffer', 0, 8],
      ['a', 'by_value', 8, 4],
      ['n', 'by_value', 12, 4],
    ]);
  });

  it('reads the relocatable object llc writes, with the same metadata as the linked one', () => {
    const rel = readAmdgpuCodeObject(build('lds').object);
    expect(rel.elf.header.type).toBe(ET_REL);
    expect(rel.metadata).toEqual(readAmdgpuCodeObject(build('lds').hsaco).metadata);
    expect(rel.kernels.map((k) => k.descriptor.computePgmRsrc1)).toEqual(
      readAmdgpuCodeObject(build('lds').hsaco).kernels.map((k) => k.descriptor.computePgmRsrc1),
    );
  });
});

type AmdgpuKernelRecord = ReturnType<typeof readAmdgpuCodeObject>['kernels'][number]['metadata'];

describe('kernel descriptors', () => {
  it('agree with the .amdhsa_* directives llvm-objdump prints', () => {
    for (const b of Object.values(builds)) {
      const mcpu = b === builds['lds942'] ? 'gfx942' : 'gfx950';
      for (const k of readAmdgpuCodeObject(b.hsaco).kernels) {
        const d = k.descriptor;
        const o = objdumpDescriptor(b.path, k.metadata.symbol, mcpu);
        const expectDirective = (name: string, value: number | boolean): void => {
          expect(Number(value), `${k.metadata.name} .amdhsa_${name}`).toBe(o.get(name));
        };
        expectDirective('group_segment_fixed_size', d.groupSegmentFixedSize);
        expectDirective('private_segment_fixed_size', d.privateSegmentFixedSize);
        expectDirective('kernarg_size', d.kernargSize);
        expectDirective('accum_offset', d.rsrc3.accumOffset);
        expectDirective('tg_split', d.rsrc3.tgSplit);
        expectDirective('next_free_vgpr', d.allocatedVgprs);
        // objdump prints the SGPR granule as (field + 1) * 8.
        expectDirective('next_free_sgpr', (d.rsrc1.granulatedWavefrontSgprCount + 1) * 8);
        expectDirective('float_denorm_mode_32', d.rsrc1.floatDenormMode32);
        expectDirective('float_denorm_mode_16_64', d.rsrc1.floatDenormMode16_64);
        expectDirective('dx10_clamp', d.rsrc1.dx10Clamp);
        expectDirective('ieee_mode', d.rsrc1.ieeeMode);
        expectDirective('enable_private_segment', d.rsrc2.enablePrivateSegment);
        expectDirective('system_sgpr_workgroup_id_x', d.rsrc2.enableWorkgroupIdX);
        expectDirective('system_sgpr_workgroup_id_y', d.rsrc2.enableWorkgroupIdY);
        expectDirective('system_vgpr_workitem_id', d.rsrc2.enableVgprWorkitemId);
        expectDirective('user_sgpr_dispatch_ptr', d.kernelCodeProperties.enableSgprDispatchPtr);
        expectDirective('user_sgpr_kernarg_segment_ptr', d.kernelCodeProperties.enableSgprKernargSegmentPtr);
        expectDirective('uses_dynamic_stack', d.kernelCodeProperties.usesDynamicStack);
        // The descriptor and the metadata describe the same kernel.
        expect(d.groupSegmentFixedSize).toBe(k.metadata.groupSegmentFixedSize);
        expect(d.privateSegmentFixedSize).toBe(k.metadata.privateSegmentFixedSize);
        expect(d.kernargSize).toBe(k.metadata.kernargSegmentSize);
      }
    }
  });

  it('points each descriptor at its kernel code', () => {
    for (const b of Object.values(builds)) {
      const obj = readAmdgpuCodeObject(b.hsaco);
      const syms = new Map(obj.elf.symbols().map((s) => [s.name, s]));
      for (const k of obj.kernels) {
        const kd = syms.get(k.metadata.symbol);
        expect(kd).toBeDefined();
        expect((kd?.value ?? 0) + k.descriptor.kernelCodeEntryByteOffset).toBe(k.symbol.value);
      }
    }
  });
});

describe('code facts', () => {
  it('stores as JSON and reads back through KernelFactsSchema unchanged; a changed field is refused', () => {
    for (const b of Object.values(builds)) {
      for (const f of codeFacts(b.hsaco)) expect(parseKernelFacts(JSON.parse(JSON.stringify(f)))).toEqual(f);
    }
    const [f] = codeFacts(Object.values(builds)[0]!.hsaco);
    expect(() => parseKernelFacts({ ...f, registers: { ...f!.registers, vgpr: -1 } })).toThrow(/^not elf-prune kernel facts: registers\.vgpr: /);
    expect(() => parseKernelFacts({ ...f, extra: 1 })).toThrow(/not elf-prune kernel facts/);
  });

  it('digests exactly the kernel symbol bytes that llvm-readelf locates', () => {
    for (const b of Object.values(builds)) {
      for (const f of codeFacts(b.hsaco)) {
        const bytes = symbolBytesByReadelf(b.path, f.name);
        expect(bytes.byteLength).toBeGreaterThan(0);
        expect(f.codeBytes).toBe(bytes.byteLength);
        expect(f.textDigest).toBe(sha256Hex(bytes));
        expect(f.textDigest).toMatch(/^[0-9a-f]{64}$/);
      }
    }
  });

  it('holds digests and counts only, never code bytes', () => {
    const f = amd(build('spill').hsaco);
    const json = JSON.stringify(f);
    expect(JSON.parse(json)).toEqual(f);
    expect(Object.values(f).some((v) => v instanceof Uint8Array)).toBe(false);
  });

  it('reports the forced spill and its scratch, and no spill elsewhere', () => {
    const spill = amd(build('spill').hsaco);
    const yaml = readelfKernels(build('spill').notes).get('spills');
    expect(spill.spills.any).toBe(true);
    expect(spill.spills.vgpr).toBe(Number(yaml?.get('.vgpr_spill_count')));
    expect(spill.spills.vgpr).toBeGreaterThan(0);
    expect(spill.scratchBytes).toBe(Number(yaml?.get('.private_segment_fixed_size')));
    expect(spill.scratchBytes).toBeGreaterThan(0);
    for (const name of ['lds', 'smallNone', 'smallWe3', 'wideNone', 'wideWe3', 'sgpr']) {
      for (const f of codeFacts(build(name).hsaco)) {
        expect(f.spills.any, `${name}/${f.name}`).toBe(false);
        expect(f.scratchBytes, `${name}/${f.name}`).toBe(0);
      }
    }
  });

  it('reports registers from the metadata and the padded allocation from the descriptor', () => {
    for (const b of Object.values(builds)) {
      const yaml = readelfKernels(b.notes);
      for (const f of codeFacts(b.hsaco)) {
        if (f.vendor !== 'amd') throw new Error('expected AMD facts');
        const y = yaml.get(f.name);
        expect(f.registers.agpr).toBe(Number(y?.get('.agpr_count')));
        expect(f.registers.sgpr).toBe(Number(y?.get('.sgpr_count')));
        expect(f.registers.unifiedVgpr).toBe(Number(y?.get('.vgpr_count')));
        expect(f.registers.vgpr + f.registers.agpr).toBe(f.registers.unifiedVgpr);
        expect(f.registers.allocatedVgprs).toBeGreaterThanOrEqual(f.registers.unifiedVgpr);
        expect(f.registers.allocatedVgprs % 8).toBe(0);
      }
    }
    // waves_per_eu=3 pads the descriptor's granulated VGPR count (README, AMD occupancy) while the metadata count stays small.
    const none = amd(build('smallNone').hsaco);
    const we3 = amd(build('smallWe3').hsaco);
    expect(we3.registers.unifiedVgpr).toBe(none.registers.unifiedVgpr);
    expect(we3.registers.allocatedVgprs).toBeGreaterThan(none.registers.allocatedVgprs);
  });

  it('reports static LDS from the descriptor', () => {
    const lds = amd(build('lds').hsaco, 'lds_swap');
    // fixtures/amd-lds.ll declares [2048 x float] in addrspace(3).
    expect(lds.ldsBytes).toBe(2048 * 4);
    expect(amd(build('lds').hsaco, 'scale').ldsBytes).toBe(0);
    expect(amd(build('lds').hsaco, 'lds_rows').ldsBytes).toBe(5000 * 4);
  });

  it('estimates waves per SIMD as llc reports them', () => {
    let compared = 0;
    for (const b of Object.values(builds)) {
      const llcOccupancy = asmOccupancy(b.asm);
      for (const f of codeFacts(b.hsaco)) {
        expect(f.occupancy, f.name).not.toBeNull();
        expect(f.occupancy?.value, `${f.name} occupancy`).toBe(llcOccupancy.get(f.name));
        compared++;
      }
    }
    expect(compared).toBe(12);
    expect(amd(build('sgpr').hsaco).occupancy).toEqual({ unit: 'waves/simd', value: 7, limitedBy: 'sgpr' });
    // fixtures/amd-lds.ll @lds_rows: 20000 B of LDS, 2 waves per group → LDS bounds both targets.
    expect(amd(build('lds').hsaco, 'lds_rows').occupancy).toEqual({ unit: 'waves/simd', value: 4, limitedBy: 'lds' });
    expect(amd(build('lds942').hsaco, 'lds_rows').occupancy).toEqual({ unit: 'waves/simd', value: 2, limitedBy: 'lds' });
    // The 3,3 cap shows up only through the padded descriptor.
    expect(amd(build('smallWe3').hsaco).occupancy).toEqual({ unit: 'waves/simd', value: 3, limitedBy: 'vgpr' });
  });
});

describe('waves_per_eu twins', () => {
  it('a kernel too small for the cap compiles to byte-identical code', () => {
    const none = amd(build('smallNone').hsaco);
    const we3 = amd(build('smallWe3').hsaco);
    expect(we3.textDigest).toBe(none.textDigest);
    expect(sha256Hex(symbolBytesByReadelf(build('smallWe3').path, 'twin_small'))).toBe(
      sha256Hex(symbolBytesByReadelf(build('smallNone').path, 'twin_small')),
    );
    // The binaries themselves differ (descriptor padding), so a whole-file hash would miss the twin.
    expect(sha256Hex(build('smallWe3').hsaco)).not.toBe(sha256Hex(build('smallNone').hsaco));
  });

  it('a kernel whose schedule depends on the cap compiles to different code', () => {
    const none = amd(build('wideNone').hsaco);
    const we3 = amd(build('wideWe3').hsaco);
    expect(we3.textDigest).not.toBe(none.textDigest);
    expect(sha256Hex(symbolBytesByReadelf(build('wideWe3').path, 'twin_wide'))).not.toBe(
      sha256Hex(symbolBytesByReadelf(build('wideNone').path, 'twin_wide')),
    );
  });
});

describe('toolchain requirement', () => {
  it('fails with a message naming the missing LLVM 22 tool instead of skipping', () => {
    expect(() => llvm22({ path: '', dirs: [] })).toThrow(/llc-22 not found on PATH .*CI installs llvm-22 and lld-22/);
  });

  it('reads a code object v5 (module flag amdhsa_code_object_version 500)', () => {
    const v5 = `${fixture('twin-small.ll')}\n!llvm.module.flags = !{!0}\n!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}\n`;
    const b = compileAmd(tmp.dir, 'small-v5', v5);
    const obj = readAmdgpuCodeObject(b.hsaco);
    expect(obj.target.codeObjectVersion).toBe(5);
    expect(obj.metadata.version).toEqual([1, 2]);
    expect(amd(b.hsaco).textDigest).toBe(amd(build('smallNone').hsaco).textDigest);
  });
});

describe('ElfFile on real objects', () => {
  it('lists sections, symbols and the AMDGPU note', () => {
    const elf = new ElfFile(build('spill').hsaco);
    expect(elf.sections.map((s) => s.name)).toEqual(expect.arrayContaining(['.note', '.dynsym', '.rodata', '.text', '.symtab', '.strtab', '.shstrtab']));
    const notes = elf.notes();
    expect(notes.filter((n) => n.owner === 'AMDGPU' && n.type === 32)).toHaveLength(1);
    const kd = elf.symbols().find((s) => s.name === 'spills.kd');
    expect(kd?.size).toBe(64);
    const rodata = elf.section('.rodata');
    expect(kd?.sectionIndex).toBe(rodata?.index);
  });
});
