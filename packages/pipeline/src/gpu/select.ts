import { chooseSplits, kernelName, launchGrid, mergeRow, outputExtent, residency, spillFilter, splitOptions, type Problem, type Spec } from '@rocke/conv-direct';

/** Why a candidate sits where it does in the bench order (all numbers from host-side models, nothing measured). */
export interface CandidateScore {
  readonly kernelName: string;
  /**
   * Useful work / work done: output pixels over whole tiles (Ho, Wo rounded up to the tile) times
   * output channels over whole channel tiles; grouped specs use conv-direct's merge model instead of
   * the channel term (k and n atom utilisation × the block diagonal's share 1/gm).
   */
  readonly tileUtilization: number;
  /** Workgroups / (waves of resident workgroups × slots): how full the last wave of the grid is. */
  readonly waveFill: number;
  /** tileUtilization × waveFill: the primary sort key (higher first). */
  readonly score: number;
  /** Outputs per workgroup (tile_h·tile_w·tile_k): the tie-break (larger first: more reuse per staged byte). */
  readonly tileVolume: number;
  /** split_c: the split count the planner would choose. */
  readonly splits?: number;
}

/**
 * Scores one spec for one problem. The model is deliberately simple (tile padding waste and grid
 * quantization against the residency model of conv-direct); it only orders the candidates so a cap
 * keeps the plausible ones, it never decides the winner: the GPU timing does.
 */
export function scoreCandidate(spec: Spec, problem: Problem): CandidateScore {
  const Ho = outputExtent(problem.H, problem.R, problem.strideH, problem.padH, problem.dilationH);
  const Wo = outputExtent(problem.W, problem.S, problem.strideW, problem.padW, problem.dilationW);
  const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;
  const spatial = (Ho * Wo) / (roundUp(Ho, spec.tile_h) * roundUp(Wo, spec.tile_w));
  const tileVolume = spec.tile_h * spec.tile_w * spec.tile_k;
  const name = kernelName(spec);
  if (spec.variant === 'grouped') {
    const row = mergeRow(spec, problem, spec.group_merge);
    const tileUtilization = spatial * row.kUtilisation * row.nUtilisation * row.diagonalShare;
    return { kernelName: name, tileUtilization, waveFill: row.fill, score: tileUtilization * row.fill, tileVolume };
  }
  const tileUtilization = spatial * (problem.K / roundUp(problem.K, spec.tile_k));
  let splits: number | undefined;
  if (spec.variant === 'split_c') splits = chooseSplits(spec, problem).splits;
  const workgroups = launchGrid(spec, problem, splits ?? 1).workgroups;
  const slots = residency(spec).slots;
  const waveFill = workgroups / (Math.ceil(workgroups / slots) * slots);
  const base = { kernelName: name, tileUtilization, waveFill, score: tileUtilization * waveFill, tileVolume };
  return splits === undefined ? base : { ...base, splits };
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
 * 2. sort by score (higher first), then tile volume (larger first), then kernel name;
 * 3. take the first `cap`, but in a first pass at most `ceil(cap / 8)` per tile shape
 *    (tile_h × tile_w × tile_k), so the subset spans many tile shapes instead of one shape's
 *    wave/ck variations; the remaining places are filled in sorted order.
 * Same specs and problem → same list, in the same order.
 */
export function orderCandidates(specs: readonly Spec[], problem: Problem, options: OrderOptions = {}): { spec: Spec; score: CandidateScore }[] {
  const pool = options.keepSpilling ? [...specs] : spillFilter(specs).kept;
  const scored = pool.map((spec) => ({ spec, score: scoreCandidate(spec, problem) }));
  scored.sort(
    (a, b) =>
      b.score.score - a.score.score ||
      b.score.tileVolume - a.score.tileVolume ||
      (a.score.kernelName < b.score.kernelName ? -1 : a.score.kernelName > b.score.kernelName ? 1 : 0),
  );
  const cap = options.cap ?? scored.length;
  if (!Number.isInteger(cap) || cap < 0) throw new RangeError(`cap must be a non-negative integer (got ${cap})`);
  if (scored.length <= cap) return scored;
  const perShape = Math.ceil(cap / 8);
  const taken = new Set<number>();
  const count = new Map<string, number>();
  for (let i = 0; i < scored.length && taken.size < cap; i++) {
    const s = scored[i]!.spec;
    const shape = `${s.tile_h}x${s.tile_w}x${s.tile_k}`;
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
export const MAX_SPLIT_TRIALS = 4;

/**
 * Split counts the bench times for one split_c spec on one problem: the planner's choice first,
 * then the feasible counts nearest to half, twice and four times it (feasible: conv-direct's
 * `splitOptions`, i.e. C/splits a multiple of ck and the workspace in range). The split count is a
 * runtime kernarg, so all of them run the same binary; the planner's two-waves rule is a model, and
 * on small maps the fp32 workspace traffic of extra slices and the tail of the last wave trade off
 * in ways only the timing settles. Deterministic, no duplicates, at most {@link MAX_SPLIT_TRIALS}.
 */
export function splitTrials(spec: Spec, problem: Problem): number[] {
  const chosen = chooseSplits(spec, problem).splits;
  const feasible = splitOptions(spec, problem).map((o) => o.splits);
  const out = [chosen];
  const add = (s: number | undefined) => {
    if (s !== undefined && !out.includes(s) && out.length < MAX_SPLIT_TRIALS) out.push(s);
  };
  add([...feasible].reverse().find((s) => s <= chosen / 2)); // fewer slices: less workspace traffic
  add(feasible.find((s) => s >= chosen * 2)); // more slices: more workgroups
  add(feasible.find((s) => s >= chosen * 4));
  return out;
}
