/**
 * The bench order of one problem's candidates: a host-side score (tile padding waste, grid fill),
 * tie-breaks, a cap that spans tile shapes, and the split counts worth timing for split_c.
 */
import { launchGrid } from './grid.js';
import { mergeRow } from './merge-chooser.js';
import { outputExtent, type Problem } from './problem.js';
import { haloExtent, kernelName, specGeometry, stagedSpec, wgmmaLds, type Spec } from './spec.js';
import { spillFilter } from './spill.js';
import { chooseSplits, splitOptions } from './split-chooser.js';
import { depthwiseStagingEfficiency } from './depthwise.js';
import { pointwisePixelUtilization } from './pointwise.js';
import { isWarpgroupAtom, TARGETS } from './targets.js';

/** Why a candidate sits where it does in the bench order (all numbers from host-side models, nothing measured). */
export interface CandidateScore {
  readonly kernelName: string;
  /**
   * Useful work / work done: output pixels over whole tiles (Ho, Wo rounded up to the tile, N to
   * the tile's tile_n images) times
   * output channels over whole channel tiles; grouped specs use conv-direct's merge model instead of
   * the channel term (k and n atom utilisation × the block diagonal's share 1/gm).
   */
  readonly tileUtilization: number;
  /** Workgroups / (rounds of one workgroup per CU / SM × CUs / SMs): how full the grid's last round is. */
  readonly waveFill: number;
  /** tileUtilization × waveFill (× {@link UNSWIZZLED_WGMMA_FACTOR} for unswizzled wgmma, × the staging efficiency for depthwise): the primary sort key (higher first). */
  readonly score: number;
  /**
   * Operand fragments a wave reads from LDS per MMA (activation rows shared by the R taps, one
   * weight fragment per m tile and tap): the first tie-break (fewer first: a wave with one output
   * row re-reads R input rows per row, a taller band shares them).
   */
  readonly fragmentsPerMma: number;
  /** Outputs per workgroup (tile_n·tile_h·tile_w·tile_k): the second tie-break (larger first: more reuse per staged byte). */
  readonly tileVolume: number;
  /** split_c: the split count the planner would choose. */
  readonly splits?: number;
}

/**
 * The one measured number in the order: a wgmma spec with the unswizzled core-matrix layout (ck 16
 * or 32) runs at about 0.6x the speed of one with 128B-swizzled rows (ck 64), in the
 * packages/ir/device/probes/tma-conv probe and in the bench alike. So within the wgmma share the
 * swizzled specs come first unless their tiles waste far more.
 */
export const UNSWIZZLED_WGMMA_FACTOR = 0.6;

/**
 * Output pixels over the pixels whole tiles compute: Ho, Wo rounded up to the tile and N to the
 * tile's tile_n images; pointwise tiles run over the flat N·Ho·Wo pixels, so only the batch's last
 * tile pads.
 */
export function spatialUtilization(spec: Spec, problem: Problem): number {
  if (spec.variant === 'pointwise') return pointwisePixelUtilization(spec, problem);
  const Ho = outputExtent(problem.H, problem.R, problem.strideH, problem.padH, problem.dilationH);
  const Wo = outputExtent(problem.W, problem.S, problem.strideW, problem.padW, problem.dilationW);
  const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;
  return (problem.N * Ho * Wo) / (roundUp(problem.N, spec.tile_n) * roundUp(Ho, spec.tile_h) * roundUp(Wo, spec.tile_w));
}

/**
 * Scores one spec for one problem. The model is deliberately simple (tile padding waste and grid
 * quantization against the residency model of conv-direct); it only orders the candidates so a cap
 * keeps the plausible ones, it never decides the winner: the GPU timing does.
 */
export function scoreCandidate(spec: Spec, problem: Problem): CandidateScore {
  const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;
  const spatial = spatialUtilization(spec, problem);
  const tileVolume = spec.tile_n * spec.tile_h * spec.tile_w * spec.tile_k;
  const fragmentsPerMma = fragmentLoadsPerMma(spec);
  const name = kernelName(spec);
  if (spec.variant === 'grouped') {
    const row = mergeRow(spec, problem, spec.group_merge);
    const tileUtilization = spatial * row.kUtilisation * row.nUtilisation * row.diagonalShare;
    return { kernelName: name, tileUtilization, waveFill: row.fill, score: tileUtilization * row.fill, fragmentsPerMma, tileVolume };
  }
  const tileUtilization = spatial * (problem.K / roundUp(problem.K, spec.tile_k));
  let splits: number | undefined;
  if (spec.variant === 'split_c') splits = chooseSplits(spec, problem).splits;
  const workgroups = launchGrid(spec, problem, splits ?? 1).workgroups;
  // Quantized per CU / SM, not per resident slot: when several workgroups share an SM, the last,
  // partial round runs them with less company (faster), so counting whole rounds of slots would
  // penalize exactly the high-occupancy specs the timing should get to see.
  const units = TARGETS[spec.target].computeUnits;
  const waveFill = workgroups / (Math.ceil(workgroups / units) * units);
  // Depthwise tiles cost bytes: weigh them by the share of staged halo pixels the outputs use.
  const layout = spec.variant === 'depthwise' ? depthwiseStagingEfficiency(spec) : isWarpgroupAtom(spec.atom) && !wgmmaLds(spec).swizzle ? UNSWIZZLED_WGMMA_FACTOR : 1;
  const base = { kernelName: name, tileUtilization, waveFill, score: tileUtilization * waveFill * layout, fragmentsPerMma, tileVolume };
  return splits === undefined ? base : { ...base, splits };
}

/**
 * LDS fragment loads per MMA of one wave and channel chunk, as the kernel issues them: per filter
 * column and k-atom, `(rows-1)·stride + R` activation rows per band of the wave's rows in one image
 * (each one load per column block) shared by the R taps, and one weight fragment per m tile and
 * tap; over `R·mTiles·rows·colBlocks` MMAs.
 */
export function fragmentLoadsPerMma(kernelSpec: Spec): number {
  const spec = stagedSpec(kernelSpec);
  const g = specGeometry(spec);
  const inRows = g.waveImages * haloExtent(g.bandRows, spec.stride_h, spec.R, spec.dilation_h);
  const loads = inRows * g.colBlocks + spec.R * g.mTilesPerWave;
  return loads / (spec.R * g.mTilesPerWave * g.rowsPerWave * g.colBlocks);
}

/** Options of {@link orderCandidates}. */
export interface OrderOptions {
  /** Keep at most this many (default: all). */
  readonly cap?: number;
  /** Keep specs the spill heuristic drops (default false: they are likely to spill on sm_90). */
  readonly keepSpilling?: boolean;
}

/**
 * The deterministic bench order of one problem's candidates, and the capped subset:
 * 1. conv-direct's spill heuristic drops likely spillers (unless `keepSpilling`);
 * 2. sort by score (higher first), then LDS fragments per MMA (fewer first), then tile volume
 *    (larger first), then kernel name;
 * 3. take the first `cap`, but in a first pass at most `ceil(cap / 16)` per tile shape and
 *    channel chunk (tile_h × tile_w × tile_k, ck, tile_n), so the subset spans many tile shapes and
 *    chunk depths (hence LDS sizes and residencies) instead of one shape's wave variations; the
 *    remaining places are filled in sorted order.
 * Same specs and problem → same list, in the same order.
 */
export function orderCandidates(specs: readonly Spec[], problem: Problem, options: OrderOptions = {}): { spec: Spec; score: CandidateScore }[] {
  const pool = options.keepSpilling ? [...specs] : spillFilter(specs).kept;
  const scored = pool.map((spec) => ({ spec, score: scoreCandidate(spec, problem) }));
  scored.sort(
    (a, b) =>
      b.score.score - a.score.score ||
      a.score.fragmentsPerMma - b.score.fragmentsPerMma ||
      b.score.tileVolume - a.score.tileVolume ||
      (a.score.kernelName < b.score.kernelName ? -1 : a.score.kernelName > b.score.kernelName ? 1 : 0),
  );
  const cap = options.cap ?? scored.length;
  if (!Number.isInteger(cap) || cap < 0) throw new RangeError(`cap must be a non-negative integer (got ${cap})`);
  if (scored.length <= cap) return scored;
  const perShape = Math.ceil(cap / 16);
  const taken = new Set<number>();
  const count = new Map<string, number>();
  for (let i = 0; i < scored.length && taken.size < cap; i++) {
    const s = scored[i]!.spec;
    const shape = `${s.tile_h}x${s.tile_w}x${s.tile_k}/ck${s.ck}/n${s.tile_n}`;
    const n = count.get(shape) ?? 0;
    if (n < perShape) {
      taken.add(i);
      count.set(shape, n + 1);
    }
  }
  for (let i = 0; i < scored.length && taken.size < cap; i++) taken.add(i);
  return scored.filter((_, i) => taken.has(i));
}

/** Most split counts the bench times per split_c candidate. */
export const MAX_SPLIT_TRIALS = 6;

/** The bench's split window around the planner's choice: from a quarter of it to eight times it. */
export const SPLIT_TRIAL_WINDOW = { below: 4, above: 8 } as const;

/**
 * Split counts the bench times for one split_c spec on one problem: the planner's choice first,
 * then the other feasible counts (conv-direct's `splitOptions`: C/splits a multiple of ck, the
 * workspace in range) within {@link SPLIT_TRIAL_WINDOW}, nearest first by ratio (fewer slices first
 * on a tie: less workspace traffic). The split count is a runtime kernarg, so all of them run the
 * same binary; the planner's wave target is a model, and on small maps workspace traffic, the
 * channel-loop length and the last wave's tail trade off in ways only the timing settles (e.g. 5
 * slices of 1280 channels sit between the power-of-two ratios). Deterministic, no duplicates, at
 * most {@link MAX_SPLIT_TRIALS}.
 */
export function splitTrials(spec: Spec, problem: Problem): number[] {
  const chosen = chooseSplits(spec, problem).splits;
  const distance = (s: number) => Math.abs(Math.log(s / chosen));
  const others = splitOptions(spec, problem)
    .map((o) => o.splits)
    .filter((s) => s !== chosen && s * SPLIT_TRIAL_WINDOW.below >= chosen && s <= chosen * SPLIT_TRIAL_WINDOW.above)
    .sort((a, b) => distance(a) - distance(b) || a - b);
  return [chosen, ...others].slice(0, MAX_SPLIT_TRIALS);
}
