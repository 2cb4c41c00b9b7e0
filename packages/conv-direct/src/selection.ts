/**
 * Which kernels a problem set needs on a target: the variants apt for each shape, their valid and
 * likely non-spilling candidates, in the cost model's bench order, under a per-shape cap.
 */
import { GridMemo, problemCandidates } from './candidates.js';
import { isDepthwiseProblem } from './depthwise.js';
import { isPointwiseProblem } from './pointwise.js';
import { parseProblem, problemGeometry, type Dtype, type Problem } from './problem.js';
import { orderCandidates } from './ranking.js';
import type { Spec, Variant } from './spec.js';
import { spillFilter } from './spill.js';
import { frozenProblem } from './validate.js';
import type { TargetName } from './targets.js';

/** A problem with the name and class it is reported under (the shape of a suite entry). */
export interface NamedProblem {
  name: string;
  problem: Problem;
  cls: string | null;
}

const SAME_3X3 = { R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1 } as const;

function named(name: string, cls: string, fields: Omit<Problem, keyof typeof SAME_3X3>): NamedProblem {
  const r = parseProblem({ ...SAME_3X3, ...fields });
  if (!r.ok) throw new Error(`built-in problem ${name}: ${r.reason}`);
  return { name, cls, problem: r.problem };
}

/**
 * A small default problem set (the `rocke` CLI's built-in one): one shape per class of the public
 * suite (packages/pipeline/device/public.json, same names), bf16, 3×3 "same" padding, stride 1:
 * - `sm_14x14_1024` small-map: N1 14×14 C=K=1024 (dense and split_c candidates);
 * - `g_28_c512_g32` grouped: N8 28×28 C=K=512, 32 groups (grouped candidates);
 * - `d_14_c256` dense: N32 14×14 C=K=256 (dense, and split_c: its map is small too).
 */
export const DEFAULT_PROBLEMS: readonly NamedProblem[] = [
  named('sm_14x14_1024', 'small-map', { N: 1, H: 14, W: 14, C: 1024, K: 1024, groups: 1, dtype: 'bf16' }),
  named('g_28_c512_g32', 'grouped', { N: 8, H: 28, W: 28, C: 512, K: 512, groups: 32, dtype: 'bf16' }),
  named('d_14_c256', 'dense', { N: 32, H: 14, W: 14, C: 256, K: 256, groups: 1, dtype: 'bf16' }),
];

/**
 * Default candidates per shape and target (the bench's cap too, so a problem set compiles exactly
 * what the bench would time for it, and both share the cache entries).
 */
export const DEFAULT_SHAPE_CAP = 40;

/** Output maps up to this many pixels (Ho·Wo) also get split_c candidates (the 7×7…16×16 class). */
export const SPLIT_C_MAX_PIXELS = 16 * 16;

/**
 * Variants worth building and timing for a problem: grouped for groups > 1, and depthwise too for
 * groups = C (the timing decides); dense (unpadded 1x1: pointwise, then dense), plus split_c on small maps.
 */
export function benchVariants(problem: Problem): Variant[] {
  if (problem.groups > 1) return isDepthwiseProblem(problem) ? ['grouped', 'depthwise'] : ['grouped'];
  const g = problemGeometry(problem);
  // Unpadded 1x1: the flat-pixel GEMM first (the larger cap share), the windowed tiles beside it.
  const own: Variant[] = isPointwiseProblem(problem) ? ['pointwise', 'dense'] : ['dense'];
  return g.Ho * g.Wo <= SPLIT_C_MAX_PIXELS ? [...own, 'split_c'] : own;
}

/** {@link DEFAULT_PROBLEMS} in other dtypes (each shape once per dtype; names get `_fp16`-style suffixes unless the dtype is the set's own). */
export function retypeProblems(problems: readonly NamedProblem[], dtypes: readonly Dtype[]): NamedProblem[] {
  return dtypes.flatMap((dtype) =>
    problems.map((p) => (p.problem.dtype === dtype ? p : { ...p, name: `${p.name}_${dtype}`, problem: { ...p.problem, dtype } })),
  );
}

/** What a problem set selected for one variant of one shape. */
export interface VariantSelection {
  variant: Variant;
  /** Valid candidates (conv-direct's `problemCandidates`). */
  valid: number;
  /** Of those, dropped by conv-direct's spill heuristic before ordering (likely spillers). */
  spillHeuristic: number;
  /** How many of the shape's cap this variant holds. */
  share: number;
  /** The specs kept, in bench order. */
  specs: Spec[];
  /** The cost model's predicted time of each spec, microseconds (same order as `specs`). */
  predictedUs: number[];
  /**
   * Why selecting this variant threw (e.g. a chooser's PlanError), as `Name: message`; then
   * `specs` is empty. One shape's failure is recorded so the rest of a suite is still selected.
   */
  error?: string;
}

/** What a problem set selected for one shape and target. */
export interface ShapeSelection {
  name: string;
  cls: string | null;
  problem: Problem;
  target: TargetName;
  /** The cap this shape's variants shared. */
  cap: number;
  variants: VariantSelection[];
  /**
   * The likely non-spilling candidates the cap left out, in predicted-time order (every variant's):
   * the next ones to build when a selected kernel fails to compile or is pruned, so the cap counts
   * usable kernels.
   */
  backfill: { spec: Spec; predictedUs: number }[];
  /** Why something apt was not selected (e.g. a variant outside `--variant`). */
  notes: string[];
}

/** Options of {@link selectProblemSpecs}. */
export interface SelectOptions {
  /** Candidates per shape at most, over all its variants (default {@link DEFAULT_SHAPE_CAP}). */
  cap?: number;
  /** Only these variants (default: every variant apt for the shape). */
  variants?: readonly string[];
}

/** `cap` split into `n` near-equal shares, the larger ones first (7 over 2: [4, 3]). */
export function capShares(cap: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(cap / n) + (i < cap % n ? 1 : 0));
}

/**
 * The places of a shape's cap each variant keeps for its own best candidates before the joint
 * order fills the rest: a quarter of the cap over the variants, at least 1. The cost model has
 * measured rows for some variants and only its roofline for others, so no variant's first few
 * are crowded out by another's prediction.
 */
export function variantReserve(cap: number, variants: number): number {
  return Math.max(1, Math.floor(cap / (4 * Math.max(variants, 1))));
}

/**
 * The bench order of one shape over its variants' candidates: each variant's first
 * {@link variantReserve} by predicted time, then every other candidate by predicted time, cut to
 * `cap`; returned in predicted-time order. Used by the selection and by the bench's manifest built
 * from a compile cache alike.
 */
export function orderAcrossVariants(byVariant: readonly (readonly Spec[])[], problem: Problem, cap: number): ReturnType<typeof orderCandidates> {
  return rankAcrossVariants(byVariant, problem, cap).selected;
}

/** {@link orderAcrossVariants} (`selected`) and every other candidate after it by predicted time (`rest`). */
function rankAcrossVariants(byVariant: readonly (readonly Spec[])[], problem: Problem, cap: number): { selected: ReturnType<typeof orderCandidates>; rest: ReturnType<typeof orderCandidates> } {
  const ordered = byVariant.map((specs) => orderCandidates(specs, problem, { keepSpilling: true }));
  const reserve = variantReserve(cap, byVariant.length);
  const kept = new Set(ordered.flatMap((o) => o.slice(0, reserve)));
  const all = ordered.flat().sort((a, b) => a.score.predictedUs - b.score.predictedUs || (a.score.kernelName < b.score.kernelName ? -1 : a.score.kernelName > b.score.kernelName ? 1 : 0));
  for (const o of all) {
    if (kept.size >= cap) break;
    kept.add(o);
  }
  const selected = all.filter((o) => kept.has(o)).slice(0, cap);
  const chosen = new Set(selected);
  return { selected, rest: all.filter((o) => !chosen.has(o)) };
}

/**
 * The kernels a problem set needs on one target, per shape: the variants apt for it
 * ({@link benchVariants}: grouped for groups > 1, else dense, plus split_c on maps up to 16×16),
 * each variant's valid candidates from conv-direct's `problemCandidates`, minus likely spillers
 * (`spillFilter`), ordered by the cost model's predicted time across variants
 * ({@link orderAcrossVariants}) and cut to `cap`; the candidates past the cap follow in `backfill`.
 * Deterministic: same input, same specs.
 */
export function selectProblemSpecs(problems: readonly NamedProblem[], target: TargetName, options: SelectOptions = {}): ShapeSelection[] {
  const cap = options.cap ?? DEFAULT_SHAPE_CAP;
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a positive integer (got ${cap})`);
  const grids = new GridMemo();
  return problems.map(({ name, cls, problem }) => {
    const apt = benchVariants(problem);
    const wanted = options.variants ? apt.filter((v) => options.variants!.includes(v)) : apt;
    const notes = apt.filter((v) => !wanted.includes(v)).map((v) => `${v}: apt, not selected (--variant)`);
    if (wanted.length === 0) notes.push(`no selected variant is apt for this shape (apt: ${apt.join(', ')})`);
    const frozen = frozenProblem(problem);
    const pools = wanted.map((variant) => variantPool(frozen, target, variant, grids));
    const { selected, rest } = orderRecordingErrors(pools, frozen, cap);
    const variants = pools.map(({ variant, valid, likely, error }): VariantSelection => {
      const mine = selected.filter((o) => o.spec.variant === variant);
      return {
        variant,
        valid: valid.length,
        spillHeuristic: likely.dropped.length,
        share: mine.length,
        specs: mine.map((o) => o.spec),
        predictedUs: mine.map((o) => o.score.predictedUs),
        ...(error ? { error } : {}),
      };
    });
    const backfill = rest.map((o) => ({ spec: o.spec, predictedUs: o.score.predictedUs }));
    return { name, cls, problem, target, cap, variants, notes, backfill };
  });
}

interface VariantPool {
  variant: Variant;
  valid: Spec[];
  likely: ReturnType<typeof spillFilter>;
  error?: string;
}

const errorLine = (err: unknown): string => {
  const e = err instanceof Error ? err : new Error(String(err));
  return `${e.name}: ${e.message.split('\n')[0]}`;
};

/** A variant's valid and likely non-spilling candidates; what throws is recorded in `error`. */
function variantPool(problem: Problem, target: TargetName, variant: Variant, grids: GridMemo): VariantPool {
  try {
    const valid = problemCandidates(problem, target, { variant, grids }).valid;
    return { variant, valid, likely: spillFilter(valid) };
  } catch (err) {
    return { variant, valid: [], likely: { kept: [], dropped: [] }, error: errorLine(err) };
  }
}

/**
 * {@link rankAcrossVariants} over the pools without an error. When ordering throws, each pool is
 * ordered alone to find the ones that throw; those get the error and the rest is ordered.
 */
function orderRecordingErrors(pools: VariantPool[], problem: Problem, cap: number): ReturnType<typeof rankAcrossVariants> {
  const order = () => rankAcrossVariants(pools.filter((p) => !p.error).map((p) => p.likely.kept), problem, cap);
  try {
    return order();
  } catch {
    for (const p of pools.filter((q) => !q.error)) {
      try {
        orderAcrossVariants([p.likely.kept], problem, cap);
      } catch (err) {
        p.error = errorLine(err);
      }
    }
    return order();
  }
}
