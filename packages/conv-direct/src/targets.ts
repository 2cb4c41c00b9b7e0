/**
 * The few facts about each target that the host side needs: wave size, shared-memory limits,
 * compute-unit count, residency limits and the MMA atoms. Sources: ../shared/reference/isa-facts.md
 * (LDS limits measured with llc-22, the mma.sync fragment layout), the CUDA compute-capability 9.0
 * table (per-SM limits), and the MI355X / MI300X / H200 product specifications (CU / SM counts).
 */

/** Targets this package plans for. */
export const TARGET_NAMES = ['gfx950', 'gfx942', 'sm_90'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/**
 * MMA atom names: AMD MFMA shapes, the NVIDIA warp-level mma.sync shape and the sm_90a warpgroup
 * MMA; and `fma`, no MMA at all: the depthwise kernel's per-lane fp32 FMAs (VALU / CUDA cores).
 */
export const ATOM_NAMES = ['32x32x16', '16x16x32', '32x32x8', '16x16x16', 'm16n8k16', 'm64nNk16', 'fma'] as const;
export type AtomName = (typeof ATOM_NAMES)[number];

/**
 * One MMA instruction as the kernel uses it: A = weights (M = output channels), B = activations
 * (N = output pixels along W), K = input channels. Per-lane counts follow from the wave size.
 */
export interface AtomFacts {
  readonly name: AtomName;
  /** Output channels per atom (rows of A). */
  readonly m: number;
  /** Output pixels per atom (columns of B). */
  readonly n: number;
  /** Input channels reduced per atom. */
  readonly k: number;
  /** Lanes that execute it together. */
  readonly waveSize: number;
  /** A-operand (weight) elements per lane: m*k/wave. */
  readonly fragA: number;
  /** B-operand (activation) elements per lane: n*k/wave. */
  readonly fragB: number;
  /** f32 accumulators per lane: m*n/wave. */
  readonly accPerLane: number;
}

function atom(name: AtomName, m: number, n: number, k: number, waveSize: number): AtomFacts {
  return { name, m, n, k, waveSize, fragA: (m * k) / waveSize, fragB: (n * k) / waveSize, accPerLane: (m * n) / waveSize };
}

/** Every atom this package knows. */
export const ATOMS: Readonly<Record<AtomName, AtomFacts>> = {
  '32x32x16': atom('32x32x16', 32, 32, 16, 64),
  '16x16x32': atom('16x16x32', 16, 16, 32, 64),
  '32x32x8': atom('32x32x8', 32, 32, 8, 64),
  '16x16x16': atom('16x16x16', 16, 16, 16, 64),
  'm16n8k16': atom('m16n8k16', 16, 8, 16, 32),
  // Warpgroup MMA: M = 64 output pixels (8 rows x 8 columns), N = the warpgroup's output channels
  // (any multiple of 8 up to 256), both operands read from shared memory. The facts record the
  // granularities the tiles must respect: 8 channels, 8 pixels along W, 16 input channels.
  'm64nNk16': { name: 'm64nNk16', m: 8, n: 8, k: 16, waveSize: 128, fragA: 0, fragB: 0, accPerLane: 0 },
  // One lane, one channel, one multiply-add: the depthwise kernel (no target lists it among its MMA atoms).
  fma: { name: 'fma', m: 1, n: 1, k: 1, waveSize: 1, fragA: 1, fragB: 1, accPerLane: 1 },
};

/** True for the warpgroup MMA atom, whose kernel is built by kernel/wgmma.ts. */
export const isWarpgroupAtom = (name: AtomName): boolean => name === 'm64nNk16';
/** Largest wgmma N (output channels per warpgroup). */
export const WGMMA_MAX_N = 256;

/** Host-side facts about one target. */
export interface TargetFacts {
  readonly name: TargetName;
  readonly vendor: 'amd' | 'nvidia';
  /** Lanes per wave (AMD wave64) or warp (NVIDIA warp32). */
  readonly waveSize: number;
  readonly maxThreadsPerBlock: number;
  /** Most shared memory (LDS) one workgroup may use, bytes. */
  readonly sharedBytesPerBlock: number;
  /** Shared memory per CU / SM that resident workgroups divide among themselves, bytes. */
  readonly sharedBytesPerUnit: number;
  /** Shared memory the runtime reserves per resident block (1 KiB on sm_90), bytes. */
  readonly sharedReservedPerBlock: number;
  /** Compute units (AMD CUs on MI355X / MI300X) or SMs (H200). */
  readonly computeUnits: number;
  /** Resident threads per CU / SM. */
  readonly maxThreadsPerUnit: number;
  /** Resident workgroups per CU / SM, where the hardware caps it separately (null: waves cap it). */
  readonly maxBlocksPerUnit: number | null;
  /**
   * Register model for residency. AMD: each SIMD (4 per CU) has 512 32-bit registers per lane
   * (unified VGPR+AGPR file, gfx90a+) and holds at most 8 waves. NVIDIA: 65536 registers per SM,
   * at most 255 per thread.
   */
  readonly registers:
    | { readonly kind: 'simd'; readonly simdsPerUnit: number; readonly perLane: number; readonly maxWavesPerSimd: number }
    | { readonly kind: 'file'; readonly perUnit: number; readonly maxPerThread: number };
  /** Accelerator dies with their own L2 (XCDs); the chiplet swizzle groups workgroups per die. */
  readonly chiplets: number;
  /** MMA atoms the kernels may use on this target, widest-K first per tile size. */
  readonly atoms: readonly AtomName[];
}

/** The target table. */
export const TARGETS: Readonly<Record<TargetName, TargetFacts>> = {
  gfx950: {
    name: 'gfx950',
    vendor: 'amd',
    waveSize: 64,
    maxThreadsPerBlock: 1024,
    sharedBytesPerBlock: 163840,
    sharedBytesPerUnit: 163840,
    sharedReservedPerBlock: 0,
    computeUnits: 256,
    maxThreadsPerUnit: 2048,
    maxBlocksPerUnit: null,
    registers: { kind: 'simd', simdsPerUnit: 4, perLane: 512, maxWavesPerSimd: 8 },
    chiplets: 8,
    atoms: ['32x32x16', '16x16x32'],
  },
  gfx942: {
    name: 'gfx942',
    vendor: 'amd',
    waveSize: 64,
    maxThreadsPerBlock: 1024,
    sharedBytesPerBlock: 65536,
    sharedBytesPerUnit: 65536,
    sharedReservedPerBlock: 0,
    computeUnits: 304,
    maxThreadsPerUnit: 2048,
    maxBlocksPerUnit: null,
    registers: { kind: 'simd', simdsPerUnit: 4, perLane: 512, maxWavesPerSimd: 8 },
    chiplets: 8,
    atoms: ['32x32x8', '16x16x16'],
  },
  sm_90: {
    name: 'sm_90',
    vendor: 'nvidia',
    waveSize: 32,
    maxThreadsPerBlock: 1024,
    sharedBytesPerBlock: 232448,
    sharedBytesPerUnit: 233472,
    sharedReservedPerBlock: 1024,
    computeUnits: 132,
    maxThreadsPerUnit: 2048,
    maxBlocksPerUnit: 32,
    registers: { kind: 'file', perUnit: 65536, maxPerThread: 255 },
    chiplets: 1,
    atoms: ['m16n8k16', 'm64nNk16'],
  },
};

/** True when `name` is a target this package knows. */
export function isTargetName(name: unknown): name is TargetName {
  return typeof name === 'string' && (TARGET_NAMES as readonly string[]).includes(name);
}

/** Facts for a target; throws for an unknown name (callers validate first). */
export function targetFacts(name: TargetName): TargetFacts {
  const t = TARGETS[name];
  if (!t) throw new Error(`unknown target '${String(name)}' (known: ${TARGET_NAMES.join(', ')})`);
  return t;
}

/** Largest byte count any tensor may have per launch: buffer offsets stay i32 with sentinel headroom. */
export const MAX_TENSOR_BYTES = 0x7f000000;
/** Largest flat grid (workgroups): the kernels count workgroups in i32. */
export const MAX_GRID = 2 ** 31 - 1;
/** Largest i32. */
export const I32_MAX = 2 ** 31 - 1;
