import { decodeAmdgpuMetadata, findAmdgpuMetadataNote } from './amdgpu-metadata.js';
import type { AmdgpuKernelMetadata, AmdgpuMetadata } from './amdgpu-metadata.js';
import { ElfFile, EM_AMDGPU, ET_REL, STT_FUNC, STT_OBJECT } from './elf.js';
import type { ElfSymbol } from './elf.js';
import { ElfError } from './errors.js';
import { decodeKernelDescriptor, KERNEL_DESCRIPTOR_SIZE } from './kernel-descriptor.js';
import type { KernelDescriptor } from './kernel-descriptor.js';

/** EF_AMDGPU_MACH values (e_flags bits 7:0) of the targets this project builds for. */
export const AMDGPU_MACH: Readonly<Record<number, string>> = {
  0x3f: 'gfx90a',
  0x4c: 'gfx942',
  0x4f: 'gfx950',
};

/** What e_flags says about the target. */
export interface AmdgpuTargetFlags {
  /** EF_AMDGPU_MACH (bits 7:0). */
  mach: number;
  /** `gfx950`, `gfx942`, `gfx90a`, or null for a model this package has no table for. */
  processor: string | null;
  xnack: 'unsupported' | 'any' | 'off' | 'on';
  sramecc: 'unsupported' | 'any' | 'off' | 'on';
  /** EI_ABIVERSION + 2 (2 = v4, 3 = v5, 4 = v6). */
  codeObjectVersion: number;
}

/** One kernel of an AMDGPU code object: metadata, descriptor and code. */
export interface AmdgpuKernel {
  metadata: AmdgpuKernelMetadata;
  descriptor: KernelDescriptor;
  /** File offset of the 64-byte descriptor. */
  descriptorOffset: number;
  /** The kernel symbol's bytes (`st_value`, `st_size`) in its section: a view into the input. */
  code: Uint8Array;
  /** The kernel function symbol. */
  symbol: ElfSymbol;
}

/** A parsed AMDGPU code object (relocatable `.o` or linked `.hsaco`). */
export interface AmdgpuCodeObject {
  elf: ElfFile;
  target: AmdgpuTargetFlags;
  metadata: AmdgpuMetadata;
  kernels: AmdgpuKernel[];
}

const FEATURE = ['unsupported', 'any', 'off', 'on'] as const;

/** Decodes the target fields of an AMDGPU ELF header. */
export function amdgpuTargetFlags(elf: ElfFile): AmdgpuTargetFlags {
  const f = elf.header.flags;
  const mach = f & 0xff;
  return {
    mach,
    processor: AMDGPU_MACH[mach] ?? null,
    xnack: FEATURE[(f >>> 8) & 3] ?? 'unsupported',
    sramecc: FEATURE[(f >>> 10) & 3] ?? 'unsupported',
    codeObjectVersion: elf.header.abiVersion + 2,
  };
}

/**
 * Reads an AMDGPU code object: the NT_AMDGPU_METADATA note, each kernel's `.kd` descriptor
 * and each kernel's code bytes. Throws {@link ElfError} on anything malformed or missing.
 */
export function readAmdgpuCodeObject(input: Uint8Array | ElfFile): AmdgpuCodeObject {
  const elf = input instanceof ElfFile ? input : new ElfFile(input);
  if (elf.header.machine !== EM_AMDGPU) {
    throw new ElfError(`e_machine ${elf.header.machine} is not EM_AMDGPU (${EM_AMDGPU})`, 18);
  }
  const note = findAmdgpuMetadataNote(elf);
  if (!note) throw new ElfError('no NT_AMDGPU_METADATA note (owner "AMDGPU", type 32)', 0);
  const metadata = decodeAmdgpuMetadata(note);
  const symbols = new Map<string, ElfSymbol>();
  for (const s of elf.symbols()) {
    if ((s.type === STT_FUNC || s.type === STT_OBJECT) && !symbols.has(s.name)) symbols.set(s.name, s);
  }
  const kernels = metadata.kernels.map((md) => readKernel(elf, md, symbols, note.descOffset));
  return { elf, target: amdgpuTargetFlags(elf), metadata, kernels };
}

function readKernel(elf: ElfFile, metadata: AmdgpuKernelMetadata, symbols: Map<string, ElfSymbol>, noteOffset: number): AmdgpuKernel {
  const kd = symbols.get(metadata.symbol);
  if (!kd || kd.type !== STT_OBJECT) throw new ElfError(`kernel ${metadata.name}: descriptor symbol ${metadata.symbol} not found`, noteOffset);
  if (kd.size !== KERNEL_DESCRIPTOR_SIZE) {
    throw new ElfError(`kernel ${metadata.name}: descriptor ${metadata.symbol} is ${kd.size} bytes, expected ${KERNEL_DESCRIPTOR_SIZE}`, kd.entryOffset);
  }
  const kdBytes = elf.symbolBytes(kd);
  const descriptorOffset = kdBytes.byteOffset - elf.reader.data.byteOffset;
  const descriptor = decodeKernelDescriptor(kdBytes, descriptorOffset);
  const fn = symbols.get(metadata.name);
  if (!fn || fn.type !== STT_FUNC) throw new ElfError(`kernel ${metadata.name}: function symbol not found`, descriptorOffset);
  // In a linked object the descriptor points at the code; a mismatch means a corrupt file.
  if (elf.header.type !== ET_REL && kd.value + descriptor.kernelCodeEntryByteOffset !== fn.value) {
    throw new ElfError(
      `kernel ${metadata.name}: descriptor entry 0x${(kd.value + descriptor.kernelCodeEntryByteOffset).toString(16)} ` +
        `does not match the symbol address 0x${fn.value.toString(16)}`,
      descriptorOffset + 16,
    );
  }
  return { metadata, descriptor, descriptorOffset, code: elf.symbolBytes(fn), symbol: fn };
}
