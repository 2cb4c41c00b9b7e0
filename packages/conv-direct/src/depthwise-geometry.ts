/**
 * Compile-time geometry of a depthwise spec (kernel/depthwise.ts). Kept apart from spec.ts, which
 * maps it onto its SpecGeometry, so that this file needs nothing from spec.ts (no import cycle).
 *
 * The workgroup computes tile_h x tile_w output pixels x tile_k output channels. Each thread owns
 * one pair of adjacent output channels (one 4-byte bf16x2 / half2 word of a pixel), `waves_n`
 * output rows and `waves_m` adjacent output columns: a register block whose staged input pixels
 * each serve every tap that reaches them, with all R x S weights of its pair in f32 registers.
 * Channel pairs are the fastest thread index, so a wave's LDS reads and stores run along the
 * channels. With channel multiplier M = K/C = 8/ck (ck: input channels per 8 output channels),
 * the tile stages tile_k/M input channels in 16-byte vectors, and a pair reads 2/M of them (one
 * channel for M >= 2, feeding both outputs).
 */
import { TARGETS } from '@rocke/ir';
import { ELEMENT_BYTES } from './problem.js';
import { type TargetName } from './targets.js';

/** The spec fields the depthwise geometry reads (a Spec has them all). */
export interface DepthwiseTileFields {
  readonly target: TargetName;
  readonly R: number;
  readonly S: number;
  readonly stride_h: number;
  readonly stride_w: number;
  readonly tile_h: number;
  readonly tile_w: number;
  readonly tile_k: number;
  readonly ck: number;
  readonly waves_m: number;
  readonly waves_n: number;
  readonly lds_pad: number;
  /** Images per workgroup, one after another over the same tile (more than 1: two staging buffers). */
  readonly tile_n: number;
}

/** Channels per 16-byte staging vector (and the channel granularity of a tile). */
export const DEPTHWISE_VECTOR = 8;
/** Output channels per thread: one 4-byte word of the output pixel. */
export const DEPTHWISE_PAIR = 2;
/** Input staging passes whose 16-byte loads a thread keeps in flight together (weights: 4x as many 2-byte loads). */
export const DEPTHWISE_STAGE_BATCH = 4;

export interface DepthwiseGeometry {
  /** Channel multiplier K/C the spec serves (8 / ck). */
  readonly multiplier: number;
  /** Output columns and rows per thread (waves_m, waves_n), their groups across the tile, channel pairs across tile_k. */
  readonly columnsPerThread: number;
  readonly rowsPerThread: number;
  readonly columnGroups: number;
  readonly rowGroups: number;
  readonly pairs: number;
  /** Input channels one pair reads per pixel: 2 for multiplier 1, else 1 (both outputs read it). */
  readonly pairInChannels: number;
  /** pairs x row groups x column groups: one thread per (pair, row group, column group). */
  readonly threads: number;
  readonly waveSize: number;
  /** Input channels staged per tile (tile_k / multiplier) and their 16-byte vectors per pixel. */
  readonly inChannels: number;
  readonly inVectors: number;
  /** Halo tile rows and columns. */
  readonly ldsInH: number;
  readonly ldsInW: number;
  /** Elements between staged pixels (inChannels + lds_pad). */
  readonly pixelStride: number;
  /** Images per workgroup (tile_n) and halo-tile buffers in LDS: two when the next image stages while one is computed. */
  readonly images: number;
  readonly xBuffers: number;
  /** Bytes of one staged halo tile (rounded to 16) and of the staged weights ([tap][tile_k], after the halo buffers at `wOffset`). */
  readonly xBytes: number;
  readonly wBytes: number;
  readonly wOffset: number;
  readonly ldsBytes: number;
  /** Staging: 16-byte input vectors and thread passes over them; weight elements and passes. */
  readonly xVectors: number;
  readonly xPasses: number;
  readonly wElems: number;
  readonly wPasses: number;
  /** Input rows and columns of one thread's window: (rows - 1) * stride_h + R, (columns - 1) * stride_w + S. */
  readonly rowsRead: number;
  readonly columnsRead: number;
  /** f32 accumulators per thread (2 per output pixel) and f32 weights per thread (2 per tap). */
  readonly accPerLane: number;
  readonly weightRegisters: number;
  /**
   * Live 32-bit registers per thread, about: the larger of the staging phase (one batch of 16-byte
   * loads in flight with their LDS offsets: 6 per pass, 2 per weight element; with several images,
   * the next image's staging runs while the pair's f32 weights are live) and the tap loop
   * (accumulators, the pair's R x S weights in f32, one window row of inputs in f32), plus ~16 for
   * addresses and ids.
   */
  readonly liveRegisters: number;
}

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** Geometry of a depthwise spec. Pure arithmetic: meaningful only once its positivity checks passed. */
export function depthwiseGeometry(s: DepthwiseTileFields): DepthwiseGeometry {
  const multiplier = DEPTHWISE_VECTOR / s.ck;
  const columnsPerThread = s.waves_m;
  const rowsPerThread = s.waves_n;
  const columnGroups = s.tile_w / columnsPerThread;
  const rowGroups = s.tile_h / rowsPerThread;
  const pairs = s.tile_k / DEPTHWISE_PAIR;
  const threads = pairs * rowGroups * columnGroups;
  const inChannels = s.tile_k / multiplier;
  const inVectors = inChannels / DEPTHWISE_VECTOR;
  const ldsInH = (s.tile_h - 1) * s.stride_h + s.R;
  const ldsInW = (s.tile_w - 1) * s.stride_w + s.S;
  const pixelStride = inChannels + s.lds_pad;
  const xBytes = roundUp(ldsInH * ldsInW * pixelStride * ELEMENT_BYTES, 16);
  const wElems = s.R * s.S * s.tile_k;
  const wBytes = wElems * ELEMENT_BYTES;
  const xVectors = ldsInH * ldsInW * inVectors;
  const accPerLane = DEPTHWISE_PAIR * columnsPerThread * rowsPerThread;
  const weightRegisters = DEPTHWISE_PAIR * s.R * s.S;
  const columnsRead = (columnsPerThread - 1) * s.stride_w + s.S;
  const xPasses = Math.ceil(xVectors / Math.max(threads, 1));
  const wPasses = Math.ceil(wElems / Math.max(threads, 1));
  const images = s.tile_n;
  const xBuffers = Math.min(images, 2);
  const staging = 6 * Math.min(xPasses, DEPTHWISE_STAGE_BATCH) + 2 * Math.min(wPasses, 4 * DEPTHWISE_STAGE_BATCH) + (images > 1 ? weightRegisters : 0);
  const taps = accPerLane + weightRegisters + DEPTHWISE_PAIR * columnsRead;
  return {
    multiplier,
    columnsPerThread,
    rowsPerThread,
    columnGroups,
    rowGroups,
    pairs,
    pairInChannels: multiplier === 1 ? DEPTHWISE_PAIR : 1,
    threads,
    waveSize: TARGETS[s.target].waveSize,
    inChannels,
    inVectors,
    ldsInH,
    ldsInW,
    pixelStride,
    images,
    xBuffers,
    xBytes,
    wBytes,
    wOffset: xBuffers * xBytes,
    ldsBytes: xBuffers * xBytes + wBytes,
    xVectors,
    xPasses,
    wElems,
    wPasses,
    rowsRead: (rowsPerThread - 1) * s.stride_h + s.R,
    columnsRead,
    accPerLane,
    weightRegisters,
    liveRegisters: Math.max(staging, taps) + 16,
  };
}

/** Shared-memory banks of 4 bytes each, on every target here (32 per CU / SM). */
const BANKS = 32;
const BANK_BYTES = 4;

/**
 * Worst bank conflict (lanes served one after another) of the tap loop's input reads for one
 * wave: lane l reads the pair's input channels (4 or 2 bytes) of its first window pixel; lanes are
 * (pair, column group, row group) with the pair fastest. One access serves the whole wave's 4-byte
 * words, one per bank; lanes reading the same word share it (broadcast).
 */
export function depthwiseReadConflicts(s: DepthwiseTileFields): number {
  const g = depthwiseGeometry(s);
  // One wave64 access is served as two halves of 32 lanes.
  const phase = Math.min(BANKS, g.waveSize);
  const lanes = Math.min(g.waveSize, g.threads);
  let worst = 1;
  for (let p0 = 0; p0 < lanes; p0 += phase) {
    const words = new Map<number, Set<number>>();
    for (let l = p0; l < Math.min(p0 + phase, lanes); l++) {
      const word = Math.floor((depthwiseReadElement(s, g, l) * ELEMENT_BYTES) / BANK_BYTES);
      const set = words.get(word % BANKS) ?? new Set<number>();
      set.add(word);
      words.set(word % BANKS, set);
    }
    for (const set of words.values()) worst = Math.max(worst, set.size);
  }
  return worst;
}

/**
 * Worst bank conflict of one weight-staging store: lane l stages element l of the `[tap][tile_k]`
 * weight layout (tap l / tile_k, channel l % tile_k; kernel/depthwise.ts), 2 bytes each, one
 * access per 32 lanes. Lanes storing into the same 4-byte word share it.
 */
export function depthwiseWeightStoreConflicts(s: DepthwiseTileFields): number {
  const g = depthwiseGeometry(s);
  const phase = Math.min(BANKS, g.waveSize);
  const lanes = Math.min(phase, g.threads, g.wElems);
  const words = new Map<number, Set<number>>();
  for (let l = 0; l < lanes; l++) {
    const element = Math.floor(l / s.tile_k) * s.tile_k + (l % s.tile_k);
    const word = Math.floor((element * ELEMENT_BYTES) / BANK_BYTES);
    const set = words.get(word % BANKS) ?? new Set<number>();
    set.add(word);
    words.set(word % BANKS, set);
  }
  return Math.max(1, ...[...words.values()].map((set) => set.size));
}

/** LDS element of thread `l`'s first window pixel and first input channel (the kernel's thread map). */
export function depthwiseReadElement(s: DepthwiseTileFields, g: DepthwiseGeometry, l: number): number {
  const pair = l % g.pairs;
  const rest = Math.floor(l / g.pairs);
  const group = rest % g.columnGroups;
  const rowGroup = Math.floor(rest / g.columnGroups);
  const pixel = rowGroup * g.rowsPerThread * s.stride_h * g.ldsInW + group * g.columnsPerThread * s.stride_w;
  return pixel * g.pixelStride + Math.floor((pair * DEPTHWISE_PAIR) / g.multiplier);
}

/** The smallest LDS pixel pad (multiples of 8 elements, up to 56) with the fewest read conflicts. */
export function depthwiseLdsPad(s: Omit<DepthwiseTileFields, 'lds_pad'>): number {
  let best = 0;
  let bestConflicts = Infinity;
  for (let pad = 0; pad <= 56; pad += 8) {
    const c = depthwiseReadConflicts({ ...s, lds_pad: pad });
    if (c < bestConflicts) [best, bestConflicts] = [pad, c];
  }
  return best;
}
