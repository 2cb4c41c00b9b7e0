/**
 * The depthwise variant on the host side: which problems it serves, its spec rules (with reasons)
 * and its candidate grid. Depthwise convs (groups = C, K = M*C) do R*S multiply-adds per output
 * for about 2 (+2/M) bytes moved, so the kernel is built for bytes, not for MMA: see
 * kernel/depthwise.ts and the geometry in depthwise-geometry.ts.
 */
import { getTarget, TARGETS } from '@rocke/ir';
import { DEPTHWISE_PAIR, DEPTHWISE_VECTOR, depthwiseGeometry, depthwiseLdsPad } from './depthwise-geometry.js';
import { ELEMENT_BYTES, type Dtype, type Problem } from './problem.js';

/** The channel counts the grid fits its channel tile to. */
export interface DepthwiseChannels {
  readonly C: number;
  readonly K: number;
}
import { kernelName, type Spec } from './spec.js';
import { type TargetName } from './targets.js';

/** Channel multipliers K/C the kernel serves: its 8 output channels read 8/M input channels. */
export const DEPTHWISE_MULTIPLIERS = [1, 2, 4] as const;
/**
 * Most images per workgroup (tile_n): the workgroup computes its tile on tile_n images one after
 * another, staging the next image's halo into a second LDS buffer while it computes one, with the
 * weights staged and converted once. Its image loop is unrolled, so the code grows with tile_n.
 */
export const DEPTHWISE_MAX_IMAGES = 4;
/** Largest filter side: a thread holds its pair's R x S weights (2 f32 per tap) in registers. */
export const DEPTHWISE_MAX_FILTER = 7;

/** True when `p` is a depthwise conv the variant serves: groups = C > 1 and K/C in {@link DEPTHWISE_MULTIPLIERS}. */
export function isDepthwiseProblem(p: Problem): boolean {
  // Dilated and strides past 2: the grouped kernel serves them.
  const plain = p.dilationH === 1 && p.dilationW === 1 && p.strideH <= 2 && p.strideW <= 2;
  return plain && p.groups > 1 && p.groups === p.C && (DEPTHWISE_MULTIPLIERS as readonly number[]).includes(p.K / p.C);
}

/** Why a depthwise spec is invalid on its own, or null (the target-hint checks are validate()'s). */
export function depthwiseSpecReason(s: Spec): string | null {
  if (s.atom !== 'fma') return `the depthwise kernel uses no MMA: its atom is fma (got ${s.atom})`;
  for (const f of ['R', 'S', 'stride_h', 'stride_w', 'tile_h', 'tile_w', 'tile_k', 'ck', 'waves_m', 'waves_n', 'tile_n'] as const) {
    if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  }
  if (s.pad_h < 0 || s.pad_w < 0) return `padding must be >= 0 (got pad_h ${s.pad_h}, pad_w ${s.pad_w})`;
  if (s.stride_h > 2 || s.stride_w > 2) return `stride ${s.stride_h}x${s.stride_w} is not supported (each stride must be 1 or 2)`;
  if (s.R > DEPTHWISE_MAX_FILTER || s.S > DEPTHWISE_MAX_FILTER) return `filter ${s.R}x${s.S}: the depthwise kernel takes sides up to ${DEPTHWISE_MAX_FILTER}`;
  if (![2, 4, 8].includes(s.ck)) return `ck ${s.ck}: depthwise ck is 8 / channel multiplier (8, 4 or 2 for multipliers 1, 2, 4)`;
  if (s.tile_k % DEPTHWISE_VECTOR !== 0) return `tile_k ${s.tile_k} is not a multiple of ${DEPTHWISE_VECTOR} (whole 16-byte channel vectors)`;
  const m = DEPTHWISE_VECTOR / s.ck;
  if ((s.tile_k / m) % DEPTHWISE_VECTOR !== 0) return `tile_k ${s.tile_k} / multiplier ${m} = ${s.tile_k / m} input channels are not a multiple of ${DEPTHWISE_VECTOR} (16-byte staging)`;
  if (s.tile_w % s.waves_m !== 0) return `tile_w ${s.tile_w} is not a multiple of waves_m ${s.waves_m} (depthwise: output columns per thread)`;
  if (s.tile_h % s.waves_n !== 0) return `tile_h ${s.tile_h} is not a multiple of waves_n ${s.waves_n} (depthwise: output rows per thread)`;
  if (s.lds_pad < 0 || s.lds_pad % 8 !== 0) return `lds_pad ${s.lds_pad} must be a non-negative multiple of 8 (16-byte aligned LDS vectors)`;
  if (s.tile_n > DEPTHWISE_MAX_IMAGES) return `tile_n ${s.tile_n}: a depthwise workgroup takes up to ${DEPTHWISE_MAX_IMAGES} images (its image loop is unrolled)`;
  const unused: [string, boolean][] = [
    ['group_merge 1', s.group_merge === 1],
    ['dilation 1x1', s.dilation_h === 1 && s.dilation_w === 1],
    ['c_tail 0', s.c_tail === 0],
    ['k_tail false', !s.k_tail],
    ['double_buffer false (the tile is the whole reduction; image tiles, tile_n > 1, double-buffer the halo by themselves)', !s.double_buffer],
  ];
  for (const [want, ok] of unused) if (!ok) return `depthwise specs need ${want}`;
  for (const f of ['swizzle_wgm', 'chiplet_chunk', 'num_xcds'] as const) if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  const t = TARGETS[s.target];
  const g = depthwiseGeometry(s);
  if (g.threads > t.maxThreadsPerBlock) return `${g.threads} threads per workgroup (tile_k/2 x tile_h/waves_n x tile_w/waves_m) exceed ${t.maxThreadsPerBlock} on ${s.target}`;
  if (g.ldsBytes > t.ldsBytes) return `LDS ${g.ldsBytes} bytes exceed the ${t.ldsBytes}-byte limit of ${s.target}`;
  return null;
}

/** Why a depthwise spec cannot serve problem `p` (its filter, stride, padding and dtype already match), or null. */
export function depthwiseProblemReason(s: Spec, p: Problem): string | null {
  if (p.groups !== p.C) return `the depthwise variant needs groups == C (got groups ${p.groups}, C ${p.C})`;
  const m = DEPTHWISE_VECTOR / s.ck;
  if (p.K !== m * p.C) return `channel multiplier K/C = ${p.K}/${p.C} does not match the spec's ${m} (ck ${s.ck} = 8 / multiplier)`;
  return null;
}

/** Threads per workgroup the grid keeps (whole waves): 64 to 256, so that with the register cap below two or more workgroups fit a CU / SM. */
export const DEPTHWISE_THREADS = { min: 64, max: 256 } as const;
/** Thread counts at or below this form the grid's small-workgroup choice (more, smaller workgroups fill a small grid). */
export const DEPTHWISE_SMALL_THREADS = 128;

/**
 * Output blocks per thread offered, rows x columns: the larger the block, the more taps each
 * staged input pixel serves (fewer LDS reads and conversions per FMA) and the fewer threads the
 * grid has; the bench's timing picks between them.
 */
export const DEPTHWISE_BLOCKS: readonly (readonly [rows: number, cols: number])[] = [
  [1, 2],
  [2, 2],
  [2, 4],
];

/** Most output columns of a whole-row block (its window row and accumulators stay in registers). */
export const DEPTHWISE_MAX_ROW_COLUMNS = 8;

/**
 * The blocks offered on a map `wo` columns wide: {@link DEPTHWISE_BLOCKS}, plus row blocks of 1 and 2
 * rows whose columns split the output row into equal parts of at most
 * {@link DEPTHWISE_MAX_ROW_COLUMNS} when the widest fixed block does not divide the row. On a small
 * odd map (7 wide) the fixed blocks either pad every row (a 4-column block computes 8) or stage the
 * row's halo twice (two tiles of 4); a row block computes exactly the row, and with the tile then
 * spanning whole rows, the channels are the workgroup's parallel axis.
 */
export function depthwiseBlocks(wo: number | null): (readonly [rows: number, cols: number])[] {
  const blocks = [...DEPTHWISE_BLOCKS];
  if (wo === null) return blocks;
  const widest = Math.max(...DEPTHWISE_BLOCKS.map(([, c]) => c));
  const cols = Math.ceil(wo / Math.ceil(wo / DEPTHWISE_MAX_ROW_COLUMNS));
  if (wo % widest !== 0 && wo % cols === 0 && !DEPTHWISE_BLOCKS.some(([, c]) => c === cols)) blocks.push([1, cols], [2, cols]);
  return blocks;
}

/** Output extent the grid assumes when the problem's is unknown (the shape-independent grid): large enough not to bound a tile. */
const UNBOUNDED_EXTENT = 64;

/** Widest channel tile: 64 channel pairs, so a 256-thread workgroup still spreads over 4 pixel groups. */
export const DEPTHWISE_MAX_TILE_K = 128;
/** Widest channel tile offered when K is unknown (a wider one pays off only where K fills it). */
const SHAPELESS_MAX_TILE_K = 64;

/**
 * Output channels per tile offered for multiplier `m`: one width per octave (tops 16, 32, 64,
 * 128), each a multiple of 8*M (whole 16-byte vectors of staged input channels). Given K, an
 * octave offers its width that pads K least (ceil(K / w) * w; ties: the widest, fewest tiles),
 * and the octaves stop at the first width that holds all of K in one tile: K 72 gets 16, 24, 40
 * and 72 (whole pixels), K 120 gets 16, 24, 40, 120, K 192 gets 16, 32, 64, 96, K 16 only 16.
 * Without K: the octave tops up to {@link SHAPELESS_MAX_TILE_K}.
 */
export function depthwiseTileKs(m: number, k: number | null = null): number[] {
  const unit = DEPTHWISE_VECTOR * m;
  const padded = (w: number) => Math.ceil(k! / w) * w;
  const out: number[] = [];
  for (let top = 16; top <= (k === null ? SHAPELESS_MAX_TILE_K : DEPTHWISE_MAX_TILE_K); top *= 2) {
    // Widest first, so that a tie keeps the widest.
    const widths: number[] = [];
    for (let w = top - (top % unit); w > top / 2; w -= unit) widths.push(w);
    if (widths.length === 0) continue;
    out.push(k === null ? widths[0]! : widths.reduce((a, w) => (padded(w) < padded(a) ? w : a)));
    if (k !== null && out.at(-1)! >= k) break;
  }
  return out;
}

/**
 * FP32 FMA issue slots one staged byte costs: a CU / SM issues 128 FP32 FMAs per clock (sm_90's
 * CUDA cores; gfx942 / gfx950 with packed FMAs) while its share of L2 bandwidth is a few tens of
 * bytes per clock, on all three targets. Halo bytes come from L2 (their first read from HBM), so
 * a tile that stages 2x its output's input pixels pays for the second copy in issue time.
 */
export const DEPTHWISE_FMAS_PER_STAGED_BYTE = 4;

/**
 * The cost of a spec on an Ho x Wo map of K output channels (per output channel when K is
 * unknown), per image, in FP32 issue slots, from the kernel's structure: per thread, 2 FMAs per
 * tap of every output of its block (whole tiles: spatial and channel padding included), an LDS
 * read and conversions per window pixel and per tap's weights, over whole waves; per workgroup,
 * its staged halo bytes weighted by {@link DEPTHWISE_FMAS_PER_STAGED_BYTE}. Orders the tile
 * layouts of one output block (an image tile's per-image cost is its one-image tile's).
 */
export function depthwiseIssueCost(s: Spec, ho: number, wo: number, k: number | null): number {
  const g = depthwiseGeometry(s);
  const taps = s.R * s.S;
  const perThread = DEPTHWISE_PAIR * g.rowsPerThread * g.columnsPerThread * taps + g.rowsRead * g.columnsRead * (1 + g.pairInChannels) + taps * (1 + DEPTHWISE_PAIR);
  const staged = g.ldsInH * g.ldsInW * g.inChannels * ELEMENT_BYTES;
  // A partial last wave issues as a whole one.
  const lanes = Math.ceil(g.threads / g.waveSize) * g.waveSize;
  const perTile = lanes * perThread + staged * DEPTHWISE_FMAS_PER_STAGED_BYTE;
  const spatial = Math.ceil(ho / s.tile_h) * Math.ceil(wo / s.tile_w);
  return spatial * perTile * (k === null ? 1 / s.tile_k : Math.ceil(k / s.tile_k));
}

/** Knobs of {@link depthwiseGrid}. */
export interface DepthwiseGridOptions {
  readonly dtype: Dtype;
  readonly capability: { R: number; S: number; stride_h: number; stride_w: number; pad_h: number; pad_w: number; dilation_h: number; dilation_w: number };
  readonly wo?: number | null;
  readonly ho?: number | null;
  /** The problem's channels: the cost counts K's channel tiles, and only its multiplier is offered. */
  readonly channels?: DepthwiseChannels;
  /** Multipliers to offer (default: the problem's, else all of {@link DEPTHWISE_MULTIPLIERS}). */
  readonly multipliers?: readonly number[];
  /** The problem's batch N: from 2 up, image tiles are offered too (see {@link depthwiseGrid}). */
  readonly images?: number | null;
}

/** Image-tile variants per multiplier: of this many of the cheapest tiles. */
export const DEPTHWISE_IMAGE_TILED = 2;
/** Images per image tile: two, each staged while the other is computed (a pair halves the grid, so small grids keep their fill). */
export const DEPTHWISE_TILE_IMAGES = 2;

/** Most specs the grid offers per multiplier (so per problem): the bench times every one. */
export const DEPTHWISE_MAX_SPECS = 10;

/**
 * The depthwise grid for one problem (or capability), per multiplier:
 * - per output block ({@link depthwiseBlocks} of the map's width), two tiles (channel tile x
 *   thread layout over the spatial tile): the one of least {@link depthwiseIssueCost} on the map
 *   among workgroups of {@link DEPTHWISE_THREADS}, and the same among workgroups of at most
 *   {@link DEPTHWISE_SMALL_THREADS} (more, smaller workgroups for small grids);
 * - per channel-tile width ({@link depthwiseTileKs}), the cheapest tile of that width over all
 *   blocks: the issue cost does not see that a wider channel tile stages whole cache lines per
 *   pixel, so each width gets timed;
 * - on a batch (N >= 2) on a target with async copies (sm_90's cp.async), image tiles of the
 *   {@link DEPTHWISE_IMAGE_TILED} cheapest of those: {@link DEPTHWISE_TILE_IMAGES} images per
 *   workgroup, the next image's halo copied into a second LDS buffer while one is computed, so a
 *   workgroup keeps loads in flight through its tap loop (one-image workgroups wait for their whole
 *   halo, then only compute) and decodes its tile and stages its weights once; without async
 *   copies the staging goes through registers and would not overlap;
 * - at most {@link DEPTHWISE_MAX_SPECS}: every width's pick and the image tiles, then the block
 *   picks cheapest first.
 * A tile spans at most the whole map (its last block row or column may overhang it; the cost pays
 * for the overhang); a workgroup's last wave may be partial (the cost counts it whole); its staged
 * tile leaves room for two per CU / SM, its live registers stay within
 * {@link depthwiseRegisterBudget}; the LDS pad is the one that avoids bank conflicts on the reads.
 * The timing decides among them.
 */
export function depthwiseGrid(target: TargetName, o: DepthwiseGridOptions): Spec[] {
  const ho = o.ho ?? UNBOUNDED_EXTENT;
  const wo = o.wo ?? UNBOUNDED_EXTENT;
  const problemM = o.channels ? o.channels.K / o.channels.C : undefined;
  const multipliers = o.multipliers ?? (problemM !== undefined && (DEPTHWISE_MULTIPLIERS as readonly number[]).includes(problemM) ? [problemM] : DEPTHWISE_MULTIPLIERS);
  const cost = (s: Spec) => depthwiseIssueCost(s, ho, wo, o.channels?.K ?? null);
  // The cost does not depend on lds_pad: rank first, then derive the pad (a bank simulation per
  // candidate pad) and check the LDS budget only down the ranking, until a tile fits.
  const best = (ranked: readonly Spec[]) => {
    for (const s of ranked) {
      const padded = withLdsPad(target, s);
      if (padded) return padded;
    }
    return undefined;
  };
  const byCost = (tiles: readonly Spec[]) => {
    const costs = new Map(tiles.map((s) => [s, cost(s)]));
    return [...tiles].sort((a, b) => costs.get(a)! - costs.get(b)!);
  };
  return multipliers.flatMap((m) => {
    const blockPicks: Spec[] = [];
    const all: Spec[] = [];
    for (const [rows, cols] of depthwiseBlocks(o.wo ?? null)) {
      const tiles = depthwiseTiles(target, o.dtype, o.capability, { m, rows, cols, ho, wo, k: o.channels?.K ?? null });
      all.push(...tiles);
      const ranked = byCost(tiles);
      for (const s of [best(ranked), best(ranked.filter((s) => depthwiseGeometry(s).threads <= DEPTHWISE_SMALL_THREADS))]) if (s) blockPicks.push(s);
    }
    const rankedAll = byCost(all);
    const widthPicks = depthwiseTileKs(m, o.channels?.K ?? null).flatMap((k) => best(rankedAll.filter((s) => s.tile_k === k)) ?? []);
    const picks = uniqueByName([...blockPicks, ...widthPicks]);
    const overlaps = getTarget(target).asyncCopy !== undefined && (o.images ?? 1) >= 2;
    const imagePicks = overlaps ? byCost(picks).flatMap((s) => imageTile(target, s) ?? []).slice(0, DEPTHWISE_IMAGE_TILED) : [];
    return capped([...picks, ...imagePicks], new Set([...widthPicks, ...imagePicks].map(kernelName)), cost);
  });
}

function uniqueByName(specs: readonly Spec[]): Spec[] {
  const seen = new Set<string>();
  return specs.filter((s) => {
    const key = kernelName(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `specs` in their order, without the costliest ones not in `kept` beyond {@link DEPTHWISE_MAX_SPECS}. */
function capped(specs: readonly Spec[], kept: ReadonlySet<string>, cost: (s: Spec) => number): Spec[] {
  const excess = specs.length - DEPTHWISE_MAX_SPECS;
  if (excess <= 0) return [...specs];
  const dropped = new Set(
    specs
      .filter((s) => !kept.has(kernelName(s)))
      .sort((a, b) => cost(b) - cost(a))
      .slice(0, excess),
  );
  return specs.filter((s) => !dropped.has(s));
}

/** `s` over {@link DEPTHWISE_TILE_IMAGES} images, or undefined when its two halo buffers or its registers leave fewer than two workgroups per CU / SM. */
function imageTile(target: TargetName, s: Spec): Spec | undefined {
  const tiled = { ...s, tile_n: DEPTHWISE_TILE_IMAGES };
  const g = depthwiseGeometry(tiled);
  const t = TARGETS[target];
  if (g.ldsBytes + t.sharedReservedPerBlock > t.sharedBytesPerUnit / 2) return undefined;
  return g.liveRegisters > depthwiseRegisterBudget(target, g.threads) ? undefined : tiled;
}

/** `s` with its derived LDS pad, or undefined when its staged tile leaves no room for two workgroups per CU / SM. */
function withLdsPad(target: TargetName, s: Spec): Spec | undefined {
  const t = TARGETS[target];
  const lds_pad = depthwiseLdsPad(s);
  const g = depthwiseGeometry({ ...s, lds_pad });
  return g.ldsBytes + t.sharedReservedPerBlock > t.sharedBytesPerUnit / 2 ? undefined : { ...s, lds_pad };
}

/** Every tile of one multiplier and output block within the thread and register limits: channel tiles x thread layouts (th x tw threads) within the map, lds_pad 0 (see {@link withLdsPad}). */
function depthwiseTiles(target: TargetName, dtype: Dtype, cap: DepthwiseGridOptions['capability'], b: { m: number; rows: number; cols: number; ho: number; wo: number; k: number | null }): Spec[] {
  const out: Spec[] = [];
  for (const tile_k of depthwiseTileKs(b.m, b.k))
    // Up to one tile over the whole map: its last block row (column) may overhang the map.
    for (let th = 1; th <= Math.ceil(b.ho / b.rows) && th <= 32; th++)
      for (let tw = 1; tw <= Math.ceil(b.wo / b.cols) && tw <= 32; tw++) {
        const fields = { target, R: cap.R, S: cap.S, stride_h: cap.stride_h, stride_w: cap.stride_w, tile_h: th * b.rows, tile_w: tw * b.cols, tile_k, ck: DEPTHWISE_VECTOR / b.m, waves_m: b.cols, waves_n: b.rows, tile_n: 1 };
        const threads = (tile_k / DEPTHWISE_PAIR) * th * tw;
        if (threads < DEPTHWISE_THREADS.min || threads > DEPTHWISE_THREADS.max) continue;
        // Registers do not depend on the pad.
        const g = depthwiseGeometry({ ...fields, lds_pad: 0 });
        if (g.liveRegisters > depthwiseRegisterBudget(target, g.threads)) continue;
        out.push(depthwiseSpecOf(target, dtype, cap, { ...fields, lds_pad: 0 }));
      }
  return out;
}

/** A depthwise spec of the given tile fields: the knobs the kernel does not read at their neutral values. */
function depthwiseSpecOf(target: TargetName, dtype: Dtype, cap: DepthwiseGridOptions['capability'], fields: Pick<Spec, 'R' | 'S' | 'stride_h' | 'stride_w' | 'tile_h' | 'tile_w' | 'tile_k' | 'ck' | 'waves_m' | 'waves_n' | 'lds_pad' | 'tile_n'>): Spec {
  const t = TARGETS[target];
  return {
    variant: 'depthwise',
    target,
    dtype,
    ...cap,
    ...fields,
    atom: 'fma',
    double_buffer: false,
    chiplet_swizzle: t.vendor === 'amd',
    chiplet_chunk: 64,
    num_xcds: t.chiplets,
    swizzle_wgm: 8,
    iglp: null,
    waves_per_eu: null,
    group_merge: 1,
    c_tail: 0,
    k_tail: false,
  };
}

/** Threads of one kernel a CU / SM should hold at least (8 warps, 4 wave64 waves) to keep loads in flight. */
export const DEPTHWISE_MIN_RESIDENT_THREADS = 256;

/**
 * Registers per thread a depthwise workgroup of `threads` may estimate: few enough that a CU / SM
 * holds two such workgroups and at least {@link DEPTHWISE_MIN_RESIDENT_THREADS} threads (the
 * spill heuristic, `spillFilter`, still drops estimates near the per-thread maximum).
 */
export function depthwiseRegisterBudget(target: TargetName, threads: number): number {
  const t = TARGETS[target];
  if (t.registers.kind === 'file') {
    return Math.min(t.registers.maxPerThread, t.registers.perUnit / Math.max(DEPTHWISE_MIN_RESIDENT_THREADS, 2 * threads));
  }
  // AMD: a workgroup's waves spread over the SIMDs; two workgroups share each SIMD's file.
  const wavesPerSimd = Math.ceil(threads / t.waveSize / t.registers.simdsPerUnit);
  return t.registers.perLane / (2 * wavesPerSimd);
}

/** The probe problem a shape-independent depthwise spec is validated on: N1 64x64, C = groups = 256, K = M*C. */
export function depthwiseProbe(s: Spec, channels: number): Problem {
  const m = DEPTHWISE_VECTOR / s.ck;
  return { N: 1, H: 64, W: 64, C: channels, K: m * channels, R: s.R, S: s.S, strideH: s.stride_h, strideW: s.stride_w, padH: s.pad_h, padW: s.pad_w, dilationH: 1, dilationW: 1, groups: channels, dtype: s.dtype };
}


/**
 * Output input pixels over staged halo pixels of one tile (at most 1): the share of the staged
 * bytes that a tile with no halo would stage. Ranks depthwise tiles that tie on padding waste and
 * grid fill, since the kernel's cost is its bytes.
 */
export function depthwiseStagingEfficiency(s: Spec): number {
  const g = depthwiseGeometry(s);
  return (s.tile_h * s.stride_h * s.tile_w * s.stride_w) / (g.ldsInH * g.ldsInW);
}
