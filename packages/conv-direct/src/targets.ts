/**
 * What conv-direct adds to @rocke/ir's targets: the MMA atoms as the conv kernels tile with them,
 * which of them each target's kernels use, and the kernels' own limits (tensor bytes per launch,
 * grid size). The hardware facts (wave size, LDS, CU/SM counts, residency) are read from @rocke/ir's
 * `TARGETS`; the target names are re-exported from there for callers.
 */
import { isTargetName, TARGET_NAMES, type TargetName } from '@rocke/ir';
import { MAX_VIEW_BYTES } from '@rocke/split-reduce';

export { isTargetName, TARGET_NAMES, type TargetName };

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

/**
 * MMA atoms the conv kernels may use on each target, widest-K first per tile size: a conv choice,
 * not a hardware fact (the hardware facts, wave size, LDS, CU/SM counts and residency limits, are
 * @rocke/ir's `TARGETS`).
 */
export const CONV_ATOMS: Readonly<Record<TargetName, readonly AtomName[]>> = {
  gfx950: ['32x32x16', '16x16x32'],
  gfx942: ['32x32x8', '16x16x16'],
  sm_90: ['m16n8k16', 'm64nNk16'],
};

/**
 * Largest byte count any tensor may have per launch: the kernels' buffer views (AMD buffer
 * descriptors hold a 32-bit count; offsets stay i32 with sentinel headroom). One limit with the
 * split-reduce pass that reads the same workspace: its `MAX_VIEW_BYTES`.
 */
export const MAX_TENSOR_BYTES = MAX_VIEW_BYTES;
/** Largest flat grid (workgroups): the kernels count workgroups in i32. */
export const MAX_GRID = 2 ** 31 - 1;
/** Largest i32. */
export const I32_MAX = 2 ** 31 - 1;
