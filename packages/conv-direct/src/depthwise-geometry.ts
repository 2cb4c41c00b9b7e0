/**
 * Compile-time geometry of a depthwise spec (kernel/depthwise.ts). Kept apart from spec.ts, which
 * maps it onto its SpecGeometry, so that this file needs nothing from spec.ts (no import cycle).
 *
 * The workgroup computes tile_h x tile_w output pixels x tile_k output channels. Each thread owns
 * one vector of 8 output channels, one output row and `waves_m` adjacent output columns (the
 * register blocking along W). With channel multiplier M = K/C = 8/ck, the 8 output channels of a
 * thread read ck input channels, and the tile stages tile_k/M input channels.
 */
import { ELEMENT_BYTES } from './problem.js';
import { TARGETS, type TargetName } from './targets.js';

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
  readonly lds_pad: number;
}

/** Output channels per thread: one 16-byte vector of the output pixel. */
export const DEPTHWISE_VECTOR = 8;
/** Input staging passes whose 16-byte loads a thread keeps in flight together (weights: 4x as many 2-byte loads). */
export const DEPTHWISE_STAGE_BATCH = 4;

export interface DepthwiseGeometry {
  /** Channel multiplier K/C the spec serves (8 / ck). */
  readonly multiplier: number;
  /** Output columns per thread (waves_m), column groups across tile_w, 8-channel output vectors across tile_k. */
  readonly columnsPerThread: number;
  readonly columnGroups: number;
  readonly outVectors: number;
  /** (tile_k/8) x tile_h x column groups: one thread per (vector, row, column group). */
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
  /** Bytes of the staged halo tile (rounded to 16) and of the staged weights ([tap][tile_k]). */
  readonly xBytes: number;
  readonly wBytes: number;
  readonly ldsBytes: number;
  /** Staging: 16-byte input vectors and thread passes over them; weight elements and passes. */
  readonly xVectors: number;
  readonly xPasses: number;
  readonly wElems: number;
  readonly wPasses: number;
  /** Input columns one thread reads per filter row: (columnsPerThread - 1) * stride_w + S. */
  readonly columnsRead: number;
  /** f32 accumulators per thread. */
  readonly accPerLane: number;
  /**
   * Live 32-bit registers per thread, about: the larger of the staging phase (one batch of 16-byte
   * loads in flight with their LDS offsets: 6 per pass, 2 per weight element) and the tap loop
   * (accumulators, one filter row of weights as S x 8 f32, one input vector), plus ~16 for
   * addresses and ids.
   */
  readonly liveRegisters: number;
}

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** Geometry of a depthwise spec. Pure arithmetic: meaningful only once its positivity checks passed. */
export function depthwiseGeometry(s: DepthwiseTileFields): DepthwiseGeometry {
  const multiplier = DEPTHWISE_VECTOR / s.ck;
  const columnsPerThread = s.waves_m;
  const columnGroups = s.tile_w / columnsPerThread;
  const outVectors = s.tile_k / DEPTHWISE_VECTOR;
  const threads = outVectors * s.tile_h * columnGroups;
  const inChannels = s.tile_k / multiplier;
  const inVectors = inChannels / DEPTHWISE_VECTOR;
  const ldsInH = (s.tile_h - 1) * s.stride_h + s.R;
  const ldsInW = (s.tile_w - 1) * s.stride_w + s.S;
  const pixelStride = inChannels + s.lds_pad;
  const xBytes = roundUp(ldsInH * ldsInW * pixelStride * ELEMENT_BYTES, 16);
  const wElems = s.R * s.S * s.tile_k;
  const wBytes = wElems * ELEMENT_BYTES;
  const xVectors = ldsInH * ldsInW * inVectors;
  const accPerLane = DEPTHWISE_VECTOR * columnsPerThread;
  const xPasses = Math.ceil(xVectors / Math.max(threads, 1));
  const wPasses = Math.ceil(wElems / Math.max(threads, 1));
  const staging = 6 * Math.min(xPasses, DEPTHWISE_STAGE_BATCH) + 2 * Math.min(wPasses, 4 * DEPTHWISE_STAGE_BATCH);
  const taps = accPerLane + DEPTHWISE_VECTOR * s.S + DEPTHWISE_VECTOR;
  return {
    multiplier,
    columnsPerThread,
    columnGroups,
    outVectors,
    threads,
    waveSize: TARGETS[s.target].waveSize,
    inChannels,
    inVectors,
    ldsInH,
    ldsInW,
    pixelStride,
    xBytes,
    wBytes,
    ldsBytes: xBytes + wBytes,
    xVectors,
    xPasses,
    wElems,
    wPasses,
    columnsRead: (columnsPerThread - 1) * s.stride_w + s.S,
    accPerLane,
    liveRegisters: Math.max(staging, taps) + 16,
  };
}

/** Shared-memory banks of 4 bytes each, on every target here (32 per CU / SM). */
const BANKS = 32;
const BANK_BYTES = 4;

/**
 * Worst bank conflict (lanes served one after another) of the tap loop's input reads for one
 * wave: lane l reads ck elements of its pixel; lanes are (vector, column group, row) with the
 * vector fastest. Reads of 16 bytes are served 8 lanes at a time (128 bytes), narrower reads by
 * 128 bytes' worth of lanes; lanes reading the same word share it (broadcast).
 */
export function depthwiseReadConflicts(s: DepthwiseTileFields): number {
  const g = depthwiseGeometry(s);
  const readBytes = s.ck * ELEMENT_BYTES;
  const perPhase = Math.max(1, (BANKS * BANK_BYTES) / Math.max(readBytes, BANK_BYTES));
  let worst = 1;
  const lanes = Math.min(g.waveSize, g.threads);
  for (let p0 = 0; p0 < lanes; p0 += perPhase) {
    const words = new Map<number, Set<number>>();
    for (let l = p0; l < Math.min(p0 + perPhase, lanes); l++) {
      const v = l % g.outVectors;
      const rest = Math.floor(l / g.outVectors);
      const group = rest % g.columnGroups;
      const row = Math.floor(rest / g.columnGroups);
      const elem = (row * s.stride_h * g.ldsInW + group * g.columnsPerThread * s.stride_w) * g.pixelStride + v * s.ck;
      for (let b = 0; b < readBytes; b += BANK_BYTES) {
        const word = Math.floor((elem * ELEMENT_BYTES + b) / BANK_BYTES);
        const bank = word % BANKS;
        const set = words.get(bank) ?? new Set<number>();
        set.add(word);
        words.set(bank, set);
      }
    }
    for (const set of words.values()) worst = Math.max(worst, set.size);
  }
  return worst;
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
