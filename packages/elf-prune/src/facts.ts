import { createHash } from 'node:crypto';
import { readAmdgpuCodeObject } from './amdgpu.js';
import type { AmdgpuKernel } from './amdgpu.js';
import { readCubin } from './cubin.js';
import type { CubinKernel } from './cubin.js';
import { ElfFile, EM_AMDGPU, EM_CUDA } from './elf.js';
import { ElfError } from './errors.js';
import { AMD_OCCUPANCY_MODELS, amdWavesPerSimd, nvBlocksPerSm, SM90_OCCUPANCY_MODEL } from './occupancy.js';
import type { AmdOccupancy, NvOccupancy } from './occupancy.js';

/** Facts of one AMDGPU kernel. Plain JSON data: digests and counts, never code bytes. */
export interface AmdKernelFacts {
  vendor: 'amd';
  /** `gfx950`, `gfx942`, ... or `mach-0x..` for a model without a table here. */
  target: string;
  name: string;
  /** SHA-256 (hex) of the kernel symbol's code bytes. */
  textDigest: string;
  /** Length of those code bytes. */
  codeBytes: number;
  /** Spill counts from the metadata note (32-bit spill stores for VGPRs). */
  spills: { sgpr: number; vgpr: number; any: boolean };
  /** Scratch bytes per work-item (descriptor private_segment_fixed_size). */
  scratchBytes: number;
  registers: {
    /** Architectural VGPRs (`.vgpr_count − .agpr_count`: aligned to 4 when AGPRs are used). */
    vgpr: number;
    agpr: number;
    /** SGPRs including VCC/FLAT_SCRATCH/XNACK (`.sgpr_count`). */
    sgpr: number;
    /** Unified VGPR+AGPR count from the metadata (`.vgpr_count`). */
    unifiedVgpr: number;
    /** Per-lane registers the hardware allocates, from the descriptor granule (includes waves_per_eu padding). */
    allocatedVgprs: number;
    /** Per-wave SGPRs allocated, from the descriptor granule. */
    allocatedSgprs: number;
    /** First AGPR index in the unified file (rsrc3 ACCUM_OFFSET). */
    accumOffset: number;
  };
  /** Static LDS bytes per workgroup (descriptor group_segment_fixed_size). */
  ldsBytes: number;
  /** Declared maximum workgroup size (`.max_flat_workgroup_size`), used for the LDS bound. */
  maxWorkgroupSize: number;
  /** Waves per SIMD; null when the target has no occupancy table here. */
  occupancy: AmdOccupancy | null;
}

/** Facts of one NVIDIA cubin kernel. */
export interface NvidiaKernelFacts {
  vendor: 'nvidia';
  /** `sm_90`, ... */
  target: string;
  name: string;
  /** SHA-256 (hex) of the kernel's `.text.<name>` code bytes. */
  textDigest: string;
  codeBytes: number;
  /** Spill/refill instructions listed by ptxas in EIATTR_ANNOTATIONS. */
  spills: { instructions: number; any: boolean };
  /** Per-thread stack frame bytes (EIATTR_FRAME_SIZE, spill slots included). */
  scratchBytes: number;
  registers: { regs: number };
  /** Static shared bytes per block (`.nv.shared.<name>` size). */
  ldsBytes: number;
  /** `.maxntid` / `.reqntid` as x·y·z, null when neither was given. */
  maxThreadsPerBlock: number | null;
  /** Blocks per SM; null when the target has no occupancy table here. */
  occupancy: NvOccupancy | null;
}

/** Facts of one kernel of either vendor. */
export type KernelFacts = AmdKernelFacts | NvidiaKernelFacts;

/** SHA-256 of some bytes as lowercase hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Facts for every kernel of an AMDGPU code object or an NVIDIA cubin, in the order the file
 * lists them. Throws {@link ElfError} on malformed input or an unsupported machine.
 */
export function codeFacts(bytes: Uint8Array): KernelFacts[] {
  const elf = new ElfFile(bytes);
  if (elf.header.machine === EM_AMDGPU) {
    const object = readAmdgpuCodeObject(elf);
    const target = object.target.processor ?? `mach-0x${object.target.mach.toString(16)}`;
    return object.kernels.map((k) => amdFacts(k, target));
  }
  if (elf.header.machine === EM_CUDA) {
    const cubin = readCubin(elf);
    return cubin.kernels.map((k) => nvidiaFacts(k, cubin.sm));
  }
  throw new ElfError(`e_machine ${elf.header.machine} is neither EM_AMDGPU (${EM_AMDGPU}) nor EM_CUDA (${EM_CUDA})`, 18);
}

/**
 * Facts of one kernel: the one named `name`, or the only kernel when `name` is omitted.
 * Throws {@link ElfError} when it is missing or the choice is ambiguous.
 */
export function kernelFacts(bytes: Uint8Array, name?: string): KernelFacts {
  const all = codeFacts(bytes);
  const matches = name === undefined ? all : all.filter((k) => k.name === name);
  const [only] = matches;
  if (matches.length !== 1 || only === undefined) {
    const names = all.map((k) => k.name).join(', ') || 'none';
    throw new ElfError(
      name === undefined ? `expected exactly one kernel, found ${all.length} (${names})` : `kernel ${name} not found (kernels: ${names})`,
      0,
    );
  }
  return only;
}

function amdFacts(k: AmdgpuKernel, target: string): AmdKernelFacts {
  const md = k.metadata;
  const kd = k.descriptor;
  const sgpr = md.sgprSpillCount ?? 0;
  const vgpr = md.vgprSpillCount ?? 0;
  const model = AMD_OCCUPANCY_MODELS[target];
  return {
    vendor: 'amd',
    target,
    name: md.name,
    textDigest: sha256Hex(k.code),
    codeBytes: k.code.byteLength,
    spills: { sgpr, vgpr, any: sgpr > 0 || vgpr > 0 },
    scratchBytes: kd.privateSegmentFixedSize,
    registers: {
      vgpr: Math.max(0, md.vgprCount - md.agprCount),
      agpr: md.agprCount,
      sgpr: md.sgprCount,
      unifiedVgpr: md.vgprCount,
      allocatedVgprs: kd.allocatedVgprs,
      allocatedSgprs: kd.allocatedSgprs,
      accumOffset: kd.rsrc3.accumOffset,
    },
    ldsBytes: kd.groupSegmentFixedSize,
    maxWorkgroupSize: md.maxFlatWorkgroupSize,
    occupancy: model
      ? amdWavesPerSimd(model, {
          allocatedVgprs: kd.allocatedVgprs,
          sgprCount: md.sgprCount,
          ldsBytes: kd.groupSegmentFixedSize,
          workgroupSize: md.maxFlatWorkgroupSize,
          wavefrontSize: md.wavefrontSize,
        })
      : null,
  };
}

function nvidiaFacts(k: CubinKernel, sm: number): NvidiaKernelFacts {
  const dims = k.reqNtid ?? k.maxThreads;
  const maxThreadsPerBlock = dims ? dims[0] * dims[1] * dims[2] : null;
  return {
    vendor: 'nvidia',
    target: `sm_${sm}`,
    name: k.name,
    textDigest: sha256Hex(k.code),
    codeBytes: k.code.byteLength,
    spills: { instructions: k.spillRefillInstructions, any: k.spillRefillInstructions > 0 },
    scratchBytes: k.frameSize,
    registers: { regs: k.registers },
    ldsBytes: k.sharedBytes,
    maxThreadsPerBlock,
    // Without a declared block size, assume the largest one (the most conservative bound).
    occupancy:
      sm === 90
        ? nvBlocksPerSm(SM90_OCCUPANCY_MODEL, {
            registers: k.registers,
            sharedBytes: k.sharedBytes,
            threadsPerBlock: maxThreadsPerBlock ?? SM90_OCCUPANCY_MODEL.maxThreadsPerBlock,
          })
        : null,
  };
}
