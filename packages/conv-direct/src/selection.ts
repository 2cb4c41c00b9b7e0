/**
 * Which kernels a problem set needs on a target: the variants apt for each shape, their valid and
 * likely non-spilling candidates, in bench order, under a per-shape cap shared by variant and MMA atom.
 */
import { problemCandidates } from './candidates.js';
import { isDepthwiseProblem } from './depthwise.js';
import { isPointwiseProblem } from './pointwise.js';
import { parseProblem, problemGeometry, type Dtype, type Problem } from './problem.js';
import { orderCandidates } from './ranking.js';
import type { Spec, Variant } from './spec.js';
import { spillFilter } from './spill.js';
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
  /** This variant's share of the shape's cap. */
  share: number;
  /** The specs kept under the share, in bench order. */
  specs: Spec[];
  /** `orderCandidates`' host-side score of each spec (same order as `specs`). */
  scores: number[];
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
  /** Why something apt was not selected (e.g. a variant outside `--variant`). */
  notes: string[];
}

/** Options of {@link selectProblemSpecs}. */
export interface SelectOptions {
  /** Candidates per shape at most, shared evenly by its variants (default {@link DEFAULT_SHAPE_CAP}). */
  cap?: number;
  /** Only these variants (default: every variant apt for the shape). */
  variants?: readonly string[];
}

/** `cap` split into `n` near-equal shares, the larger ones first (7 over 2: [4, 3]). */
export function capShares(cap: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(cap / n) + (i < cap % n ? 1 : 0));
}

/**
 * A variant's specs for the bench: each MMA atom (sm_90: mma.sync and wgmma; AMD: its two MFMA
 * shapes) gets its own share of `cap`, in first-seen atom order, filled in `orderCandidates` order.
 * The host score models tile waste and grid fill, not the atoms' throughputs, so none crowds out
 * another. Used by the selection and by the bench's manifest built from a compile cache alike.
 */
export function orderByAtomShares(specs: readonly Spec[], problem: Problem, cap: number): ReturnType<typeof orderCandidates> {
  const atoms = [...new Set(specs.map((s) => s.atom))];
  const quota = capShares(cap, Math.max(atoms.length, 1));
  return atoms.flatMap((atom, j) => orderCandidates(specs.filter((s) => s.atom === atom), problem, { cap: quota[j]!, keepSpilling: true }));
}

/**
 * The kernels a problem set needs on one target, per shape: the variants apt for it
 * ({@link benchVariants}: grouped for groups > 1, else dense, plus split_c on maps up to 16×16), each
 * variant's valid candidates from conv-direct's `problemCandidates`, minus likely spillers
 * (`spillFilter`), ordered by `orderCandidates` (host-side score, then tile volume,
 * then name) and cut to the variant's share of `cap`. Deterministic: same input, same specs.
 */
export function selectProblemSpecs(problems: readonly NamedProblem[], target: TargetName, options: SelectOptions = {}): ShapeSelection[] {
  const cap = options.cap ?? DEFAULT_SHAPE_CAP;
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a positive integer (got ${cap})`);
  return problems.map(({ name, cls, problem }) => {
    const apt = benchVariants(problem);
    const wanted = options.variants ? apt.filter((v) => options.variants!.includes(v)) : apt;
    const notes = apt.filter((v) => !wanted.includes(v)).map((v) => `${v}: apt, not selected (--variant)`);
    if (wanted.length === 0) notes.push(`no selected variant is apt for this shape (apt: ${apt.join(', ')})`);
    const quota = capShares(cap, Math.max(wanted.length, 1));
    const variants = wanted.map((variant, i): VariantSelection => {
      const valid = problemCandidates(problem, target, { variant }).valid;
      const likely = spillFilter(valid);
      const ordered = orderByAtomShares(likely.kept, problem, quota[i]!);
      return {
        variant,
        valid: valid.length,
        spillHeuristic: likely.dropped.length,
        share: quota[i]!,
        specs: ordered.map((o) => o.spec),
        scores: ordered.map((o) => o.score.score),
      };
    });
    return { name, cls, problem, target, cap, variants, notes };
  });
}
