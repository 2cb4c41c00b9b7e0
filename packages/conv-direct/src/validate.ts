/**
 * Spec validation for dense, split_c, grouped/group_merge, on AMD and sm_90.
 * `validate()` never throws: every failure, including malformed input, comes back as a reason.
 */
import { isBareEpilogue, TARGETS } from '@rocke/ir';
import type { z } from 'zod';
import { depthwiseProblemReason, depthwiseSpecReason } from './depthwise.js';
import { launchGrid } from './grid.js';
import { pointwiseSpecReason } from './pointwise.js';
import { checkProblem, ELEMENT_BYTES, ProblemSchema, problemGeometry, zodReason, type Problem } from './problem.js';
import { keptFacts, SpecSchema, specGeometry, type Spec } from './spec.js';
import { ATOMS, CONV_ATOMS, MAX_GRID, MAX_TENSOR_BYTES, I32_MAX, WGMMA_MAX_N, isWarpgroupAtom } from './targets.js';
import { splitUnit } from './split-slices.js';
import { usesAsyncCopy, weightPieceElems } from './kernel/schedule.js';

/** Outcome of validation. */
export type Validation = { ok: true } | { ok: false; reason: string };

/** Options for {@link validate}. */
export interface ValidateOptions {
  /** split_c: the runtime split count to check (default 1). Other variants accept only 1. */
  splits?: number;
}

/** Largest stride along either axis. */
export const MAX_STRIDE = 4;
/** Values of `c_tail`: 0 (no channel tail), or the elements per tail load. */
export const C_TAIL_RUNS: readonly number[] = [0, 8, 4, 2, 1];

/** Accumulators per lane past which the AMD backend's scheduler hangs. */
export const MAX_ACCUMULATORS_PER_LANE = 256;
/** Output channels per store vector: without k_tail, K (grouped: each merged block) must be a multiple. */
export const OUTPUT_VECTOR = 8;
/** Bytes per fp32 workspace element. */
export const WORKSPACE_ELEMENT_BYTES = 4;

const OK: Validation = { ok: true };
const fail = (reason: string): Validation => ({ ok: false, reason });
const hex = (n: number): string => `0x${n.toString(16).toUpperCase()}`;

/** The AMD-only hints (iglp, waves_per_eu, chiplet swizzle) against the spec's target. */
function targetHintReason(s: Spec): string | null {
  const target = TARGETS[s.target];
  if (s.iglp !== null && s.iglp < 0) return `iglp must be null or >= 0 (got ${s.iglp})`;
  if (s.waves_per_eu !== null && s.waves_per_eu < 1) return `waves_per_eu must be null or >= 1 (got ${s.waves_per_eu})`;
  if (target.vendor === 'nvidia') {
    if (s.iglp !== null) return `iglp is an AMD scheduling hint; ${s.target} specs need iglp null`;
    if (s.waves_per_eu !== null) return `waves_per_eu is an AMD attribute; ${s.target} specs need waves_per_eu null`;
    if (s.chiplet_swizzle) return `${s.target} has no chiplets (XCDs); chiplet_swizzle must be false`;
  } else if (s.waves_per_eu !== null && target.registers.kind === 'simd' && s.waves_per_eu > target.registers.maxWavesPerSimd) {
    return `waves_per_eu ${s.waves_per_eu} exceeds ${target.registers.maxWavesPerSimd} waves per SIMD on ${s.target}`;
  }
  return null;
}

/** Checks that need only the spec (positivity first, then divisibility, then resources); kept for a frozen spec. */
function validateSpecOnly(s: Spec): string | null {
  const kept = keptFacts(s);
  if (!kept) return specOnlyReason(s);
  if (kept.specOnly === undefined) kept.specOnly = specOnlyReason(s);
  return kept.specOnly;
}

/** {@link validateSpecOnly}, computed. */
function specOnlyReason(s: Spec): string | null {
  const ring = s.weight_ring ? weightRingReason(s) : null;
  if (ring) return ring;
  if (s.variant === 'depthwise') return depthwiseSpecReason(s) ?? targetHintReason(s);
  const pointwise = s.variant === 'pointwise' ? pointwiseSpecReason(s) : null;
  if (pointwise) return pointwise;
  const target = TARGETS[s.target];
  const atom = ATOMS[s.atom];
  if (!CONV_ATOMS[s.target].includes(s.atom)) {
    return `atom ${s.atom} is not available on ${s.target} (it has ${CONV_ATOMS[s.target].join(', ')})`;
  }
  for (const f of ['R', 'S', 'stride_h', 'stride_w', 'dilation_h', 'dilation_w', 'tile_h', 'tile_w', 'tile_k', 'ck', 'waves_m', 'waves_n'] as const) {
    if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  }
  for (const f of ['swizzle_wgm', 'chiplet_chunk', 'num_xcds', 'group_merge', 'tile_n'] as const) {
    if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  }
  if (s.epilogue && isBareEpilogue(s.epilogue)) return 'epilogue: a bare epilogue (act none, no bias, no residual) is written by leaving the field out';
  if (s.epilogue && s.variant === 'split_c') {
    return "epilogue: split_c writes fp32 partial sums; its epilogue runs in the split-reduce pass after the fold (give it to the reduce's spec)";
  }
  if (s.pad_h < 0 || s.pad_w < 0) return `padding must be >= 0 (got pad_h ${s.pad_h}, pad_w ${s.pad_w})`;
  if (s.lds_pad < 0) return `lds_pad must be >= 0 (got ${s.lds_pad})`;
  if (s.stride_h > MAX_STRIDE || s.stride_w > MAX_STRIDE) return `stride ${s.stride_h}x${s.stride_w} is not supported (each stride must be 1 to ${MAX_STRIDE})`;
  if (!C_TAIL_RUNS.includes(s.c_tail)) return `c_tail ${s.c_tail} must be 0 (no channel tail) or a channel run of ${C_TAIL_RUNS.slice(1).join(', ')}`;
  if (s.tile_n > 1 && s.variant === 'grouped') {
    return `tile_n ${s.tile_n}: the grouped kernel tiles one image (its merged channel blocks already multiply the workgroups); use tile_n 1`;
  }
  const fold = tapFoldReason(s);
  if (fold) return fold;
  const dma = ldsDmaReason(s);
  if (dma) return dma;
  const stream = streamReason(s);
  if (stream) return stream;
  if (s.whole_map && !isWarpgroupAtom(s.atom)) return `whole_map: whole-map tiles are built for the warpgroup MMA (m64nNk16 on sm_90), not ${s.atom}`;
  if (isWarpgroupAtom(s.atom)) {
    const reason = s.whole_map ? validateWholeMapTiles(s) : validateWarpgroupTiles(s);
    if (reason) return reason;
  } else if (s.tile_w % atom.n !== 0) return `tile_w ${s.tile_w} is not a multiple of the atom's N ${atom.n} (${s.atom})`;
  else if (s.tile_k % atom.m !== 0) return `tile_k ${s.tile_k} is not a multiple of the atom's M ${atom.m} (${s.atom})`;
  else if (s.tile_n === 1 && s.tile_h % s.waves_n !== 0) return `tile_h ${s.tile_h} is not a multiple of waves_n ${s.waves_n}`;
  else if ((s.tile_n * s.tile_h) % s.waves_n !== 0) {
    return `tile_n ${s.tile_n} x tile_h ${s.tile_h} = ${s.tile_n * s.tile_h} rows are not a multiple of waves_n ${s.waves_n}`;
  } else if (s.tile_h % ((s.tile_n * s.tile_h) / s.waves_n) !== 0 && ((s.tile_n * s.tile_h) / s.waves_n) % s.tile_h !== 0) {
    // A wave's rows must be one band inside one image or whole images (the kernel reads each band's halo rows contiguously).
    return `tile_n ${s.tile_n} x tile_h ${s.tile_h} rows over waves_n ${s.waves_n}: ${(s.tile_n * s.tile_h) / s.waves_n} rows per wave neither divide tile_h nor cover whole images`;
  }
  else if ((s.tile_k / atom.m) % s.waves_m !== 0) {
    return `tile_k/M = ${s.tile_k / atom.m} atom rows do not split over waves_m ${s.waves_m}`;
  }
  if (s.ck % atom.k !== 0) return `ck ${s.ck} is not a multiple of the atom's K ${atom.k} (${s.atom})`;
  if (s.ck % 8 !== 0) return `ck ${s.ck} is not a multiple of 8 (16-byte staging vectors)`;
  if (s.lds_pad % 8 !== 0) return `lds_pad ${s.lds_pad} is not a multiple of 8 (16-byte aligned LDS vectors)`;
  const hint = targetHintReason(s);
  if (hint) return hint;
  if (s.variant !== 'grouped' && s.group_merge !== 1) {
    return `group_merge ${s.group_merge} needs the grouped variant (${s.variant} specs use 1)`;
  }
  const g = specGeometry(s);
  if (g.threads > target.maxThreadsPerBlock) {
    return `${g.threads} threads per workgroup exceed ${target.maxThreadsPerBlock} on ${s.target}`;
  }
  if (g.ldsBytes > target.ldsBytes) {
    return `LDS ${g.ldsBytes} bytes exceed the ${target.ldsBytes}-byte limit of ${s.target}`;
  }
  if (g.accPerLane > MAX_ACCUMULATORS_PER_LANE) {
    return `${g.accPerLane} accumulators per lane exceed ${MAX_ACCUMULATORS_PER_LANE}`;
  }
  return null;
}

/**
 * The per-tap weight ring (spec.ts `weightRing`): built in the warpgroup-MMA kernels (m-block and
 * whole-map tiles), whose operands wgmma reads from LDS by descriptor, so a tap's weights are one
 * ring stage's address (the B operand of an m-block tile, the A operand of a whole-map one).
 */
function weightRingReason(s: Spec): string | null {
  if (!isWarpgroupAtom(s.atom)) return `weight_ring: the per-tap weight ring is built for the warpgroup MMA (m64nNk16 on sm_90), not ${s.atom}`;
  if (s.variant === 'pointwise' || s.R * s.S < 2) return `weight_ring: a ${s.R}x${s.S} filter has one tap; there is nothing to stream per tap (leave weight_ring out)`;
  return null;
}

/**
 * The tap fold (`fold_s`): dense only (a split or a group boundary would cut the folded axis), on
 * the per-wave MMA atoms (the warpgroup kernel stages by cp.async of whole 16-byte channel runs,
 * which cannot gather one output column's S taps from unaligned pixels), with taps to fold, and
 * staged in runs of c_tail elements, each checked against its own tap's column.
 */
function tapFoldReason(s: Spec): string | null {
  if (!s.fold_s) return null;
  if (s.variant !== 'dense') return `fold_s: the ${s.variant} variant does not fold filter taps (dense only)`;
  if (isWarpgroupAtom(s.atom)) return `fold_s: the warpgroup-MMA kernel copies whole 16-byte channel runs and cannot gather folded taps (use ${CONV_ATOMS[s.target].filter((a) => !isWarpgroupAtom(a)).join(', ')})`;
  if (s.S < 2) return `fold_s: S ${s.S} leaves no filter taps along W to fold`;
  if (s.c_tail === 0) return 'fold_s: the folded staging loads runs of c_tail elements, each checked against its tap column (c_tail must be 8, 4, 2 or 1, not 0)';
  return null;
}

/**
 * Direct-to-LDS weight staging (`lds_dma`): each lane's weight fragment slot must be one load the
 * target moves straight to LDS (the per-wave atoms' fragment layout puts a wave's slots back to back,
 * the placement those loads have), whole (no grouped or channel-tail pieces below a slot), into a
 * second stage while the MMAs read the first.
 */
function ldsDmaReason(s: Spec): string | null {
  if (!s.lds_dma) return null;
  const dma = TARGETS[s.target].ldsDma;
  if (!dma) return `lds_dma: ${s.target} has no direct-to-LDS loads (its kernels stage with cp.async)`;
  if (isWarpgroupAtom(s.atom)) return `lds_dma: the warpgroup-MMA kernel stages with cp.async, not ${s.atom}`;
  const slot = ATOMS[s.atom].fragA;
  if (!dma.sizes.includes(slot * ELEMENT_BYTES)) {
    return `lds_dma: a weight fragment slot of ${s.atom} is ${slot * ELEMENT_BYTES} bytes per lane and ${s.target}'s direct-to-LDS loads move ${dma.sizes.join(', ')} bytes (the lane-contiguous placement admits no split)`;
  }
  const piece = weightPieceElems(s, slot);
  if (piece !== slot) return `lds_dma: the weight slots load in pieces of ${piece} channels (${s.c_tail !== 0 ? `c_tail ${s.c_tail}` : 'group boundaries'}); direct-to-LDS loads move whole ${slot}-channel slots`;
  if (!s.double_buffer) return 'lds_dma: the loads land while the MMAs read the other stage: double_buffer must be true';
  return null;
}

/**
 * The streaming pointwise schedule (`stream`, kernel/mma.ts): pointwise only (a flat pixel index
 * the workgroups stride over), on the per-wave MMA atoms (the warpgroup kernel's stage ring is not
 * built for resident weights yet), and the X staging of its schedule: sm_90 two stages by cp.async
 * (the next chunk lands while one is read), AMD one stage with the next chunk waiting in registers.
 */
function streamReason(s: Spec): string | null {
  if (!s.stream) return null;
  if (s.variant !== 'pointwise') return `stream: the ${s.variant} variant has no streaming schedule (pointwise only)`;
  if (isWarpgroupAtom(s.atom)) return `stream: the warpgroup-MMA kernel has no streaming schedule (use ${CONV_ATOMS[s.target].filter((a) => !isWarpgroupAtom(a)).join(', ')})`;
  if (s.stream.workgroups < 1 || s.stream.chunks < 1) return `stream: workgroups and chunks must be >= 1 (got ${s.stream.workgroups}, ${s.stream.chunks})`;
  if (TARGETS[s.target].vendor === 'nvidia' && !usesAsyncCopy(s)) {
    return `stream: ${s.target} streams with cp.async into two X stages: double_buffer true and whole 16-byte channel runs (c_tail 0 or 8)`;
  }
  if (s.lds_dma) return 'stream: the resident weights are staged once; lds_dma streams weights per chunk (leave it out)';
  if (TARGETS[s.target].vendor === 'amd' && s.double_buffer) return 'stream: the register prefetch streams through one X stage (double_buffer false)';
  return null;
}

/** Registers a warpgroup-MMA thread needs besides its accumulators (addresses, descriptors, loop state), about. */
export const WGMMA_BOOKKEEPING_REGISTERS = 24;

/**
 * Warpgroup-MMA tiles: m-blocks of 8x8 pixels shared out over waves_n warpgroups, tile_k over
 * waves_m warpgroups in wgmma N sizes (multiples of 8 up to 256); dense and split_c only.
 */
function validateWarpgroupTiles(s: Spec): string | null {
  if (s.variant === 'grouped') return `the grouped variant has no warpgroup-MMA kernel (use m16n8k16 on ${s.target})`;
  if (s.c_tail !== 0 && s.c_tail !== 8) return `c_tail ${s.c_tail}: the warpgroup-MMA kernel copies whole 16-byte channel runs (c_tail 0 or 8; use m16n8k16)`;
  if (s.tile_h % 8 !== 0 || s.tile_w % 8 !== 0) return `tile ${s.tile_h}x${s.tile_w} is not made of 8x8-pixel m-blocks (m64nNk16 takes 64 pixels per MMA)`;
  const mBlocks = s.tile_n * (s.tile_h / 8) * (s.tile_w / 8);
  if (mBlocks % s.waves_n !== 0) return `${mBlocks} m-blocks of 8x8 pixels${s.tile_n > 1 ? ` (${s.tile_n} images)` : ''} do not split over waves_n ${s.waves_n} warpgroups`;
  if (s.tile_k % s.waves_m !== 0) return `tile_k ${s.tile_k} does not split over waves_m ${s.waves_m} warpgroups`;
  const n = s.tile_k / s.waves_m;
  if (n % 8 !== 0 || n > WGMMA_MAX_N) return `tile_k/waves_m = ${n} output channels per warpgroup is not a wgmma N (a multiple of 8 up to ${WGMMA_MAX_N})`;
  return validateWgmmaResources(s);
}

/**
 * Whole-map tiles (whole-map.ts): stride 1 (a tap is one constant offset in the flat positions),
 * dense or split_c, warpgroups of 64-channel m-blocks over tile_k (waves_n 1: each warpgroup
 * computes every pixel), and the accumulators
 * (pixel columns / 2 per m-block) in the register file.
 */
function validateWholeMapTiles(s: Spec): string | null {
  if (s.variant !== 'dense' && s.variant !== 'split_c') return `whole_map: the ${s.variant} variant has no whole-map tile (dense and split_c only)`;
  if (s.stride_h !== 1 || s.stride_w !== 1) return `whole_map: stride ${s.stride_h}x${s.stride_w}: flat pixel positions need stride 1 (a tap must be one constant offset)`;
  if (s.c_tail !== 0 && s.c_tail !== 8) return `c_tail ${s.c_tail}: the warpgroup-MMA kernel copies whole 16-byte channel runs (c_tail 0 or 8; use m16n8k16)`;
  if (s.waves_n !== 1) return `whole_map: waves_n ${s.waves_n}: every warpgroup computes all of the tile's pixels (use waves_n 1; waves_m splits tile_k)`;
  if (s.tile_k % s.waves_m !== 0 || (s.tile_k / s.waves_m) % 64 !== 0) {
    return `whole_map: tile_k ${s.tile_k} over waves_m ${s.waves_m} is not whole 64-channel m-blocks per warpgroup (M = 64 output channels)`;
  }
  return validateWgmmaResources(s);
}

/**
 * What every warpgroup-MMA tile needs of the SM: accumulators stay in registers, so the block's
 * threads must fit the register file with them (ptxas refuses 8-warpgroup tiles of 128 accumulators
 * per thread); 128-byte core matrices take no LDS pad; cp.async stages into two buffers.
 */
function validateWgmmaResources(s: Spec): string | null {
  const { threads, accPerLane: acc } = specGeometry(s);
  const file = TARGETS[s.target].registers;
  if (file.kind === 'file' && acc + WGMMA_BOOKKEEPING_REGISTERS > file.maxPerThread) {
    return `${acc} accumulators + ${WGMMA_BOOKKEEPING_REGISTERS} registers per thread exceed the ${file.maxPerThread}-register limit of ${s.target}`;
  }
  if (file.kind === 'file' && threads * (acc + WGMMA_BOOKKEEPING_REGISTERS) > file.perUnit) {
    return `${threads} threads x (${acc} accumulators + ${WGMMA_BOOKKEEPING_REGISTERS}) registers exceed the ${file.perUnit}-register file of ${s.target}`;
  }
  if (s.lds_pad !== 0) return `lds_pad ${s.lds_pad}: warpgroup-MMA tiles read 128-byte core matrices and take no pad (use 0)`;
  if (!s.double_buffer) return 'the warpgroup-MMA kernel stages with cp.async into two buffers: double_buffer must be true';
  return null;
}

/** Checks that tie the spec to one launch of `p` (a whole batch or one chunk of it). */
function validateAgainstProblem(s: Spec, p: Problem, splits: number): string | null {
  const problemReason = checkProblem(p);
  if (problemReason) return problemReason;
  if (p.dtype !== s.dtype) return `problem dtype ${p.dtype} does not match the spec's ${s.dtype}`;
  if (p.dilationH !== s.dilation_h || p.dilationW !== s.dilation_w) {
    return `problem dilation ${p.dilationH}x${p.dilationW} does not match the spec's baked ${s.dilation_h}x${s.dilation_w}`;
  }
  if (p.R !== s.R || p.S !== s.S) return `problem filter ${p.R}x${p.S} does not match the spec's baked ${s.R}x${s.S}`;
  if (p.strideH !== s.stride_h || p.strideW !== s.stride_w) {
    return `problem stride ${p.strideH}x${p.strideW} does not match the spec's baked ${s.stride_h}x${s.stride_w}`;
  }
  if (p.padH !== s.pad_h || p.padW !== s.pad_w) {
    return `problem padding ${p.padH}x${p.padW} does not match the spec's baked ${s.pad_h}x${s.pad_w}`;
  }
  const atom = ATOMS[s.atom];
  const geo = problemGeometry(p);
  if (s.whole_map && (geo.Ho > s.tile_h || geo.Wo > s.tile_w)) {
    return `whole_map needs the output map inside the tile (Ho ${geo.Ho} x Wo ${geo.Wo} against tile ${s.tile_h}x${s.tile_w})`;
  }
  // Depthwise image tiles run their images one after another over one spatial tile, at any map size.
  if (s.tile_n > 1 && s.variant !== 'depthwise' && (geo.Ho > s.tile_h || geo.Wo > s.tile_w)) {
    return `tile_n ${s.tile_n} needs the output map to fit one spatial tile (Ho ${geo.Ho} x Wo ${geo.Wo} against tile ${s.tile_h}x${s.tile_w}); otherwise more images per tile only add LDS`;
  }
  if (s.variant === 'depthwise') {
    const reason = depthwiseProblemReason(s, p);
    if (reason) return reason;
  } else if (s.variant === 'grouped') {
    const gm = s.group_merge;
    if (p.groups % gm !== 0) return `group_merge ${gm} does not divide groups ${p.groups}`;
    const mc = gm * geo.cpg;
    const mk = gm * geo.kpg;
    if (s.c_tail === 0 && mc % s.ck !== 0) {
      return `group_merge ${gm} x cpg ${geo.cpg} = ${mc} merged input channels is not a multiple of ck ${s.ck}`;
    }
    if (s.c_tail !== 0 && geo.cpg % s.c_tail !== 0) return `cpg ${geo.cpg} is not a multiple of the channel run c_tail ${s.c_tail}`;
    if (!s.k_tail && mk % OUTPUT_VECTOR !== 0) {
      return `group_merge ${gm} x kpg ${geo.kpg} = ${mk} merged output channels is not a multiple of ${OUTPUT_VECTOR} (k_tail false)`;
    }
    // A merged block smaller than the tile wastes MMA rows: only when every group is merged, and
    // then only in the atom's smallest tile.
    if (mk < s.tile_k && (gm !== p.groups || s.tile_k !== atom.m)) {
      return `group_merge ${gm} x kpg ${geo.kpg} = ${mk} merged output channels do not fill tile_k ${s.tile_k}`;
    }
  } else {
    if (p.groups !== 1) return `the ${s.variant} variant needs groups == 1 (got ${p.groups}); use the grouped variant`;
    if (!s.k_tail && p.K % OUTPUT_VECTOR !== 0) return `K ${p.K} is not a multiple of ${OUTPUT_VECTOR} (k_tail false)`;
    if (s.c_tail === 0 && p.C % s.ck !== 0) return `C ${p.C} is not a multiple of ck ${s.ck}`;
    if (s.c_tail !== 0 && p.C % s.c_tail !== 0) return `C ${p.C} is not a multiple of the channel run c_tail ${s.c_tail}`;
  }
  if (s.stream && Math.ceil(p.C / s.ck) > s.stream.chunks) {
    return `stream: C ${p.C} is ${Math.ceil(p.C / s.ck)} chunks of ck ${s.ck}; the spec keeps ${s.stream.chunks} resident`;
  }
  const split = splitCountReason(s, p, splits);
  if (split) return split;
  const tensor = tensorReason('x', geo.xBytes) ?? tensorReason('w', geo.wBytes) ?? tensorReason('y', geo.yBytes);
  if (tensor) return tensor;
  // The last prefetch reads one chunk (two when double-buffered) past the channel end from the sentinel offset.
  const headroom = MAX_TENSOR_BYTES + ELEMENT_BYTES * (p.C + (s.double_buffer ? 2 : 1) * s.ck);
  if (headroom > I32_MAX) return `C ${p.C} is too large: the sentinel offset plus one channel chunk passes 2^31 - 1`;
  return null;
}

/**
 * The rules of {@link validateAgainstProblem} that read the split count: split_c's slices and
 * workspace (other variants take 1) and the grid's size. A spec that validates at one split count
 * validates at another exactly when these pass (the split chooser walks the counts by them).
 */
export function splitCountReason(s: Spec, p: Problem, splits: number): string | null {
  if (s.variant === 'split_c') {
    if (!Number.isInteger(splits) || splits < 1) return `splits must be an integer >= 1 (got ${splits})`;
    // Slices are whole channel runs, uneven by at most one run (split-slices.ts); none may be empty.
    const unit = splitUnit(s);
    if (splits * unit > p.C) return `splits ${splits} leaves a slice without channels: C ${p.C} is ${p.C / unit} runs of ${s.c_tail === 0 ? `ck ${s.ck}` : `c_tail ${s.c_tail}`}`;
    const geo = problemGeometry(p);
    const wsBytes = WORKSPACE_ELEMENT_BYTES * splits * p.N * geo.Ho * geo.Wo * p.K;
    if (wsBytes > MAX_TENSOR_BYTES) {
      return `workspace [splits ${splits}, N ${p.N}, Ho ${geo.Ho}, Wo ${geo.Wo}, K ${p.K}] fp32 is ${wsBytes} bytes, over the per-launch limit ${hex(MAX_TENSOR_BYTES)} (${MAX_TENSOR_BYTES})`;
    }
  } else if (splits !== 1) {
    return `splits ${splits} needs the split_c variant (${s.variant} runs the whole channel loop)`;
  }
  const grid = launchGrid(s, p, splits);
  if (grid.workgroups > MAX_GRID) {
    return `grid of ${grid.workgroups} workgroups exceeds 2^31 - 1; grow the tile or split the batch`;
  }
  return null;
}

/** Why tensor `name` of `bytes` cannot be one launch's buffer, or null. */
function tensorReason(name: 'x' | 'w' | 'y', bytes: number): string | null {
  if (bytes <= MAX_TENSOR_BYTES) return null;
  const hint = name === 'w' ? '' : '; plan() splits the batch into chunks';
  return `${name} is ${bytes} bytes, over the per-launch limit ${hex(MAX_TENSOR_BYTES)} (${MAX_TENSOR_BYTES})${hint}`;
}

/**
 * Objects a schema accepted that cannot change since: frozen (their nested objects too), so the
 * check still holds. Candidate searches validate one spec and one problem many times (each
 * candidate, each split count, the ranker's trials); those skip the schema after the first pass.
 */
const CHECKED = new WeakMap<object, z.ZodType>();

function deeplyFrozen(value: object): boolean {
  return Object.isFrozen(value) && Object.values(value).every((v) => typeof v !== 'object' || v === null || deeplyFrozen(v));
}

/** `schema.safeParse(input)`, skipped for an input this schema already accepted and that is deeply frozen. */
function schemaChecked<T extends z.ZodType>(schema: T, input: unknown): z.ZodSafeParseResult<z.output<T>> {
  if (typeof input === 'object' && input !== null && CHECKED.get(input) === schema) return { success: true, data: input as z.output<T> };
  const r = schema.safeParse(input);
  if (r.success && typeof input === 'object' && input !== null && deeplyFrozen(input)) CHECKED.set(input, schema);
  return r;
}

/**
 * A deeply frozen copy of a spec the schema accepts (the candidate grid's output), which
 * {@link validate} then checks against problems without re-reading the schema; null if it is rejected.
 */
export function frozenSpec(spec: unknown): Spec | null {
  if (typeof spec === 'object' && spec !== null && CHECKED.get(spec) === SpecSchema) return spec as Spec;
  const r = SpecSchema.safeParse(spec);
  return r.success ? markChecked(r.data) : null;
}

/** A frozen copy of a problem: {@link validate} reads its schema once, not at every candidate and split trial. */
export function frozenProblem(problem: Problem): Problem {
  return Object.isFrozen(problem) ? problem : Object.freeze({ ...problem });
}

/**
 * {@link frozenProblem} of a problem the schema accepts (the problem itself when it is frozen
 * already), or null: validation, the problem's kept facts (problem.ts) and the cost model then
 * share one object.
 */
export function checkedProblem(problem: Problem): Problem | null {
  const frozen = frozenProblem(problem);
  return schemaChecked(ProblemSchema, frozen).success ? frozen : null;
}

/**
 * Freezes a spec this package built field by field (the candidate grid's) and marks it as one the
 * schema accepts, without the schema's read (zoo.test.ts checks that the grid's specs parse).
 * Package-internal: specs from outside go through {@link frozenSpec}.
 */
export function markChecked(spec: Spec): Spec {
  if (spec.epilogue) Object.freeze(spec.epilogue);
  if (spec.stream) Object.freeze(spec.stream);
  CHECKED.set(Object.freeze(spec), SpecSchema);
  return spec;
}

/**
 * Validates a spec, alone or for one launch over `problem`. Never throws: a malformed spec or
 * problem, an unknown target and internal errors all come back as `{ok: false, reason}`.
 */
export function validate(spec: unknown, problem?: unknown, options: ValidateOptions = {}): Validation {
  try {
    const parsedSpec = schemaChecked(SpecSchema, spec);
    if (!parsedSpec.success) return fail(`spec ${zodReason(parsedSpec.error)}`);
    const s = parsedSpec.data;
    const specReason = validateSpecOnly(s);
    if (specReason) return fail(specReason);
    if (problem === undefined) {
      const splits = options.splits ?? 1;
      if (!Number.isInteger(splits) || splits < 1) return fail(`splits must be an integer >= 1 (got ${splits})`);
      if (s.variant !== 'split_c' && splits !== 1) return fail(`splits ${splits} needs the split_c variant`);
      return OK;
    }
    const parsedProblem = schemaChecked(ProblemSchema, problem);
    if (!parsedProblem.success) return fail(`problem ${zodReason(parsedProblem.error)}`);
    const reason = validateAgainstProblem(s, parsedProblem.data, options.splits ?? 1);
    return reason ? fail(reason) : OK;
  } catch (e) {
    return fail(`validation failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * {@link validate}'s spec-only rules for a spec this package built field by field (the candidate
 * grid's), without the schema's read, kept for a frozen spec: the reason, or null. With
 * {@link builtLaunchReason} it is validate() for one launch (split count 1), in two steps so that
 * the first is asked once per spec, the second once per problem.
 */
export function builtSpecReason(s: Spec): string | null {
  try {
    return validateSpecOnly(s);
  } catch (e) {
    return failedReason(e);
  }
}

/** {@link validate}'s rules for one launch of `p` (a problem the schema accepted), of a spec that passed {@link builtSpecReason}: the reason, or null. */
export function builtLaunchReason(s: Spec, p: Problem): string | null {
  try {
    return validateAgainstProblem(s, p, 1);
  } catch (e) {
    return failedReason(e);
  }
}

const failedReason = (e: unknown): string => `validation failed: ${e instanceof Error ? e.message : String(e)}`;
