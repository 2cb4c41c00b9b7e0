/**
 * @rocke/elf-prune: reads AMD code objects and NVIDIA cubins into per-kernel code facts
 * (code digest, spills, scratch, registers, LDS, occupancy) and prunes compiled kernel caches.
 */
declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/elf-prune. */
export const VERSION: string = __PACKAGE_VERSION__;

export { ElfError } from './errors.js';
export { ByteReader, MAX_STRING_BYTES } from './bytes.js';
export {
  ElfFile,
  EM_AMDGPU,
  EM_CUDA,
  ET_DYN,
  ET_EXEC,
  ET_REL,
  SHT_DYNSYM,
  SHT_NOBITS,
  SHT_NOTE,
  SHT_STRTAB,
  SHT_SYMTAB,
  STT_FUNC,
  STT_OBJECT,
} from './elf.js';
export type { ElfHeader, ElfNote, ElfSection, ElfSymbol } from './elf.js';
export { AMDGPU_NOTE_OWNER, NT_AMDGPU_METADATA, decodeAmdgpuMetadata, findAmdgpuMetadataNote } from './amdgpu-metadata.js';
export type { AmdgpuKernelArg, AmdgpuKernelMetadata, AmdgpuMetadata } from './amdgpu-metadata.js';
export { KERNEL_DESCRIPTOR_SIZE, decodeKernelDescriptor } from './kernel-descriptor.js';
export type { KernelCodeProperties, KernelDescriptor, PgmRsrc1, PgmRsrc2, PgmRsrc3Gfx90a } from './kernel-descriptor.js';
export { AMDGPU_MACH, amdgpuTargetFlags, readAmdgpuCodeObject } from './amdgpu.js';
export type { AmdgpuCodeObject, AmdgpuKernel, AmdgpuTargetFlags } from './amdgpu.js';
export { ANNOTATION_SPILL_REFILL, EIATTR, payloadWords, readNvInfo } from './nvinfo.js';
export type { NvInfoRecord } from './nvinfo.js';
export { readCubin } from './cubin.js';
export type { Cubin, CubinKernel } from './cubin.js';
export { AMD_OCCUPANCY_MODELS, SM90_OCCUPANCY_MODEL, amdWavesPerSimd, gfx9WavesBySgprs, nvBlocksPerSm } from './occupancy.js';
export type { AmdOccupancy, AmdOccupancyModel, NvOccupancy, NvOccupancyModel } from './occupancy.js';
export { codeFacts, kernelFacts, sha256Hex } from './facts.js';
export type { AmdKernelFacts, KernelFacts, NvidiaKernelFacts } from './facts.js';
export { AmdKernelFactsSchema, KernelFactsSchema, NvidiaKernelFactsSchema, parseKernelFacts } from './facts-schema.js';
export { PRUNABLE_FAMILIES, PruneError, TWIN_WAVES_PER_EU, prune } from './prune.js';
export type { DroppedEntry, PruneEntry, PruneFacts, PruneReason, PruneResult } from './prune.js';
