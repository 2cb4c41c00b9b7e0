// Hand-built ELF files: exact error reasons and offsets for malformed input, plus metadata
// and descriptor decoding on values written here.
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeAmdgpuMetadata } from './amdgpu-metadata.js';
import { ElfFile, EM_AMDGPU, SHT_NOTE, SHT_STRTAB } from './elf.js';
import { ElfError } from './errors.js';
import { decodeKernelDescriptor } from './kernel-descriptor.js';

interface SectionSpec {
  name: string;
  type: number;
  data: Uint8Array;
}

/** A minimal ELF64 LE file: header, section contents, then the section header table. */
function buildElf(sections: SectionSpec[], machine = EM_AMDGPU): { bytes: Uint8Array; offsets: number[]; shoff: number } {
  const names = ['', ...sections.map((s) => s.name), '.shstrtab'];
  const strtab: number[] = [];
  const nameOffsets = names.map((n) => {
    const at = strtab.length;
    strtab.push(...new TextEncoder().encode(n), 0);
    return at;
  });
  const all: SectionSpec[] = [...sections, { name: '.shstrtab', type: SHT_STRTAB, data: new Uint8Array(strtab) }];
  let cursor = 64;
  const offsets = all.map((s) => {
    const at = cursor;
    cursor += s.data.length + ((8 - (s.data.length % 8)) % 8);
    return at;
  });
  const shoff = cursor;
  const bytes = new Uint8Array(shoff + (all.length + 1) * 64);
  const v = new DataView(bytes.buffer);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 64, 4]);
  v.setUint16(16, 3, true);
  v.setUint16(18, machine, true);
  v.setUint32(20, 1, true);
  v.setBigUint64(40, BigInt(shoff), true);
  v.setUint32(48, 0x54f, true);
  v.setUint16(52, 64, true);
  v.setUint16(58, 64, true);
  v.setUint16(60, all.length + 1, true);
  v.setUint16(62, all.length, true);
  all.forEach((s, i) => {
    bytes.set(s.data, offsets[i] ?? 0);
    const h = shoff + (i + 1) * 64;
    v.setUint32(h, nameOffsets[i + 1] ?? 0, true);
    v.setUint32(h + 4, s.type, true);
    v.setBigUint64(h + 24, BigInt(offsets[i] ?? 0), true);
    v.setBigUint64(h + 32, BigInt(s.data.length), true);
  });
  return { bytes, offsets, shoff };
}

function note(owner: string, type: number, desc: Uint8Array): Uint8Array {
  const name = new TextEncoder().encode(`${owner}\0`);
  const pad = (n: number): number => n + ((4 - (n % 4)) % 4);
  const out = new Uint8Array(12 + pad(name.length) + pad(desc.length));
  const v = new DataView(out.buffer);
  v.setUint32(0, name.length, true);
  v.setUint32(4, desc.length, true);
  v.setUint32(8, type, true);
  out.set(name, 12);
  out.set(desc, 12 + pad(name.length));
  return out;
}

const kernelRecord = (): Map<string, unknown> =>
  new Map<string, unknown>([
    ['.name', 'k'],
    ['.symbol', 'k.kd'],
    ['.sgpr_count', 26],
    ['.vgpr_count', 36],
    ['.agpr_count', 20],
    ['.sgpr_spill_count', 0],
    ['.vgpr_spill_count', 0],
    ['.private_segment_fixed_size', 0],
    ['.group_segment_fixed_size', 4096],
    ['.kernarg_segment_size', 24],
    ['.kernarg_segment_align', 8],
    ['.max_flat_workgroup_size', 256],
    ['.wavefront_size', 64],
    ['.args', [new Map<string, unknown>([['.offset', 0], ['.size', 8], ['.value_kind', 'global_buffer'], ['.address_space', 'global'], ['.name', 'x']])]],
  ]);
const metadataNote = (kernel: Map<string, unknown>): Uint8Array =>
  note('AMDGPU', 32, pack(new Map<string, unknown>([['amdhsa.kernels', [kernel]], ['amdhsa.target', 'amdgcn-amd-amdhsa--gfx950'], ['amdhsa.version', [1, 2]]])));

const errorOf = (fn: () => unknown): ElfError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ElfError) return e;
    throw e;
  }
  throw new Error('expected an ElfError');
};

describe('ElfFile', () => {
  it('reads a hand-built file: sections, names and notes', () => {
    const desc = new Uint8Array([1, 2, 3, 4, 5]);
    const { bytes, offsets } = buildElf([{ name: '.note', type: SHT_NOTE, data: note('Owner', 7, desc) }]);
    const elf = new ElfFile(bytes);
    expect(elf.sections.map((s) => s.name)).toEqual(['', '.note', '.shstrtab']);
    const [n] = elf.notes();
    expect(n?.owner).toBe('Owner');
    expect(n?.type).toBe(7);
    expect([...(n?.desc ?? [])]).toEqual([1, 2, 3, 4, 5]);
    expect(n?.descOffset).toBe((offsets[0] ?? 0) + 12 + 8);
  });

  it('names the offset of what is wrong', () => {
    const { bytes, shoff } = buildElf([{ name: '.note', type: SHT_NOTE, data: note('AMDGPU', 32, new Uint8Array(4)) }]);
    expect(errorOf(() => new ElfFile(bytes.subarray(0, 40)))).toMatchObject({ offset: 0, reason: 'file is 40 bytes, shorter than an ELF64 header' });
    const badMagic = bytes.slice();
    badMagic[1] = 0;
    expect(errorOf(() => new ElfFile(badMagic)).reason).toBe('not an ELF file (bad magic)');
    // The section header table no longer fits: the error points at e_shoff (byte 40).
    expect(errorOf(() => new ElfFile(bytes.subarray(0, shoff + 10))).offset).toBe(40);
    // Section 1's contents are forged past the end: the error points at its header.
    const forged = bytes.slice();
    new DataView(forged.buffer).setBigUint64(shoff + 64 + 32, 1n << 40n, true);
    expect(errorOf(() => new ElfFile(forged))).toMatchObject({ offset: shoff + 64 });
    // A note whose descsz runs past its section.
    const longNote = bytes.slice();
    const noteAt = Number(new DataView(bytes.buffer).getBigUint64(shoff + 64 + 24, true));
    new DataView(longNote.buffer).setUint32(noteAt + 4, 0xffffffff, true);
    const e = errorOf(() => new ElfFile(longNote).notes());
    expect(e.offset).toBe(noteAt);
    expect(e.reason).toMatch(/descsz 4294967295 run past the end of the section/);
    expect(e.message).toContain(`0x${noteAt.toString(16)}`);
  });

  it('rejects a 32-bit or big-endian file with the reason', () => {
    const { bytes } = buildElf([]);
    const c32 = bytes.slice();
    c32[4] = 1;
    expect(errorOf(() => new ElfFile(c32))).toMatchObject({ offset: 4, reason: 'EI_CLASS 1: only ELF64 is supported' });
    const be = bytes.slice();
    be[5] = 2;
    expect(errorOf(() => new ElfFile(be))).toMatchObject({ offset: 5 });
  });

  it('refuses a section count larger than the file could hold before looping over it', () => {
    const { bytes } = buildElf([]);
    const many = bytes.slice();
    new DataView(many.buffer).setUint16(60, 0xfff0, true);
    expect(errorOf(() => new ElfFile(many)).reason).toMatch(/section header table of 65520 entries/);
  });
});

describe('AMDGPU metadata decoding', () => {
  it('decodes the typed kernel record', () => {
    const { bytes } = buildElf([{ name: '.note', type: SHT_NOTE, data: metadataNote(kernelRecord()) }]);
    const [n] = new ElfFile(bytes).notes();
    if (!n) throw new Error('no note');
    const md = decodeAmdgpuMetadata(n);
    expect(md.target).toBe('amdgcn-amd-amdhsa--gfx950');
    expect(md.version).toEqual([1, 2]);
    expect(md.kernels[0]).toMatchObject({
      name: 'k',
      symbol: 'k.kd',
      sgprCount: 26,
      vgprCount: 36,
      agprCount: 20,
      groupSegmentFixedSize: 4096,
      kernargSegmentSize: 24,
      maxFlatWorkgroupSize: 256,
      wavefrontSize: 64,
      usesDynamicStack: false,
      args: [{ name: 'x', offset: 0, size: 8, valueKind: 'global_buffer', addressSpace: 'global' }],
    });
  });

  it('keeps absent optional counts distinguishable from zero', () => {
    const k = kernelRecord();
    k.delete('.vgpr_spill_count');
    k.delete('.agpr_count');
    const { bytes } = buildElf([{ name: '.note', type: SHT_NOTE, data: metadataNote(k) }]);
    const [n] = new ElfFile(bytes).notes();
    if (!n) throw new Error('no note');
    const kernel = decodeAmdgpuMetadata(n).kernels[0];
    expect(kernel?.vgprSpillCount).toBeNull();
    expect(kernel?.sgprSpillCount).toBe(0);
    expect(kernel?.agprCount).toBe(0);
  });

  it('rejects wrong types and missing keys at the note descriptor offset', () => {
    for (const [key, value, message] of [
      ['.vgpr_count', undefined, 'amdhsa.kernels[0][".vgpr_count"] is missing, expected a non-negative integer'],
      ['.sgpr_count', -1, 'amdhsa.kernels[0][".sgpr_count"] is number -1, expected a non-negative integer'],
      ['.name', 7, 'amdhsa.kernels[0][".name"] is number 7, expected a string'],
      ['.args', 'nope', 'amdhsa.kernels[0][".args"] is a string, expected an array'],
    ] as const) {
      const k = kernelRecord();
      if (value === undefined) k.delete(key);
      else k.set(key, value);
      const { bytes } = buildElf([{ name: '.note', type: SHT_NOTE, data: metadataNote(k) }]);
      const [n] = new ElfFile(bytes).notes();
      if (!n) throw new Error('no note');
      expect(errorOf(() => decodeAmdgpuMetadata(n))).toMatchObject({ reason: message, offset: n.descOffset });
    }
  });

  it('turns MessagePack decoder failures into ElfError', () => {
    const { bytes } = buildElf([{ name: '.note', type: SHT_NOTE, data: note('AMDGPU', 32, new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff])) }]);
    const [n] = new ElfFile(bytes).notes();
    if (!n) throw new Error('no note');
    expect(errorOf(() => decodeAmdgpuMetadata(n)).reason).toMatch(/^AMDGPU metadata is not valid MessagePack/);
  });
});

describe('kernel descriptor decoding', () => {
  it('decodes a kernel descriptor with every field this package reads set', () => {
    // group 0, private 1300, kernarg 16, entry +0x1040, rsrc3 0x7, rsrc1 0x00af0187, rsrc2 0x1391, kcp 0x1e.
    const kd = new Uint8Array(64);
    const v = new DataView(kd.buffer);
    v.setUint32(4, 1300, true);
    v.setUint32(8, 16, true);
    v.setBigInt64(16, 0x1040n, true);
    v.setUint32(44, 0x7, true);
    v.setUint32(48, 0x00af0187, true);
    v.setUint32(52, 0x1391, true);
    v.setUint16(56, 0x1e, true);
    const d = decodeKernelDescriptor(kd);
    expect(d).toMatchObject({ groupSegmentFixedSize: 0, privateSegmentFixedSize: 1300, kernargSize: 16, kernelCodeEntryByteOffset: 0x1040 });
    expect(d.rsrc1).toMatchObject({ granulatedWorkitemVgprCount: 7, granulatedWavefrontSgprCount: 6, floatDenormMode32: 3, floatDenormMode16_64: 3, dx10Clamp: true, ieeeMode: true });
    expect(d.allocatedVgprs).toBe(64);
    expect(d.allocatedSgprs).toBe(64);
    expect(d.rsrc3.accumOffset).toBe(32);
    expect(d.rsrc2).toMatchObject({ enablePrivateSegment: true, userSgprCount: 8, enableWorkgroupIdX: true, enableWorkgroupIdY: true, enableWorkgroupIdZ: true, enableVgprWorkitemId: 2 });
    expect(d.kernelCodeProperties).toMatchObject({
      enableSgprPrivateSegmentBuffer: false,
      enableSgprDispatchPtr: true,
      enableSgprQueuePtr: true,
      enableSgprKernargSegmentPtr: true,
      enableSgprDispatchId: true,
      enableSgprFlatScratchInit: false,
    });
  });

  it('decodes a negative entry offset and rejects a wrong size', () => {
    const kd = new Uint8Array(64);
    new DataView(kd.buffer).setBigInt64(16, -256n, true);
    expect(decodeKernelDescriptor(kd).kernelCodeEntryByteOffset).toBe(-256);
    expect(errorOf(() => decodeKernelDescriptor(new Uint8Array(63), 500))).toMatchObject({ offset: 500 });
  });
});
