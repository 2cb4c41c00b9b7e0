/**
 * Occupancy estimates from what a binary declares. They bound residency by registers, local
 * memory and hardware slots; they do not model launch-time choices (dynamic shared memory,
 * carve-out preferences, actual block size below the declared maximum).
 */

/** Per-CU/SIMD limits of the AMD CDNA targets (wave64). */
export interface AmdOccupancyModel {
  /** Unified VGPR+AGPR registers per lane per SIMD. */
  vgprsPerSimd: number;
  /** Hardware wave slots per SIMD. */
  maxWavesPerSimd: number;
  simdsPerCu: number;
  /** LDS bytes per CU. */
  ldsBytesPerCu: number;
}

/** gfx90a/gfx942/gfx950: 512 unified registers, 8 waves per SIMD, 4 SIMDs; LDS 64 KiB (160 KiB on gfx950). */
export const AMD_OCCUPANCY_MODELS: Readonly<Record<string, AmdOccupancyModel>> = {
  gfx90a: { vgprsPerSimd: 512, maxWavesPerSimd: 8, simdsPerCu: 4, ldsBytesPerCu: 64 * 1024 },
  gfx942: { vgprsPerSimd: 512, maxWavesPerSimd: 8, simdsPerCu: 4, ldsBytesPerCu: 64 * 1024 },
  gfx950: { vgprsPerSimd: 512, maxWavesPerSimd: 8, simdsPerCu: 4, ldsBytesPerCu: 160 * 1024 },
};

/** Waves per SIMD and the resource that bounds it. */
export interface AmdOccupancy {
  unit: 'waves/simd';
  value: number;
  limitedBy: 'vgpr' | 'sgpr' | 'lds' | 'waves';
}

/**
 * Waves per SIMD that `sgprCount` SGPRs (VCC/FLAT_SCRATCH/XNACK included, as `.sgpr_count`
 * reports) allow on GFX8/GFX9: 10 up to 80, 9 up to 88, 8 up to 100, else 7 (LLVM's
 * GCNSubtarget table; llc-22 for gfx950 reports 8 at 97 SGPRs and 7 at 108).
 */
export function gfx9WavesBySgprs(sgprCount: number): number {
  if (sgprCount <= 80) return 10;
  if (sgprCount <= 88) return 9;
  if (sgprCount <= 100) return 8;
  return 7;
}

/**
 * Waves per SIMD on a CDNA target: the descriptor's allocated (granulated, padded) unified
 * VGPR count, the SGPR count, and LDS per workgroup with the workgroup size taken as the kernel's declared
 * maximum. The LDS bound counts whole workgroups per CU and spreads their waves over the SIMDs
 * (rounding up, as llc's `; Occupancy:` does).
 */
export function amdWavesPerSimd(
  model: AmdOccupancyModel,
  kernel: { allocatedVgprs: number; sgprCount: number; ldsBytes: number; workgroupSize: number; wavefrontSize: number },
): AmdOccupancy {
  let value = model.maxWavesPerSimd;
  let limitedBy: AmdOccupancy['limitedBy'] = 'waves';
  const byVgpr = Math.floor(model.vgprsPerSimd / Math.max(1, kernel.allocatedVgprs));
  if (byVgpr < value) {
    value = byVgpr;
    limitedBy = 'vgpr';
  }
  const bySgpr = gfx9WavesBySgprs(kernel.sgprCount);
  if (bySgpr < value) {
    value = bySgpr;
    limitedBy = 'sgpr';
  }
  if (kernel.ldsBytes > 0) {
    const wavesPerGroup = Math.ceil(Math.max(1, kernel.workgroupSize) / Math.max(1, kernel.wavefrontSize));
    const groupsPerCu = Math.floor(model.ldsBytesPerCu / kernel.ldsBytes);
    // Waves of the resident groups spread over the SIMDs; a partly used SIMD still counts (as llc does).
    const byLds = Math.ceil((groupsPerCu * wavesPerGroup) / model.simdsPerCu);
    // On a tie LDS is the cause: llc pads the VGPR allocation up to what the LDS bound allows.
    if (byLds <= value) {
      value = byLds;
      limitedBy = 'lds';
    }
  }
  return { unit: 'waves/simd', value, limitedBy };
}

/** Per-SM limits of an NVIDIA target, as cuda_occupancy.h uses them. */
export interface NvOccupancyModel {
  regsPerSm: number;
  /** Register file partitions; registers are allocated per warp inside one. */
  subPartitions: number;
  /** Registers per warp are rounded up to this many. */
  regAllocationUnit: number;
  maxWarpsPerSm: number;
  maxBlocksPerSm: number;
  maxThreadsPerBlock: number;
  /** Shared memory per SM at the largest carve-out. */
  sharedBytesPerSm: number;
  sharedAllocationUnit: number;
  /** Shared memory the driver reserves for every block. */
  reservedSharedBytesPerBlock: number;
}

/**
 * sm_90 (H100/H200): 64K registers in 4 partitions, 256-register warp granule, 64 warps,
 * 32 blocks, 228 KiB shared per SM (128-byte granule), 1 KiB reserved per block
 * (CUDA programming guide, compute capability 9.0; granules from cuda_occupancy.h).
 */
export const SM90_OCCUPANCY_MODEL: NvOccupancyModel = {
  regsPerSm: 65536,
  subPartitions: 4,
  regAllocationUnit: 256,
  maxWarpsPerSm: 64,
  maxBlocksPerSm: 32,
  maxThreadsPerBlock: 1024,
  sharedBytesPerSm: 228 * 1024,
  sharedAllocationUnit: 128,
  reservedSharedBytesPerBlock: 1024,
};

/** Blocks per SM and the resource that bounds it. */
export interface NvOccupancy {
  unit: 'blocks/sm';
  value: number;
  limitedBy: 'registers' | 'shared' | 'warps' | 'blocks';
}

const roundUp = (n: number, unit: number): number => Math.ceil(n / unit) * unit;

/**
 * Blocks per SM following cuda_occupancy.h (partitioned register file, warp-granular
 * allocation). `sharedBytes` is the static shared size from the cubin; ptxas 13 already lays
 * the per-block reservation at the start of `.nv.shared.<kernel>`, so a kernel with a shared
 * section is charged its section size, one without is charged the reservation alone.
 */
export function nvBlocksPerSm(
  model: NvOccupancyModel,
  kernel: { registers: number; sharedBytes: number; threadsPerBlock: number },
): NvOccupancy {
  const threads = Math.min(Math.max(1, kernel.threadsPerBlock), model.maxThreadsPerBlock);
  const warps = Math.ceil(threads / 32);
  let value = model.maxBlocksPerSm;
  let limitedBy: NvOccupancy['limitedBy'] = 'blocks';
  const take = (limit: number, why: NvOccupancy['limitedBy']): void => {
    if (limit < value) {
      value = limit;
      limitedBy = why;
    }
  };
  take(Math.floor(model.maxWarpsPerSm / warps), 'warps');
  const regsPerWarp = roundUp(Math.max(1, kernel.registers) * 32, model.regAllocationUnit);
  const warpsPerPartition = Math.floor(model.regsPerSm / model.subPartitions / regsPerWarp);
  take(Math.floor((warpsPerPartition * model.subPartitions) / warps), 'registers');
  const shared = roundUp(Math.max(kernel.sharedBytes, model.reservedSharedBytesPerBlock), model.sharedAllocationUnit);
  take(Math.floor(model.sharedBytesPerSm / shared), 'shared');
  return { unit: 'blocks/sm', value, limitedBy };
}
