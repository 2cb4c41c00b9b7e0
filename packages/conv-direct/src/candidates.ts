/**
 * Candidate tuning grids per target, filtered by
 * validation and de-duplicated by kernel name.
 */
import { TARGETS } from '@rocke/ir';
import { depthwiseGrid, depthwiseProbe, isDepthwiseProblem } from './depthwise.js';
import { isPointwiseProblem, pointwiseTiles, streamTilesPerWorkgroup } from './pointwise.js';
import { checkProblem, ELEMENT_BYTES, problemGeometry, type Dtype, type Problem } from './problem.js';
import { residency } from './residency.js';
import { weightPieceElems } from './kernel/schedule.js';
import { keptFacts, kernelName, specGeometry, WEIGHT_RING_MIN_STAGES, wgmmaLds, type Spec, type Variant } from './spec.js';
import { ATOMS, CONV_ATOMS, MAX_TENSOR_BYTES, WGMMA_MAX_N, isWarpgroupAtom, type AtomName, type TargetName } from './targets.js';
import { builtLaunchReason, builtSpecReason, checkedProblem, frozenProblem, frozenSpec, markChecked, validate, WGMMA_BOOKKEEPING_REGISTERS } from './validate.js';
import { SPILL_BUDGET_FRACTION } from './spill.js';
import { wholeMapImages } from './whole-map.js';

/** The baked filter/stride/padding/dilation a binary serves. */
export interface Capability {
  readonly R: number;
  readonly S: number;
  readonly stride_h: number;
  readonly stride_w: number;
  readonly pad_h: number;
  readonly pad_w: number;
  readonly dilation_h: number;
  readonly dilation_w: number;
}

/** The shape-independent (AOT) capability rows: 3x3 "same" padding at stride 1 and 2. */
export const AOT_CAPABILITIES: readonly Capability[] = [
  { R: 3, S: 3, stride_h: 1, stride_w: 1, pad_h: 1, pad_w: 1, dilation_h: 1, dilation_w: 1 },
  { R: 3, S: 3, stride_h: 2, stride_w: 2, pad_h: 1, pad_w: 1, dilation_h: 1, dilation_w: 1 },
];

/** The pointwise variant's AOT rows: unpadded 1x1 at stride 1 and 2 (3x3 rows have no pointwise spec). */
export const POINTWISE_AOT_CAPABILITIES: readonly Capability[] = [
  { R: 1, S: 1, stride_h: 1, stride_w: 1, pad_h: 0, pad_w: 0, dilation_h: 1, dilation_w: 1 },
  { R: 1, S: 1, stride_h: 2, stride_w: 2, pad_h: 0, pad_w: 0, dilation_h: 1, dilation_w: 1 },
];

export const TILE_H_CHOICES = [8, 16] as const;
export const TILE_K_CHOICES = [32, 64, 128, 256] as const;
/** The grouped grid also offers tile_k 16 (16-row atoms), so cpg/kpg = 16 groups run unmerged. */
export const GROUPED_TILE_K_CHOICES = [16, 32, 64, 128, 256] as const;
export const CK_CHOICES = [16, 32, 64] as const;
/** (waves_m, waves_n) layouts. */
export const WAVE_LAYOUTS: readonly (readonly [number, number])[] = [
  [2, 2],
  [1, 4],
  [2, 4],
  [4, 2],
  [1, 8],
];
/**
 * The sm_90a warpgroup-MMA grid: m-blocks of 8x8 pixels (tiles 8, 16 or 32 each way), 64..256
 * output channels per tile, chunks of 16, 32 or 64 channels (64: 128B-swizzled rows), and warpgroup layouts (waves_m along
 * tile_k, waves_n along the m-blocks) of 1 to 8 warpgroups. On the H200 no tile shape wins
 * everywhere (occupancy and tile size trade off), so the bench times a spread of them.
 */
export const WGMMA_TILE_CHOICES = [8, 16, 32] as const;
export const WGMMA_TILE_K_CHOICES = [64, 128, 256] as const;
export const WGMMA_CK_CHOICES = [16, 32, 64] as const;
export const WGMMA_LAYOUTS: readonly (readonly [number, number])[] = [
  [1, 1],
  [1, 2],
  [2, 1],
  [2, 2],
  [1, 4],
  [2, 4],
  [1, 8],
];
/** Largest tile width, in width units, the grid offers. */
export const MAX_WIDTH_MULTIPLE = 6;
/** Merge degrees the grouped grid offers (powers of two, as upstream's group-merge gate). */
export const GROUP_MERGE_CHOICES = [1, 2, 4, 8, 16, 32, 64] as const;
/** LDS pad tuned upstream (pads 4 and 16 conflict). */
export const DEFAULT_LDS_PAD = 8;
export const DEFAULT_SWIZZLE_WGM = 8;
export const DEFAULT_CHIPLET_CHUNK = 64;
/**
 * Images per tile {@link problemCandidates} adds (dense and split_c, N > 1, maps that fit one
 * tile): on small maps each workgroup then reads every weight chunk once per tile_n images.
 */
export const TILE_N_CHOICES = [2, 4] as const;

/**
 * Tile-width unit for an atom: its N on AMD; 16 on sm_90, where one `ldmatrix.x4` loads the B
 * fragments of two n8 atoms.
 */
export function widthUnit(atom: AtomName): number {
  return Math.max(ATOMS[atom].n, 16);
}

/**
 * Tile widths for an output width: the multiples `unit*m` (m = 1..maxMult) that divide `wo`
 * exactly; when none does, the single width with the least padded total ceil(wo/w)*w (ties to the
 * smaller width), so no binary does MMA work past the image edge when a better fit exists.
 */
export function tileWidthCandidates(wo: number, unit: number, maxMult = MAX_WIDTH_MULTIPLE): number[] {
  const widths = Array.from({ length: maxMult }, (_, i) => unit * (i + 1));
  const exact = widths.filter((w) => wo % w === 0);
  if (exact.length > 0) return exact;
  let best = widths[0] ?? unit;
  for (const w of widths) {
    if (Math.ceil(wo / w) * w < Math.ceil(wo / best) * best) best = w;
  }
  return [best];
}

/**
 * Tile widths fitted to an output width. sm_90's width unit (16) pads small or odd maps heavily
 * (Wo 7 or 8 computes 16 columns); when no multiple of the unit divides Wo, the atom's own width
 * (8 on sm_90) is offered as well if it pads strictly less (one column block per tile, loaded with
 * ldmatrix.x2).
 */
export function fittedWidths(wo: number, atom: AtomName): number[] {
  const unit = widthUnit(atom);
  const widths = tileWidthCandidates(wo, unit);
  const n = ATOMS[atom].n;
  if (n >= unit || widths.some((w) => wo % w === 0)) return widths;
  const padded = (w: number) => Math.ceil(wo / w) * w;
  const finer = tileWidthCandidates(wo, n).filter((w) => w % unit !== 0 && padded(w) < Math.min(...widths.map(padded)));
  return [...widths, ...finer];
}

/**
 * Tile heights fitted to an output height: {@link TILE_H_CHOICES}, plus — when neither divides Ho —
 * the largest even height up to 16 that pads strictly less (Ho 14 or 28: 14 rows instead of 16,
 * 12.5% less MMA work and halo). Even, so two waves can split it.
 */
export function fittedHeights(ho: number): number[] {
  const base: number[] = [...TILE_H_CHOICES];
  if (base.some((h) => ho % h === 0)) return base;
  const padded = (h: number) => Math.ceil(ho / h) * h;
  const best = Math.min(...base.map(padded));
  let fit: number | undefined;
  for (let h = 2; h <= 16; h += 2) if (padded(h) < best && (fit === undefined || padded(h) <= padded(fit))) fit = h;
  return fit === undefined ? base : [...base, fit];
}

/** Knobs of a candidate grid. */
export interface GridOptions {
  variant: Variant;
  dtype: Dtype;
  capability: Capability;
  /** Output width to fit tile widths to; null for the shape-independent grid (every multiple). */
  wo?: number | null;
  /** Output height to fit tile heights to ({@link fittedHeights}, not the warpgroup atom's); null: {@link TILE_H_CHOICES}. */
  ho?: number | null;
  /** Default: [0] on AMD, [null] on sm_90. */
  iglp?: readonly (number | null)[];
  /** Default: [null, 3] on AMD, [null] on sm_90. */
  wavesPerEu?: readonly (number | null)[];
  /** Default: [8]. */
  swizzleWgm?: readonly number[];
  /** Grouped only. Default: {@link GROUP_MERGE_CHOICES}. */
  groupMerges?: readonly number[];
  /**
   * Two LDS stages or one. Default: [false] on AMD (upstream: double buffering halves the resident
   * workgroups and loses), [true] on sm_90 (cp.async fills one stage while the other is multiplied).
   */
  doubleBuffer?: readonly boolean[];
  /**
   * The problem's channel counts, for a problem's grid: merge degrees that divide its groups
   * ({@link groupMergeChoices}), ck 8 for channel counts below the smallest ck, and — with
   * `tails` — the channel tails each spec needs ({@link channelTails}). Absent (the AOT grid): none.
   */
  channels?: ProblemChannels;
  /** With `channels`: give specs the tails the problem needs (default: no tails). */
  tails?: boolean;
  /** The problem's batch N (depthwise: image tiles from 2 up). Absent (the AOT grid): one-image tiles only. */
  images?: number | null;
  /**
   * The compact grid {@link problemCandidates} falls back to when the regular one has no valid
   * spec (halos too large for the target's LDS: big filters or strides): every tile width up to
   * the largest, tile heights down to {@link COMPACT_TILE_H_CHOICES}, and LDS pad 0 as well.
   */
  compact?: boolean;
}

/** Extra tile heights of the compact grid (see {@link GridOptions.compact}). */
export const COMPACT_TILE_H_CHOICES = [2, 4] as const;

/** Channel counts of a problem, as the candidate grid needs them. */
export interface ProblemChannels {
  readonly C: number;
  readonly K: number;
  readonly groups: number;
}

/** Longest channel run (8, 4, 2 or 1 elements) that tiles `channels` exactly: the staging load width of a tail. */
export function channelRun(channels: number): number {
  return [8, 4, 2].find((r) => channels % r === 0) ?? 1;
}

/**
 * The tails a spec of chunk `ck` and merge degree `groupMerge` needs on a problem: c_tail 0 when
 * the reduced channels (C; grouped: groupMerge * cpg) are a multiple of ck, else the channel run of
 * C (grouped: of cpg, so runs never straddle groups); k_tail when K (grouped: each merged block's
 * groupMerge * kpg channels) is not a multiple of 8, the output vector.
 */
export function channelTails(ch: ProblemChannels, variant: Variant, ck: number, groupMerge: number): { c_tail: number; k_tail: boolean } {
  const grouped = variant === 'grouped';
  const cpg = ch.C / ch.groups;
  const reduced = grouped ? groupMerge * cpg : ch.C;
  const produced = grouped ? (groupMerge * ch.K) / ch.groups : ch.K;
  return { c_tail: reduced % ck === 0 ? 0 : channelRun(grouped ? cpg : ch.C), k_tail: produced % 8 !== 0 };
}

/**
 * Merge degrees for a grouped problem: each of {@link GROUP_MERGE_CHOICES} that divides `groups`,
 * and for each that does not, the smallest divisor of `groups` above it (groups 120: 20, 40, 120
 * for 16, 32, 64), so every group count gets merges of every size class whatever its factors.
 */
export function groupMergeChoices(groups: number): number[] {
  const out = new Set<number>();
  for (const m of GROUP_MERGE_CHOICES) {
    let d = m;
    while (d <= groups && groups % d !== 0) d++;
    if (d <= groups) out.add(d);
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * The raw grid: every knob combination, in a fixed order, before validation. Per capability and
 * AMD target: 2 atoms x 6 widths x 2 tile_h x 4 tile_k x 3 ck x 5 wave layouts x 2 waves_per_eu
 * (grouped: x 5 tile_k and x merge degrees instead).
 */
export function candidateGrid(target: TargetName, opts: GridOptions): Spec[] {
  if (opts.variant === 'depthwise') return depthwiseGrid(target, opts);
  if (opts.variant === 'pointwise') return pointwiseGrid(gridKnobs(target, opts));
  return expandGrid(gridKnobs(target, opts));
}

/** One atom's share of a grid: the tile, chunk, layout and pad values it is crossed with. */
interface AtomKnobs {
  readonly atom: AtomName;
  readonly widths: readonly number[];
  readonly heights: readonly number[];
  readonly tileKs: readonly number[];
  readonly cks: readonly number[];
  readonly layouts: readonly (readonly [number, number])[];
  readonly pads: readonly number[];
}

/**
 * Everything a dense, split_c, grouped or pointwise grid crosses, derived from the target and the
 * options: two option sets with equal knobs give equal grids, so the knobs are the key
 * {@link GridMemo} shares grids by (problems of different shapes often have equal ones).
 */
interface GridKnobs {
  readonly variant: Variant;
  readonly target: TargetName;
  readonly dtype: Dtype;
  readonly capability: Capability;
  readonly merges: readonly number[];
  /** The target's atoms the variant uses, each with its values. */
  readonly atoms: readonly AtomKnobs[];
  readonly iglps: readonly (number | null)[];
  readonly wes: readonly (number | null)[];
  readonly wgms: readonly number[];
  readonly dbs: readonly boolean[];
  /** Per `ck/group_merge`, the channel tails of {@link channelTails} (with `tails`), else empty: no tails. */
  readonly tails: Readonly<Record<string, { c_tail: number; k_tail: boolean }>>;
}

/** The knobs of `opts` (pointwise: those of the dense compact grid its tiles are taken from). */
function gridKnobs(target: TargetName, given: GridOptions): GridKnobs {
  // Flat pixel runs: the dense grid's tiles unfitted to any map (see pointwiseTiles), with the
  // compact grid's heights (32- and 64-pixel tiles of the per-wave atoms fill the machine on
  // small pixel counts and cost no halo here).
  const opts: GridOptions = given.variant === 'pointwise' ? { ...given, wo: null, ho: null, compact: true } : given;
  const amd = TARGETS[target].vendor === 'amd';
  const grouped = opts.variant === 'grouped';
  const merges = grouped ? (opts.groupMerges ?? (opts.channels ? groupMergeChoices(opts.channels.groups) : GROUP_MERGE_CHOICES)) : [1];
  const channels = opts.channels;
  // Channel counts below the smallest ck: chunks of 8 too (atoms with K 8 then waste no MMA work).
  const smallC = channels !== undefined && (grouped ? channels.C / channels.groups : channels.C) < Math.min(...CK_CHOICES);
  const cks = smallC ? [8, ...CK_CHOICES] : [...CK_CHOICES];
  const fitted = opts.ho === undefined || opts.ho === null ? [...TILE_H_CHOICES] : fittedHeights(opts.ho);
  const heights = opts.compact ? [...COMPACT_TILE_H_CHOICES, ...fitted] : fitted;
  const atoms: AtomKnobs[] = [];
  for (const atom of CONV_ATOMS[target]) {
    // The warpgroup kernel has no grouped form; its tiles and layouts are its own (see above).
    if (isWarpgroupAtom(atom)) {
      if (!grouped) atoms.push({ atom, widths: WGMMA_TILE_CHOICES, heights: WGMMA_TILE_CHOICES, tileKs: WGMMA_TILE_K_CHOICES, cks: WGMMA_CK_CHOICES, layouts: WGMMA_LAYOUTS, pads: [0] });
      continue;
    }
    const unit = widthUnit(atom);
    const widths = opts.wo === undefined || opts.wo === null || opts.compact ? Array.from({ length: MAX_WIDTH_MULTIPLE }, (_, i) => unit * (i + 1)) : fittedWidths(opts.wo, atom);
    // Pointwise tiles take the one LDS pad (pointwiseTiles).
    const pads = opts.compact && given.variant !== 'pointwise' ? [DEFAULT_LDS_PAD, 0] : [DEFAULT_LDS_PAD];
    atoms.push({ atom, widths, heights, tileKs: grouped ? GROUPED_TILE_K_CHOICES : TILE_K_CHOICES, cks, layouts: WAVE_LAYOUTS, pads });
  }
  const tails: Record<string, { c_tail: number; k_tail: boolean }> = {};
  if (channels && opts.tails) {
    for (const gm of merges) for (const a of atoms) for (const ck of a.cks) tails[`${ck}/${gm}`] = channelTails(channels, opts.variant, ck, gm);
  }
  return {
    variant: opts.variant,
    target,
    dtype: opts.dtype,
    capability: opts.capability,
    merges,
    atoms,
    iglps: opts.iglp ?? (amd ? [0] : [null]),
    wes: opts.wavesPerEu ?? (amd ? [null, 3] : [null]),
    wgms: opts.swizzleWgm ?? [DEFAULT_SWIZZLE_WGM],
    dbs: opts.doubleBuffer ?? [!amd],
    tails,
  };
}

/** The pointwise grid: the dense compact grid's flat pixel runs ({@link pointwiseTiles}). */
function pointwiseGrid(knobs: GridKnobs): Spec[] {
  return pointwiseTiles(expandGrid(knobs), (s) => widthUnit(s.atom));
}

/** Every combination of `k`, in a fixed order. */
function expandGrid(k: GridKnobs): Spec[] {
  const facts = TARGETS[k.target];
  const amd = facts.vendor === 'amd';
  const cap = k.capability;
  const none = { c_tail: 0, k_tail: false };
  const specs: Spec[] = [];
  for (const gm of k.merges)
    for (const a of k.atoms)
      for (const tile_w of a.widths)
        for (const tile_h of a.heights)
          for (const tile_k of a.tileKs)
            for (const ck of a.cks)
              for (const [waves_m, waves_n] of a.layouts)
                for (const iglp of k.iglps)
                  for (const waves_per_eu of k.wes)
                    for (const swizzle_wgm of k.wgms)
                      for (const double_buffer of k.dbs)
                        for (const lds_pad of a.pads) {
                          specs.push({
                            variant: k.variant,
                            target: k.target,
                            dtype: k.dtype,
                            R: cap.R,
                            S: cap.S,
                            stride_h: cap.stride_h,
                            stride_w: cap.stride_w,
                            pad_h: cap.pad_h,
                            pad_w: cap.pad_w,
                            dilation_h: cap.dilation_h,
                            dilation_w: cap.dilation_w,
                            tile_h,
                            tile_w,
                            tile_k,
                            ck,
                            waves_m,
                            waves_n,
                            atom: a.atom,
                            lds_pad,
                            double_buffer,
                            chiplet_swizzle: amd,
                            chiplet_chunk: DEFAULT_CHIPLET_CHUNK,
                            num_xcds: facts.chiplets,
                            swizzle_wgm,
                            iglp,
                            waves_per_eu,
                            group_merge: gm,
                            tile_n: 1,
                            ...(k.tails[`${ck}/${gm}`] ?? none),
                          });
                        }
  return specs;
}

/**
 * Raw grids kept for the problems of one search (a suite, a selection): problems of one geometry
 * class share theirs (a layer at N 1 and at N 32; every 1x1 layer's pointwise grid of one stride
 * and channel class), since a grid depends only on its knobs. Kept grids are deeply frozen, so
 * each spec's name, geometry and spec-only verdict (spec.ts `keptFacts`) is computed once for
 * every problem that shares it. Grows with the distinct grids asked for: keep one per search.
 */
export class GridMemo {
  readonly #grids = new Map<string, KeptGrid>();

  /** {@link candidateGrid}`(target, opts)`, built once per distinct knobs, its specs frozen. */
  grid(target: TargetName, opts: GridOptions): readonly Spec[] {
    return this.kept(target, opts).specs;
  }

  /** The kept grid with each spec's spec-only verdict (validate.ts), which no problem changes. Package-internal. */
  kept(target: TargetName, opts: GridOptions): KeptGrid {
    const key = gridKey(target, opts);
    let grid = this.#grids.get(key);
    if (!grid) {
      const specs = candidateGrid(target, opts);
      // Judged before freezing, so nothing is kept for the specs no problem can use; frozen after,
      // and marked (validate.ts) where they may be valid for some problem.
      const specReasons = specs.map(builtSpecReason);
      specs.forEach((spec, i) => (specReasons[i] === null ? markChecked(spec) : Object.freeze(spec)));
      this.#grids.set(key, (grid = { specs: Object.freeze(specs), specReasons }));
    }
    return grid;
  }
}

/** A grid {@link GridMemo} keeps: its frozen specs and their spec-only reasons (null: passed). */
interface KeptGrid {
  readonly specs: readonly Spec[];
  readonly specReasons: readonly (string | null)[];
}

/** What a grid depends on: its knobs (depthwise: the options its grid reads). */
function gridKey(target: TargetName, opts: GridOptions): string {
  if (opts.variant !== 'depthwise') return JSON.stringify(gridKnobs(target, opts));
  const { dtype, capability, wo = null, ho = null, channels = null, images = null } = opts;
  return JSON.stringify({ variant: 'depthwise', target, dtype, capability, wo, ho, channels, images });
}

/** A filtered candidate list with its bookkeeping. */
export interface CandidateSet {
  /** Specs in the raw grid. */
  readonly raw: number;
  /** Valid specs, first occurrence of each kernel name, grid order. */
  readonly valid: Spec[];
  /** Specs validation rejected, with the reason. */
  readonly rejected: { spec: Spec; reason: string }[];
  /** Valid specs dropped because an earlier one had the same kernel name. */
  readonly duplicates: number;
}

/**
 * Validates `specs` (each against `problemFor(spec)` when given) and keeps the first spec of each
 * kernel name, as a deeply frozen copy that `validate()` later accepts without re-reading the schema.
 */
export function filterCandidates(specs: readonly Spec[], problemFor?: (spec: Spec) => Problem | undefined): CandidateSet {
  return keepValid(specs, (spec) => {
    // The frozen copy validates without the schema wherever it goes next (ranking, split trials).
    const checked = frozenSpec(spec);
    const v = validate(checked ?? spec, problemFor?.(spec));
    return v.ok ? checked! : v.reason;
  });
}

/** {@link filterCandidates} of the grid's own specs (frozen when built) over a problem the schema accepted (no schema reads). */
function filterGrid(specs: readonly Spec[], problem: Problem, specReasons: readonly (string | null)[] = []): CandidateSet {
  return keepValid(specs, (spec, i) => {
    // The kept grid's leading specs come with their spec-only verdicts.
    const reason = (i < specReasons.length ? specReasons[i] : builtSpecReason(spec)) ?? builtLaunchReason(spec, problem);
    return reason ?? spec;
  });
}

/** The specs `check` accepts (it returns the spec to keep, or the reason), the first of each kernel name. */
function keepValid(specs: readonly Spec[], check: (spec: Spec, index: number) => Spec | string): CandidateSet {
  const seen = new Set<string>();
  const valid: Spec[] = [];
  const rejected: { spec: Spec; reason: string }[] = [];
  let duplicates = 0;
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i]!;
    const kept = check(spec, i);
    if (typeof kept === 'string') {
      rejected.push({ spec, reason: kept });
      continue;
    }
    const name = kernelName(kept);
    if (seen.has(name)) {
      duplicates++;
      continue;
    }
    seen.add(name);
    valid.push(kept);
  }
  return { raw: specs.length, valid, rejected, duplicates };
}

/** Input channels of the AOT probe (a multiple of every ck and tile_k in the grid). */
export const AOT_PROBE_CHANNELS = 256;
/** Groups of the grouped AOT probe; every merge degree in the grid divides it. */
export const AOT_PROBE_GROUPS = 64;

/**
 * The probe problem an AOT spec is validated on (N1 H64 W64, C = K = 256 for dense/split_c).
 * Grouped probes keep 256 merged channels per merged block: groups 64, cpg = kpg = 256/gm.
 */
export function aotProbe(spec: Spec): Problem {
  if (spec.variant === 'depthwise') return depthwiseProbe(spec, AOT_PROBE_CHANNELS);
  const grouped = spec.variant === 'grouped';
  const perGroup = grouped ? Math.max(1, Math.floor(AOT_PROBE_CHANNELS / spec.group_merge)) : AOT_PROBE_CHANNELS;
  const groups = grouped ? AOT_PROBE_GROUPS : 1;
  return {
    N: 1,
    H: 64,
    W: 64,
    C: perGroup * groups,
    K: perGroup * groups,
    R: spec.R,
    S: spec.S,
    strideH: spec.stride_h,
    strideW: spec.stride_w,
    padH: spec.pad_h,
    padW: spec.pad_w,
    dilationH: spec.dilation_h,
    dilationW: spec.dilation_w,
    groups,
    dtype: spec.dtype,
  };
}

/** The shape-independent grid for `compile-all`: every AOT capability, validated on its probe. */
export function aotCandidates(
  target: TargetName,
  dtype: Dtype,
  variant: Variant = 'dense',
  extra: Omit<GridOptions, 'variant' | 'dtype' | 'capability' | 'wo'> = {},
): CandidateSet {
  const capabilities = variant === 'pointwise' ? POINTWISE_AOT_CAPABILITIES : AOT_CAPABILITIES;
  const specs = capabilities.flatMap((capability) => candidateGrid(target, { ...extra, variant, dtype, capability, wo: null }));
  return filterCandidates(specs, aotProbe);
}

/**
 * The variant made for a problem: depthwise for groups = C (multipliers 1, 2, 4), grouped for other
 * groups > 1, pointwise for unpadded 1x1 convs, else dense.
 */
export function defaultVariant(problem: Problem): Variant {
  if (isDepthwiseProblem(problem)) return 'depthwise';
  if (isPointwiseProblem(problem)) return 'pointwise';
  return problem.groups > 1 ? 'grouped' : 'dense';
}

/** Options for {@link problemCandidates}. */
export interface ProblemCandidateOptions extends Omit<GridOptions, 'variant' | 'dtype' | 'capability' | 'wo'> {
  /** Default: {@link defaultVariant}. */
  variant?: Variant;
  /** Images per tile to add besides 1 (default {@link TILE_N_CHOICES}; [] for one-image tiles only). */
  tileN?: readonly number[];
  /**
   * Also offer streaming copies of the per-wave pointwise specs (default false). On the H200 they
   * timed slower than the one-tile kernels on every shape they were benched on, and the cost model
   * has no rows of them yet: offered by default, its price for them would crowd the faster kernels
   * out of a small cap.
   */
  stream?: boolean;
  /** Grids kept from (and for) the other problems of the same search (default: none kept). */
  grids?: GridMemo;
}

/**
 * Candidates for one problem: its capability, tile widths fitted to its Wo, validated against it
 * (against its largest balanced chunk when the batch passes the per-launch buffer range).
 * split_c specs are validated at one split; the planner re-validates with its split count.
 * Dense and split_c on a batch whose map fits one tile also get tile_n variants (`tileN`, up to N)
 * of the tightest covering tile (smallest grid tile_h >= Ho and width >= Wo of each atom), after
 * the one-image grid.
 */
export function problemCandidates(given: Problem, target: TargetName, opts: ProblemCandidateOptions = {}): CandidateSet {
  const problem = frozenProblem(given);
  const variant = opts.variant ?? defaultVariant(problem);
  let wo: number | null = null;
  let ho: number | null = null;
  let launchProblem = problem;
  if (checkProblem(problem) === null) {
    const g = problemGeometry(problem);
    wo = g.Wo;
    ho = g.Ho;
    // A batch past the buffer range runs in chunks: judge candidates on the largest chunk.
    const perImage = Math.max(g.xImageBytes, g.yImageBytes);
    const fit = Math.max(1, Math.floor(MAX_TENSOR_BYTES / perImage));
    if (fit < problem.N) launchProblem = Object.freeze({ ...problem, N: Math.ceil(problem.N / Math.ceil(problem.N / fit)) });
  }
  const { tileN = TILE_N_CHOICES, stream = false, grids = new GridMemo(), ...gridOpts } = opts;
  const capability: Capability = {
    R: problem.R,
    S: problem.S,
    stride_h: problem.strideH,
    stride_w: problem.strideW,
    pad_h: problem.padH,
    pad_w: problem.padW,
    dilation_h: problem.dilationH,
    dilation_w: problem.dilationW,
  };
  // Tails and merge degrees from the problem's channels, when it is a convolution at all.
  const channels: ProblemChannels | undefined = wo !== null ? { C: problem.C, K: problem.K, groups: problem.groups } : undefined;
  const grid = grids.kept(target, { ...gridOpts, variant, dtype: problem.dtype, capability, wo, ho, ...(channels ? { channels, images: launchProblem.N } : {}) });
  const specs = [...grid.specs];
  // The problem's own copies, frozen like the kept grid's specs.
  const add = (copies: Spec[]) => specs.push(...copies.map(markChecked));
  if (wo !== null && (variant === 'dense' || variant === 'split_c') && problem.N > 1) add(imageTileVariants(specs, problem, tileN));
  if (wo !== null && (variant === 'dense' || variant === 'split_c')) {
    const wholeMap = wholeMapVariants(specs, problem);
    add([...weightRingVariants(specs, problem), ...wholeMap, ...weightRingVariants(wholeMap, problem)]);
  }
  if (channels && variant === 'dense') add(tapFoldVariants(specs, problem));
  // The schema reads the problem once; the grid's specs are built here, field by field.
  const checked = checkedProblem(launchProblem);
  const check = (specs: readonly Spec[], specReasons?: readonly (string | null)[]) => (checked ? filterGrid(specs, checked, specReasons) : filterCandidates(specs, () => launchProblem));
  // Copies of the valid specs (direct-to-LDS weights; streaming pointwise), with or without the tails below.
  const streams = stream && channels !== undefined && variant === 'pointwise';
  const filter = (specs: readonly Spec[], specReasons?: readonly (string | null)[]) => {
    const set = check(specs, specReasons);
    const dma = joinSets(set, check(ldsDmaVariants(set.valid)));
    return streams ? joinSets(dma, check(streamVariants(set.valid, launchProblem))) : dma;
  };
  const set = filter(specs, grid.specReasons);
  if (set.valid.length > 0 || channels === undefined) return set;
  // Tail code only where the problem needs it: specs with channel tails, then (the halo of every
  // offered tile passing the target's LDS) the compact grid with them.
  const base = { ...gridOpts, variant, dtype: problem.dtype, capability, wo, ho, channels, tails: true };
  const tailedGrid = grids.kept(target, base);
  const tailed = filter(tailedGrid.specs, tailedGrid.specReasons);
  if (tailed.valid.length > 0 || gridOpts.compact) return tailed;
  const compactGrid = grids.kept(target, { ...base, compact: true });
  return filter(compactGrid.specs, compactGrid.specReasons);
}

/** tile_n copies of the specs whose tile is the tightest of the grid around a map that fits one tile. */
function imageTileVariants(specs: readonly Spec[], problem: Problem, tileN: readonly number[]): Spec[] {
  const { Ho, Wo } = problemGeometry(problem);
  const tightest = (values: readonly number[], extent: number) => Math.min(...values.filter((v) => v >= extent));
  // Per atom: grid heights, not fitted ones: LLVM 22 takes 30-55 s on gfx950 for multi-image 14-row
  // tiles (7-row wave bands), against ~0.2 s for the rest of compile-all's default set.
  const tiles = new Map<AtomName, { tileH: number; tileW: number }>();
  const tileOf = (atom: AtomName) => {
    const wgmma = isWarpgroupAtom(atom);
    return { tileH: tightest(wgmma ? WGMMA_TILE_CHOICES : TILE_H_CHOICES, Ho), tileW: tightest(wgmma ? WGMMA_TILE_CHOICES : fittedWidths(Wo, atom), Wo) };
  };
  const out: Spec[] = [];
  for (const spec of specs) {
    let tile = tiles.get(spec.atom);
    if (!tile) tiles.set(spec.atom, (tile = tileOf(spec.atom)));
    if (spec.tile_h !== tile.tileH || spec.tile_w !== tile.tileW) continue;
    for (const n of tileN) if (n > 1 && n <= problem.N) out.push({ ...spec, tile_n: n });
  }
  return out;
}


/**
 * Weight-ring copies (spec.ts `weightRing`) of the warpgroup-MMA specs with two or more taps, where
 * the all-tap stages are crowded: fewer than three fit two workgroups per SM (one chunk's copies in
 * flight at a time, none while the next chunk's wgmmas wait for them), or they exceed the target's
 * LDS outright. Strided filters: every crowded m-block tile — the weights of every tap crowd a halo
 * that grows with the stride squared; streamed per tap they leave it two stages and run ahead in a
 * ring. Stride 1: only where the problem's weights outweigh its input (tiny maps, deep channels: the
 * weight stream is what a tile waits on); there every crowded whole-map tile (the weights are its
 * A operand; a ring keeps several taps of them in flight where two all-tap stages keep one chunk),
 * and the m-block tiles that exist only with the ring (all-tap stages over the LDS: tile_k 128 or
 * 256 at ck 64, a wgmma N of 128-256 per m-block, half or a quarter of tile_k 64's A-operand reads
 * per FLOP). A copy of every crowded stride-1 m-block tile would add a third again the candidates
 * of a small-map shape, before any stride-1 ring kernel is measured.
 */
function weightRingVariants(specs: readonly Spec[], problem: Problem): Spec[] {
  const g = problemGeometry(problem);
  const weightBound = g.wBytes >= g.xBytes;
  const out: Spec[] = [];
  for (const spec of specs) {
    if (!isWarpgroupAtom(spec.atom) || spec.weight_ring || spec.R * spec.S < 2) continue;
    const strided = spec.stride_h > 1 || spec.stride_w > 1;
    if (!strided && !weightBound) continue;
    const overLds = specGeometry(spec).ldsBytes > TARGETS[spec.target].ldsBytes;
    const crowded = overLds || wgmmaLds(spec).stages < WEIGHT_RING_MIN_STAGES;
    const wanted = strided ? crowded : spec.whole_map ? crowded : overLds;
    if (wanted) out.push({ ...spec, weight_ring: true });
  }
  return out;
}

/**
 * Direct-to-LDS copies (`lds_dma`) of the valid single-buffered per-wave-atom specs on a target
 * whose direct-to-LDS loads move a whole weight fragment slot per lane (gfx950): the weights skip
 * the registers and land in a second stage while the MMAs read the first. Offered only where the
 * doubled LDS keeps as many workgroups resident per CU as the register-staged spec has (the
 * registers the weights no longer hold can raise the register limit; a lower LDS limit would trade
 * occupancy for the overlap, the trade AMD's single-buffered grid declines).
 */
function ldsDmaVariants(specs: readonly Spec[]): Spec[] {
  const out: Spec[] = [];
  for (const spec of specs) {
    // A frozen spec keeps its twin (frozen too), so every problem that shares the spec shares it.
    const kept = keptFacts(spec);
    const twin = kept ? (kept.ldsDmaTwin === undefined ? (kept.ldsDmaTwin = ldsDmaTwin(spec)) : kept.ldsDmaTwin) : ldsDmaTwin(spec);
    if (twin) out.push(twin);
  }
  return out;
}

/** The lds_dma twin {@link ldsDmaVariants} offers for one spec, frozen, or null. */
function ldsDmaTwin(spec: Spec): Spec | null {
  // Streaming specs stage their weights once (no per-chunk weight loads to move to LDS).
  if (spec.double_buffer || spec.lds_dma || spec.stream || spec.variant === 'depthwise' || isWarpgroupAtom(spec.atom)) return null;
  if (!TARGETS[spec.target].ldsDma?.sizes.includes(ATOMS[spec.atom].fragA * ELEMENT_BYTES)) return null;
  const twin: Spec = { ...spec, double_buffer: true, lds_dma: true };
  // Whole slots and the doubled LDS within the target first: residency reads validated geometry.
  const slot = ATOMS[spec.atom].fragA;
  if (weightPieceElems(spec, slot) !== slot || specGeometry(twin).ldsBytes > TARGETS[spec.target].ldsBytes) return null;
  return residency(twin).perUnit >= residency(spec).perUnit ? markChecked(twin) : null;
}

declare module './spec.js' {
  interface SpecFacts {
    /** candidates.ts: the spec's lds_dma twin, or null. */
    ldsDmaTwin?: Spec | null;
    /** candidates.ts: the spec's streaming copy per count of resident chunks. */
    streamCopies?: Map<number, Spec>;
  }
}

/** Two candidate sets as one: `b`'s valid specs after `a`'s (their kernel names differ from `a`'s by construction). */
function joinSets(a: CandidateSet, b: CandidateSet): CandidateSet {
  if (b.raw === 0) return a;
  return { raw: a.raw + b.raw, valid: [...a.valid, ...b.valid], rejected: [...a.rejected, ...b.rejected], duplicates: a.duplicates + b.duplicates };
}

/**
 * Tap-folded copies (`fold_s`, kernel/tap-fold.ts) of the per-wave-atom specs of a problem whose
 * channels are fewer than the grid's smallest ck (an unfolded chunk would be mostly zeros) and whose
 * filter has taps along W: the chunk sizes that pad the folded axis S·C least for each atom, staged
 * in the longest channel run that tiles C.
 */
function tapFoldVariants(specs: readonly Spec[], problem: Problem): Spec[] {
  if (problem.S < 2 || problem.C >= Math.min(...CK_CHOICES)) return [];
  const padded = (ck: number) => Math.ceil((problem.S * problem.C) / ck) * ck;
  const perWave = specs.filter((s) => !isWarpgroupAtom(s.atom) && s.tile_n === 1 && s.ck % ATOMS[s.atom].k === 0);
  const least = new Map<AtomName, number>();
  for (const s of perWave) least.set(s.atom, Math.min(least.get(s.atom) ?? Infinity, padded(s.ck)));
  const { k_tail } = channelTails(problem, 'dense', 8, 1);
  return perWave.filter((s) => padded(s.ck) === least.get(s.atom)).map((s) => ({ ...s, c_tail: channelRun(problem.C), k_tail, fold_s: true }));
}

/**
 * Whole-map copies (whole-map.ts) of the warpgroup-MMA specs with one warpgroup column (waves_n 1)
 * and whole 64-channel m-blocks per warpgroup, for a stride-1 problem whose map fits: tile Ho×Wo
 * exactly, and tile_n from {@link wholeMapImages} at two pixel budgets per warpgroup: as many
 * pixels as the accumulators leave registers for under the spill heuristic's budget, and at most
 * one wgmma (256 pixels) per tap and m-block. Both put the batch in as few image tiles as fit, each reading the weights once.
 */
function wholeMapVariants(specs: readonly Spec[], problem: Problem): Spec[] {
  const { Ho, Wo } = problemGeometry(problem);
  if (problem.strideH !== 1 || problem.strideW !== 1) return [];
  const out: Spec[] = [];
  for (const spec of specs) {
    if (!isWarpgroupAtom(spec.atom) || spec.tile_n !== 1 || spec.waves_n !== 1 || spec.tile_h !== spec.tile_w || spec.tile_h !== Math.min(...WGMMA_TILE_CHOICES)) continue;
    const perGroup = spec.tile_k / spec.waves_m;
    if (perGroup % 64 !== 0) continue;
    const file = TARGETS[spec.target].registers;
    if (file.kind !== 'file') continue;
    // Accumulators: pixels / 2 per 64-channel m-block of the warpgroup.
    const budget = Math.floor((2 * (SPILL_BUDGET_FRACTION * file.maxPerThread - WGMMA_BOOKKEEPING_REGISTERS)) / (perGroup / 64) / 8) * 8;
    const images = new Set([Math.min(WGMMA_MAX_N, budget), budget].map((pixels) => wholeMapImages(Ho, Wo, problem.N, spec, pixels)));
    for (const tile_n of images) if (tile_n !== undefined) out.push({ ...spec, tile_h: Ho, tile_w: Wo, tile_n, whole_map: true });
  }
  return out;
}

/**
 * Streaming copies (`stream`, kernel/mma.ts) of the valid per-wave-atom pointwise specs, for a problem
 * whose pixel tiles outnumber the workgroups the machine keeps resident: each copy keeps the
 * weights of every chunk of C resident and as many workgroups as the target holds at once
 * (residency slots), and is offered where that leaves its workgroups two or more tiles each (with
 * one, streaming only adds LDS). The cost model then prices the overlap (cost-model.ts).
 */
function streamVariants(specs: readonly Spec[], problem: Problem): Spec[] {
  const out: Spec[] = [];
  for (const spec of specs) {
    if (isWarpgroupAtom(spec.atom) || spec.stream) continue;
    const copy = streamCopy(spec, Math.ceil(problem.C / spec.ck));
    if (streamTilesPerWorkgroup(copy, problem) >= 2) out.push(copy);
  }
  return out;
}

/** The streaming copy of `spec` keeping `chunks` chunks resident, frozen; kept per frozen spec, so problems of one C share it. */
function streamCopy(spec: Spec, chunks: number): Spec {
  const kept = keptFacts(spec);
  const copies = kept ? (kept.streamCopies ??= new Map()) : undefined;
  let copy = copies?.get(chunks);
  if (!copy) {
    const sized = { ...spec, stream: { workgroups: 1, chunks } };
    copy = markChecked({ ...spec, stream: { workgroups: residency(sized).slots, chunks } });
    copies?.set(chunks, copy);
  }
  return copy;
}
