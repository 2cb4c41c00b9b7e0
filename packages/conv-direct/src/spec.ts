/**
 * The kernel spec: every value baked into one compiled binary. Shapes (N, H, W, C, K, groups,
 * split count) are runtime kernargs and are not part of it; filter size, stride, padding and
 * dilation are, and so is whether the kernel handles channel tails.
 */
import { ACTIVATIONS, BIAS_KINDS, epilogueTag, isBareEpilogue, TARGETS, type Epilogue } from '@rocke/ir';
import { z } from 'zod';
import { DTYPES, ELEMENT_BYTES, zodReason } from './problem.js';
import { depthwiseGeometry } from './depthwise-geometry.js';
import { ATOMS, ATOM_NAMES, TARGET_NAMES, isWarpgroupAtom, type AtomFacts } from './targets.js';
import { wholeMapLayout } from './whole-map.js';

/**
 * Kernel variants: the dense LDS-halo kernel, its channel-split twin, the grouped kernel, the
 * depthwise kernel (groups = C, no MMA; its reading of the tile fields is in depthwise-geometry.ts)
 * and the pointwise kernel (1x1 convs as a GEMM over the flat pixel index: see {@link stagedSpec}).
 */
export const VARIANTS = ['dense', 'split_c', 'grouped', 'depthwise', 'pointwise'] as const;
export type Variant = (typeof VARIANTS)[number];

const int = z.number().int();

/**
 * Strict spec schema: a missing or unknown field is an error and nothing takes a default, so a
 * serialized spec reads back as exactly the spec that was written.
 */
export const SpecSchema = z
  .object({
    variant: z.enum(VARIANTS),
    target: z.enum(TARGET_NAMES),
    dtype: z.enum(DTYPES),
    /** Filter rows and columns. */
    R: int,
    S: int,
    stride_h: int,
    stride_w: int,
    pad_h: int,
    pad_w: int,
    /** Input pixels between adjacent filter taps along H and W (1: dense taps). */
    dilation_h: int,
    dilation_w: int,
    /** Output rows, output columns and output channels per workgroup. */
    tile_h: int,
    tile_w: int,
    tile_k: int,
    /** Input channels staged per LDS chunk (depthwise: input channels per 8 output channels, 8 / multiplier). */
    ck: int,
    /** Waves along tile_k and along tile_h (depthwise: output columns and output rows per thread). */
    waves_m: int,
    waves_n: int,
    atom: z.enum(ATOM_NAMES),
    /** Extra elements on the LDS pixel stride against bank conflicts. */
    lds_pad: int,
    /** Two LDS stages instead of one. */
    double_buffer: z.boolean(),
    /** AMD: remap workgroup ids so that `chiplet_chunk` consecutive ones land on one XCD. */
    chiplet_swizzle: z.boolean(),
    chiplet_chunk: int,
    num_xcds: int,
    /** Super-tile width along the channel tiles (1: spatial fastest). */
    swizzle_wgm: int,
    /** AMD `llvm.amdgcn.iglp.opt` level at the top of the channel loop, or none. */
    iglp: int.nullable(),
    /** AMD `amdgpu-waves-per-eu` minimum, or none. */
    waves_per_eu: int.nullable(),
    /** Adjacent groups packed into one block-diagonal MMA problem (grouped only; 1 elsewhere). */
    group_merge: int,
    /**
     * Images per workgroup tile: the same spatial window of `tile_n` consecutive images, so each
     * staged weight chunk serves tile_n images (small maps with N > 1). 1: one image per tile.
     */
    tile_n: int,
    /**
     * The fused store epilogue (@rocke/ir's `Epilogue`: act(alpha*acc + bias[k] + beta*r) before
     * the cast), dense and grouped only: split_c's runs in its split-reduce pass. Left out: the
     * bare store; a bare epilogue written out is refused (one spelling per kernel).
     */
    epilogue: z.object({ act: z.enum(ACTIVATIONS), bias: z.enum(BIAS_KINDS), residual: z.boolean() }).strict().optional(),
    /**
     * Input-channel tail: 0 when the reduced channels are a multiple of ck (no tail code). Else the
     * staging zero-fills every channel at or past the end of the reduced channels (C, a split's
     * slice, or a merged group block) and loads channel runs of `c_tail` elements: 8 (16-byte
     * vectors), or 4, 2, 1 when the channel count is not a multiple of 8.
     */
    c_tail: int,
    /**
     * Output-channel tail: stores go element by element, each checked against the channel count,
     * so K (grouped: each merged block's channels) need not be a multiple of 8.
     */
    k_tail: z.boolean(),
    /**
     * A whole-map tile (sm_90a warpgroup MMA, stride 1): the tile holds tile_n images' whole maps
     * (Ho <= tile_h, Wo <= tile_w) as flat pixel positions and the MMA's N runs over them, so a
     * tiny map is not padded to 8x8 m-blocks (see whole-map.ts). Left out: the m-block tile; written
     * out only as true (one spelling per kernel).
     */
    whole_map: z.literal(true).optional(),
    /**
     * Weights streamed per tap (sm_90a warpgroup MMA, m-block tiles, filters of two or more taps):
     * each tap's tile_k x ck weights go through a ring of their own LDS stages, one tap ahead of
     * another, instead of every tap's weights sharing each halo stage; the halo keeps two stages.
     * The LDS freed goes to a larger ck or tile (see {@link weightRing}). Left out: the weights of
     * every tap staged with each chunk; written out only as true (one spelling per kernel).
     */
    weight_ring: z.literal(true).optional(),
    /**
     * Small-C tap fold (per-wave MMA atoms, dense): the filter's S taps along W join the channels in
     * one reduction axis of S·C elements, (s, c) at s·C + c, zero-padded to whole chunks of ck. The
     * staging writes x[h, w·stride_w + s·dilation_w − pad_w, c] for all s at output column w, so the
     * kernel multiplies R taps of S·C instead of R·S taps of C padded to the atom's K (see
     * {@link stagedSpec}). Left out: no fold; written out only as true (one spelling per kernel).
     */
    fold_s: z.literal(true).optional(),
    /**
     * Weights staged by direct-to-LDS buffer loads (per-wave MMA atoms on a target whose `ldsDma`
     * moves a whole weight fragment slot per lane: gfx950's 16 bytes): each lane's slot goes from
     * global memory to its lane-contiguous place in LDS with no register in between, into the stage
     * the MMAs are not reading (double_buffer). Left out: weights through registers like the
     * activations; written out only as true (one spelling per kernel).
     */
    lds_dma: z.literal(true).optional(),
    /**
     * A streaming (persistent) pointwise schedule (per-wave MMA atoms): `workgroups` workgroups in
     * all, each holding its output-channel tile's weights for `chunks` channel chunks (C <= chunks·ck)
     * in LDS, loaded once, and looping over pixel tiles one grid stride apart, the next tile's first
     * chunk staged while the current tile's outputs are computed and stored (see {@link streamLds}).
     * Left out: one tile per workgroup.
     */
    stream: z.object({ workgroups: int, chunks: int }).strict().optional(),
  })
  .strict();

export type Spec = z.infer<typeof SpecSchema>;

/** Outcome of reading a spec. */
export type SpecResult = { ok: true; spec: Spec } | { ok: false; reason: string };

/**
 * The spec a run with this fused epilogue compiles: the epilogue at the store, except for split_c,
 * whose split-reduce pass applies it (its spec stays bare). No epilogue, or a bare one: the bare spec.
 */
export function withEpilogue(spec: Spec, epilogue: Epilogue | undefined): Spec {
  const { epilogue: _old, ...bare } = spec;
  return epilogue && !isBareEpilogue(epilogue) && spec.variant !== 'split_c' ? { ...bare, epilogue: { act: epilogue.act, bias: epilogue.bias, residual: epilogue.residual } } : bare;
}

/** Parses an object against the strict schema (no defaults, no unknown keys). */
export function parseSpec(input: unknown): SpecResult {
  const r = SpecSchema.safeParse(input);
  return r.success ? { ok: true, spec: r.data } : { ok: false, reason: zodReason(r.error) };
}

/** Canonical JSON of a spec: keys sorted, no whitespace. Equal specs give equal strings. */
export function canonicalSpecJson(spec: Spec): string {
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(spec).sort()) sorted[key] = spec[key as keyof Spec];
  return JSON.stringify(sorted);
}

/** Reads canonical (or any) JSON text back into a spec, strictly. */
export function specFromJson(text: string): SpecResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `spec JSON does not parse: ${(e as Error).message}` };
  }
  return parseSpec(value);
}

/** Answers kept per spec (see {@link keptFacts}); other modules add theirs to this interface. */
export interface SpecFacts {
  name?: string;
  geometry?: SpecGeometry;
  /** Warpgroup-MMA specs: {@link wgmmaLds}. */
  lds?: WgmmaLds;
  /** validate.ts: the spec-only rules' reason, or null. */
  specOnly?: string | null;
}

const KEPT = new WeakMap<Spec, SpecFacts>();

/**
 * The answers kept for a frozen spec, undefined for another: candidate searches ask one spec its
 * name, geometry and spec-only rules many times (lists, the spill estimate, every split trial and
 * ranking), and a frozen spec (the grid's, once validated) cannot change. Package-internal.
 */
export function keptFacts(spec: Spec): SpecFacts | undefined {
  // Looked up first: a spec is kept only once frozen, and stays frozen (isFrozen walks every field).
  let facts = KEPT.get(spec);
  if (facts || !keepable(spec)) return facts;
  KEPT.set(spec, (facts = {}));
  return facts;
}

const keepable = (spec: Spec): boolean =>
  Object.isFrozen(spec) && (spec.epilogue === undefined || Object.isFrozen(spec.epilogue)) && (spec.stream === undefined || Object.isFrozen(spec.stream));

/**
 * Canonical kernel symbol name. Every spec field appears in a fixed order behind its own tag, so
 * two specs share a name only when they are equal; candidates are de-duplicated by it.
 * Example: `rocke_direct_dense_gfx950_bf16_r3s3_u1v1_p1q1_t16x32x128_ck16_w2x4_a32x32x16_lp8_cs1x8x64_wgm8_iglp0`.
 */
export function kernelName(spec: Spec): string {
  const kept = keptFacts(spec);
  return kept ? (kept.name ??= kernelNameOf(spec)) : kernelNameOf(spec);
}

/** {@link kernelName}, computed. */
function kernelNameOf(spec: Spec): string {
  const parts = [
    'rocke_direct',
    spec.variant,
    spec.target,
    spec.dtype,
    `r${spec.R}s${spec.S}`,
    `u${spec.stride_h}v${spec.stride_w}`,
    `p${spec.pad_h}q${spec.pad_w}`,
    // Dilation and the tails only when present, so the names (and IR digests) of other specs stay.
    spec.dilation_h !== 1 || spec.dilation_w !== 1 ? `l${spec.dilation_h}j${spec.dilation_w}` : '',
    `t${spec.tile_h}x${spec.tile_w}x${spec.tile_k}`,
    `ck${spec.ck}`,
    `w${spec.waves_m}x${spec.waves_n}`,
    `a${spec.atom}`,
    `lp${spec.lds_pad}`,
    spec.double_buffer ? 'db' : '',
    `cs${spec.chiplet_swizzle ? 1 : 0}x${spec.num_xcds}x${spec.chiplet_chunk}`,
    `wgm${spec.swizzle_wgm}`,
    spec.iglp === null ? '' : `iglp${spec.iglp}`,
    spec.waves_per_eu === null ? '' : `we${spec.waves_per_eu}`,
    spec.variant === 'grouped' || spec.group_merge !== 1 ? `gm${spec.group_merge}` : '',
    // Only when not 1, so the names (and IR digests) of one-image tiles stay as they were.
    spec.tile_n !== 1 ? `n${spec.tile_n}` : '',
    spec.c_tail !== 0 ? `ct${spec.c_tail}` : '',
    spec.k_tail ? 'kt' : '',
    spec.whole_map ? 'wm' : '',
    spec.weight_ring ? 'wr' : '',
    spec.fold_s ? 'fs' : '',
    spec.lds_dma ? 'ldma' : '',
    spec.stream ? `st${spec.stream.workgroups}x${spec.stream.chunks}` : '',
    // Only with an epilogue, so bare kernels keep their names and digests.
    spec.epilogue ? epilogueTag(spec.epilogue) : '',
  ];
  return parts.filter((p) => p.length > 0).join('_');
}

/** Filter columns folded into each reduction element's run: S with `fold_s`, else 1. */
export function tapFold(spec: Spec): number {
  return spec.fold_s ? spec.S : 1;
}

/** Elements one output pixel reduces per staged tap: the (per-group) input channels, times S when the taps are folded. */
export function reducedChannels(spec: Spec, channels: number): number {
  return tapFold(spec) * channels;
}

/** Compile-time geometry of a spec, generalised to non-square atoms and wave32. */
export interface SpecGeometry {
  readonly atom: AtomFacts;
  readonly waveSize: number;
  readonly threads: number;
  /** Atom columns across tile_w, atom rows across tile_k, atoms across ck. */
  readonly colBlocks: number;
  readonly mTiles: number;
  readonly kAtoms: number;
  /**
   * Output rows per wave, atom rows per wave, atom columns per wave. The waves split the tile's
   * tile_n * tile_h "virtual rows": virtual row v is row v % tile_h of the tile's image v / tile_h.
   */
  readonly rowsPerWave: number;
  readonly mTilesPerWave: number;
  readonly nTilesPerWave: number;
  /** Staged input window of one image with its halo. */
  readonly ldsInH: number;
  readonly ldsInW: number;
  /** LDS halo rows of one stage: tile_n halo tiles stacked along rows (tile_n * ldsInH). */
  readonly ldsRows: number;
  /** LDS pixels per halo row (strided tiles store their columns by phase, see {@link ldsHaloColumn}). */
  readonly rowPixels: number;
  /**
   * A wave's rows as bands inside one image each: `waveImages` bands of `bandRows` rows (a wave
   * inside one image: 1 band of rowsPerWave; a wave over whole images: one band per image).
   */
  readonly bandRows: number;
  readonly waveImages: number;
  /** LDS pixel stride in elements (ck + lds_pad). */
  readonly cStride: number;
  /** Elements of one X and one W stage, without the scratch tails. */
  readonly ldsXElems: number;
  readonly ldsWElems: number;
  /** Scratch tail elements per array: one staging vector each (X: 8, W: fragA). */
  readonly ldsXTail: number;
  readonly ldsWTail: number;
  /** Total LDS bytes per workgroup, tails and double buffering included. */
  readonly ldsBytes: number;
  /** f32 accumulators per lane. */
  readonly accPerLane: number;
  /** X staging: 8-channel vectors per pixel, vectors per stage, thread passes. */
  readonly xChannelVectors: number;
  readonly xVectors: number;
  readonly xPasses: number;
  /** W staging: fragment slots per stage and thread passes. */
  readonly wSlots: number;
  readonly wPasses: number;
}

/** Elements per X staging vector (16-byte loads). */
export const X_VECTOR_ELEMS = 8;

/**
 * Input extent one tile reads along an axis, halo included: the first and last output pixels'
 * first and last taps, (tile - 1) * stride + (filter - 1) * dilation + 1.
 */
export function haloExtent(tile: number, stride: number, filter: number, dilation: number): number {
  return (tile - 1) * stride + (filter - 1) * dilation + 1;
}

/**
 * LDS column of halo column `c` in a row of `ldsInW` halo columns. Strided tiles store the columns
 * by phase — column c at (c % stride) * ceil(ldsInW / stride) + floor(c / stride) — so the window
 * of any tap is contiguous: horizontally adjacent output pixels read adjacent LDS pixels.
 */
export function ldsHaloColumn(c: number, ldsInW: number, stride: number): number {
  return stride > 1 ? (c % stride) * Math.ceil(ldsInW / stride) + Math.floor(c / stride) : c;
}

/**
 * LDS pixels per halo row in the per-wave MMA kernel: the last phase is the shortest, so rows end
 * at (stride - 1) * ceil(ldsInW / stride) + floor(ldsInW / stride) (ldsInW for strides 1 and 2).
 */
export function ldsRowPixels(ldsInW: number, stride: number): number {
  return (stride - 1) * Math.ceil(ldsInW / stride) + Math.floor(ldsInW / stride);
}

/**
 * The spec whose LDS geometry a kernel stages. A tap-folded spec (`fold_s`) stages the folded
 * input: per output column one pixel of S·C "channels" (no halo along W), so it is the R x 1
 * stride-1 unpadded conv along W over that folded map; its reduction is S·C ({@link reducedChannels}).
 * A pointwise (1x1) tile is tile_h x tile_w
 * consecutive pixels of the flat output index N·Ho·Wo (tile pixel (row, col) is flat pixel
 * p0 + row * tile_w + col): the staging gathers each pixel's input at its strided position, so the
 * LDS holds output pixels only — the layout of a 1x1 stride-1 tile, with no halo at any stride.
 * Every other spec is returned as it is.
 */
export function stagedSpec(spec: Spec): Spec {
  if (spec.fold_s) return { ...spec, S: 1, stride_w: 1, pad_w: 0, dilation_w: 1 };
  return spec.variant === 'pointwise' && (spec.stride_h !== 1 || spec.stride_w !== 1) ? { ...spec, stride_h: 1, stride_w: 1 } : spec;
}

/**
 * Geometry of a spec. Pure arithmetic: call it only on specs whose positivity and divisibility
 * checks passed (`validate()` does); on others the numbers are meaningless, never an exception
 * except for an unknown target.
 */
export function specGeometry(spec: Spec): SpecGeometry {
  const kept = keptFacts(spec);
  return kept ? (kept.geometry ??= specGeometryOf(spec)) : specGeometryOf(spec);
}

/** {@link specGeometry}, computed. */
function specGeometryOf(kernelSpec: Spec): SpecGeometry {
  if (kernelSpec.variant === 'depthwise') return depthwiseSpecGeometry(kernelSpec);
  const spec = stagedSpec(kernelSpec);
  if (isWarpgroupAtom(spec.atom)) return warpgroupGeometry(spec);
  const atom = ATOMS[spec.atom];
  const waveSize = TARGETS[spec.target].waveSize;
  const threads = spec.waves_m * spec.waves_n * waveSize;
  const colBlocks = spec.tile_w / atom.n;
  const mTiles = spec.tile_k / atom.m;
  const kAtoms = spec.ck / atom.k;
  const rowsPerWave = (spec.tile_n * spec.tile_h) / spec.waves_n;
  const mTilesPerWave = mTiles / spec.waves_m;
  const nTilesPerWave = rowsPerWave * colBlocks;
  const ldsInH = haloExtent(spec.tile_h, spec.stride_h, spec.R, spec.dilation_h);
  const ldsInW = haloExtent(spec.tile_w, spec.stride_w, spec.S, spec.dilation_w);
  const ldsRows = spec.tile_n * ldsInH;
  const rowPixels = ldsRowPixels(ldsInW, spec.stride_w);
  const bandRows = Math.min(rowsPerWave, spec.tile_h);
  const cStride = spec.ck + spec.lds_pad;
  const ldsXElems = ldsRows * rowPixels * cStride;
  const ldsWElems = spec.tile_k * spec.R * spec.S * spec.ck;
  const ldsXTail = X_VECTOR_ELEMS;
  const ldsWTail = atom.fragA;
  const ldsBytes = spec.stream
    ? streamLds(spec).bytes
    : ELEMENT_BYTES * (ldsXElems + ldsXTail + ldsWElems + ldsWTail) * (spec.double_buffer ? 2 : 1);
  const xChannelVectors = spec.ck / X_VECTOR_ELEMS;
  const xVectors = ldsRows * ldsInW * xChannelVectors;
  const wSlots = spec.R * spec.S * mTiles * kAtoms * waveSize;
  return {
    atom,
    waveSize,
    threads,
    colBlocks,
    mTiles,
    kAtoms,
    rowsPerWave,
    mTilesPerWave,
    nTilesPerWave,
    ldsInH,
    ldsInW,
    ldsRows,
    rowPixels,
    bandRows,
    waveImages: rowsPerWave / bandRows,
    cStride,
    ldsXElems,
    ldsWElems,
    ldsXTail,
    ldsWTail,
    ldsBytes,
    accPerLane: mTilesPerWave * nTilesPerWave * atom.accPerLane,
    xChannelVectors,
    xVectors,
    xPasses: Math.ceil(xVectors / threads),
    wSlots,
    wPasses: Math.ceil(wSlots / threads),
  };
}

/**
 * LDS of a streaming pointwise spec (per-wave MMA atoms), in bytes: the X stages (with their
 * scratch tails) at 0, then `stream.chunks` resident weight stages (one per channel chunk, each as
 * a W stage of the one-tile kernel), then the output tile (kernel/staged-store.ts: pixels of
 * tile_k + one 16-byte vector, fp32 under a fused epilogue; none with k_tail, which stores
 * directly). The output has its own region so the next tile's first chunk can land in an X stage
 * while the current tile is stored.
 */
export interface StreamLds {
  readonly xStageBytes: number;
  readonly wStageBytes: number;
  readonly outOffset: number;
  readonly outBytes: number;
  readonly bytes: number;
}

export function streamLds(spec: Spec): StreamLds {
  const atom = ATOMS[spec.atom];
  const cStride = spec.ck + spec.lds_pad;
  const pixels = spec.tile_h * spec.tile_w;
  const xStageBytes = ELEMENT_BYTES * (pixels * cStride + X_VECTOR_ELEMS);
  const wStageBytes = ELEMENT_BYTES * (spec.tile_k * spec.ck + atom.fragA);
  const outOffset = (spec.double_buffer ? 2 : 1) * xStageBytes + (spec.stream?.chunks ?? 1) * wStageBytes;
  // The staged output element: fp32 under a fused epilogue, else the dtype (store-path.ts).
  const outElement = spec.epilogue ? 4 : ELEMENT_BYTES;
  const outBytes = spec.k_tail ? 0 : pixels * (spec.tile_k + 16 / outElement) * outElement;
  return { xStageBytes, wStageBytes, outOffset, outBytes, bytes: outOffset + outBytes };
}

/** Most LDS stages the warpgroup-MMA kernel keeps in flight. */
export const WGMMA_MAX_STAGES = 4;

/**
 * Shared-memory layout of a warpgroup-MMA spec (kernel/wgmma.ts), in bytes. Per stage: the halo
 * tile as ck/8 planes of [rows][columns][8 channels] (strided: the columns by phase, each
 * half padded to the same length) and the weights as [tap][ck/8][tile_k][8 channels], both in
 * 16-byte rows so that every 8x8 core matrix wgmma reads is 128 contiguous bytes. Stages: as many
 * as let two workgroups share an SM (2..{@link WGMMA_MAX_STAGES}); on the H200 the chunks are short
 * next to the L2 latency (ncu: half the warp stalls wait on cp.async with two stages). With three
 * or more stages one chunk's wgmmas stay in flight and copies run stages − 2 chunks ahead; with
 * two, copies run one chunk ahead and every chunk waits for its wgmmas.
 */
export interface WgmmaLds {
  /**
   * ck 64: K-major rows of 64 channels = 128 bytes, 128B-swizzled (16-byte chunk j of a row at
   * j ^ (address bits 7..9)): one row per halo pixel and per (tap, output channel), stages on 1 KiB
   * boundaries. On the H200 this layout fed wgmma ~1.9x faster than the 16-byte core-matrix planes
   * (packages/ir/device/probes/tma-conv). Other ck: the unswizzled planes.
   */
  readonly swizzle: boolean;
  /** Bytes of one operand row: 128 (swizzled) or 16 (one 8-channel core-matrix row). */
  readonly rowBytes: number;
  /** Extra bytes the kernel asks for to align its window to 1 KiB (swizzled), else 0. */
  readonly alignSlack: number;
  readonly ldsInH: number;
  readonly ldsInW: number;
  /** Halo columns per plane row. */
  readonly planeColumns: number;
  /** Bytes of one 8-channel plane, of one X stage and of one W stage. */
  readonly planeBytes: number;
  readonly xStageBytes: number;
  readonly wStageBytes: number;
  /** X stages (and, without a weight ring, W stages: one of each per chunk in flight). */
  readonly stages: number;
  /** W stages: `stages`, or the weight ring's depth (one tap's weights each, see {@link weightRing}). */
  readonly wStages: number;
  /** The per-tap weight ring of a `weight_ring` spec, else undefined. */
  readonly ring: WeightRing | undefined;
}

/**
 * The per-tap weight stream of a `weight_ring` spec (kernel/wgmma.ts). The channel loop runs in
 * tap steps: step i is tap i % taps of chunk i / taps. Each step's tile_k x ck weights have a ring
 * stage of their own, copied `ahead` steps before the step's wgmmas, which stay in flight while the
 * next step issues; the halo keeps {@link WEIGHT_RING_X_STAGES} stages, the next chunk's copied
 * during tap 1 of the current one.
 * - A ring stage is refilled `stages` steps after its last use, and the copies of step i run while
 *   step i − 1's wgmmas may still read: stages = ahead + 2.
 * - The next chunk's halo is committed with step taps·c + 1's copies and must have landed when
 *   step taps·(c + 1) waits for its weights, which were committed `ahead` steps earlier:
 *   ahead ≤ taps − 1, so at most taps + 1 stages (the weights then run a chunk ahead, as the
 *   all-tap stages do).
 * - Depth: the most stages up to taps + 1 that leave two workgroups per SM, when
 *   {@link WEIGHT_RING_MIN_STAGES} fit there; else the most the block's LDS holds (at least the minimum:
 *   validation rejects a tile whose halo leaves less).
 */
export interface WeightRing {
  readonly stages: number;
  readonly ahead: number;
}

/** Halo stages of a weight-ring spec: the current chunk's and the next one's. */
export const WEIGHT_RING_X_STAGES = 2;
/** Fewest ring stages: one step's wgmmas in flight, one being issued, one copied ahead. */
export const WEIGHT_RING_MIN_STAGES = 3;

/** The ring of `taps` stages of `stageBytes` next to `fixedBytes` of halo stages on `target`. */
export function weightRing(target: Spec['target'], taps: number, fixedBytes: number, stageBytes: number): WeightRing {
  const t = TARGETS[target];
  const fit = (budget: number) => Math.floor((budget - fixedBytes) / stageBytes);
  const shared = fit(t.sharedBytesPerUnit / 2 - t.sharedReservedPerBlock);
  const alone = fit(Math.min(t.ldsBytes, t.sharedBytesPerUnit - t.sharedReservedPerBlock));
  const stages = Math.min(taps + 1, shared >= WEIGHT_RING_MIN_STAGES ? shared : Math.max(WEIGHT_RING_MIN_STAGES, alone));
  return { stages, ahead: stages - 2 };
}

const CORE_ROW_BYTES = X_VECTOR_ELEMS * ELEMENT_BYTES;
/** Channels per chunk that make the warpgroup-MMA kernel use 128B-swizzled rows (see {@link WgmmaLds}). */
export const WGMMA_SWIZZLE_CK = 64;
const SWIZZLE_ATOM_BYTES = 1024;
const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

export function wgmmaLds(spec: Spec): WgmmaLds {
  const kept = keptFacts(spec);
  return kept ? (kept.lds ??= wgmmaLdsOf(spec)) : wgmmaLdsOf(spec);
}

/** {@link wgmmaLds}, computed. */
function wgmmaLdsOf(kernelSpec: Spec): WgmmaLds {
  const spec = stagedSpec(kernelSpec);
  const flat = spec.whole_map ? wholeMapLayout(spec) : undefined;
  // Whole-map tiles: `staged` flat positions at a pitch of pitchW per row, pitchH rows per image.
  const ldsInH = flat ? flat.pitchH : haloExtent(spec.tile_h, spec.stride_h, spec.R, spec.dilation_h);
  const ldsInW = flat ? flat.pitchW : haloExtent(spec.tile_w, spec.stride_w, spec.S, spec.dilation_w);
  const planeColumns = spec.stride_w > 1 ? spec.stride_w * Math.ceil(ldsInW / spec.stride_w) : ldsInW;
  const swizzle = spec.ck === WGMMA_SWIZZLE_CK;
  const rowBytes = swizzle ? spec.ck * ELEMENT_BYTES : CORE_ROW_BYTES;
  // tile_n halo tiles stacked along rows, as in the LDS-halo kernel; swizzled: one plane of 128-byte rows.
  const planeBytes = (flat ? flat.staged : spec.tile_n * ldsInH * planeColumns) * rowBytes;
  const groups = spec.ck / X_VECTOR_ELEMS;
  const xStageBytes = swizzle ? roundUp(planeBytes, SWIZZLE_ATOM_BYTES) : groups * planeBytes;
  const alignSlack = swizzle ? SWIZZLE_ATOM_BYTES : 0;
  // A W stage holds every tap's weights, or one tap's (weight ring).
  const taps = spec.weight_ring ? 1 : spec.R * spec.S;
  const wStageBytes = swizzle ? roundUp(taps * spec.tile_k * rowBytes, SWIZZLE_ATOM_BYTES) : taps * groups * spec.tile_k * CORE_ROW_BYTES;
  const common = { swizzle, rowBytes, alignSlack, ldsInH, ldsInW, planeColumns, planeBytes, xStageBytes, wStageBytes };
  if (spec.weight_ring) {
    const ring = weightRing(spec.target, spec.R * spec.S, WEIGHT_RING_X_STAGES * xStageBytes + alignSlack, wStageBytes);
    return { ...common, stages: WEIGHT_RING_X_STAGES, wStages: ring.stages, ring };
  }
  const t = TARGETS[spec.target];
  const fit = Math.floor((t.sharedBytesPerUnit / 2 - t.sharedReservedPerBlock) / (xStageBytes + wStageBytes));
  const stages = Math.max(2, Math.min(WGMMA_MAX_STAGES, fit));
  return { ...common, stages, wStages: stages, ring: undefined };
}

/** LDS stages of a warpgroup-MMA spec (see {@link wgmmaLds}). */
export const wgmmaStages = (spec: Spec): number => wgmmaLds(spec).stages;

/**
 * Geometry of a warpgroup-MMA spec (kernel/wgmma.ts). The tile is m-blocks of 8x8 output pixels
 * (M = 64 per wgmma); `waves_m` warpgroups split tile_k, `waves_n` split the m-blocks; LDS as
 * {@link wgmmaLds}. No scratch tails: partial staging passes skip.
 */
function warpgroupGeometry(spec: Spec): SpecGeometry {
  const atom = ATOMS[spec.atom];
  const warpgroups = spec.waves_m * spec.waves_n;
  const threads = warpgroups * atom.waveSize;
  const flat = spec.whole_map ? wholeMapLayout(spec) : undefined;
  const mBlocks = spec.tile_n * (spec.tile_h / 8) * (spec.tile_w / 8);
  const lds = wgmmaLds(spec);
  const { ldsInH, ldsInW } = lds;
  const ldsRows = spec.tile_n * ldsInH;
  const rowsPerWave = (spec.tile_n * spec.tile_h) / spec.waves_n;
  const bandRows = Math.min(rowsPerWave, spec.tile_h);
  const xChannelVectors = spec.ck / X_VECTOR_ELEMS;
  const ldsXElems = lds.xStageBytes / ELEMENT_BYTES;
  const ldsWElems = lds.wStageBytes / ELEMENT_BYTES;
  const ldsBytes = lds.xStageBytes * lds.stages + lds.wStageBytes * lds.wStages + lds.alignSlack;
  const xVectors = (flat ? flat.staged : ldsRows * ldsInW) * xChannelVectors;
  const wSlots = ldsWElems / X_VECTOR_ELEMS;
  const mBlocksPerWave = mBlocks / spec.waves_n;
  // Whole-map tiles: each warpgroup computes all pixel columns for its 64-channel m-blocks.
  const accPerLane = flat ? (flat.mBlocksPerGroup * flat.pixels) / 2 : (mBlocksPerWave * (spec.tile_k / spec.waves_m)) / 2;
  return {
    atom,
    waveSize: atom.waveSize,
    threads,
    colBlocks: spec.tile_w / 8,
    mTiles: spec.tile_k / 8,
    kAtoms: spec.ck / atom.k,
    rowsPerWave,
    mTilesPerWave: spec.tile_k / 8 / spec.waves_m,
    nTilesPerWave: mBlocksPerWave,
    ldsInH,
    ldsInW,
    ldsRows,
    rowPixels: lds.planeColumns,
    bandRows,
    waveImages: Math.max(1, rowsPerWave / bandRows),
    cStride: X_VECTOR_ELEMS,
    ldsXElems,
    ldsWElems,
    ldsXTail: 0,
    ldsWTail: 0,
    ldsBytes,
    accPerLane,
    xChannelVectors,
    xVectors,
    xPasses: Math.ceil(xVectors / threads),
    wSlots,
    wPasses: Math.ceil(wSlots / threads),
  };
}

/**
 * The depthwise geometry (depthwise-geometry.ts) in SpecGeometry terms, for the host-side models
 * (residency, plans): one "atom row" per thread's channel pair, one "column block" and one band
 * of rows per thread, no weight fragments (the weights are staged once per tile).
 */
function depthwiseSpecGeometry(spec: Spec): SpecGeometry {
  const d = depthwiseGeometry(spec);
  return {
    atom: ATOMS.fma,
    waveSize: d.waveSize,
    threads: d.threads,
    colBlocks: d.columnGroups,
    mTiles: d.pairs,
    kAtoms: 1,
    rowsPerWave: d.rowsPerThread,
    mTilesPerWave: 1,
    nTilesPerWave: d.columnsPerThread,
    ldsInH: d.ldsInH,
    ldsInW: d.ldsInW,
    rowPixels: d.ldsInW,
    ldsRows: d.ldsInH,
    bandRows: d.rowsPerThread,
    waveImages: 1,
    cStride: d.pixelStride,
    ldsXElems: d.xBytes / ELEMENT_BYTES,
    ldsWElems: d.wElems,
    ldsXTail: 0,
    ldsWTail: 0,
    ldsBytes: d.ldsBytes,
    accPerLane: d.accPerLane,
    xChannelVectors: d.inVectors,
    xVectors: d.xVectors,
    xPasses: d.xPasses,
    wSlots: d.wElems,
    wPasses: d.wPasses,
  };
}
