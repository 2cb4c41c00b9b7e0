// How well the candidate grid covers one problem on one target: how many candidates are valid and,
// when none is, which validation rule is decisive (the one rejecting the most candidates).
import { defaultVariant, problemCandidates, type CandidateSet } from './candidates.js';
import type { Problem } from './problem.js';
import type { Variant } from './spec.js';
import type { TargetName } from './targets.js';

/** One validation rule and how many candidates it rejected. */
export interface RejectionRule {
  /** The reason with its standalone numbers replaced by `#` (names like gfx950 or 16x16x32 stay): `C # is not a multiple of ck #`. */
  readonly rule: string;
  /** The first concrete reason of this rule, as validation worded it. */
  readonly example: string;
  readonly count: number;
}

/** The result of {@link problemCoverage}. */
export interface ProblemCoverage {
  readonly target: TargetName;
  readonly variant: Variant;
  /** Candidates in the grid, valid ones (distinct kernels) and rejected ones. */
  readonly raw: number;
  readonly valid: number;
  readonly rejected: number;
  /** Rejection rules, most candidates first (ties by rule text). */
  readonly rules: readonly RejectionRule[];
  /** With no valid candidate: why, in one line (the top rule's example and its count); else null. */
  readonly reason: string | null;
}

/** A rejection reason's rule: the same wording with every standalone number replaced by `#`. */
export function rejectionRule(reason: string): string {
  return reason.replace(/\b\d+(\.\d+)?\b/g, '#');
}

/**
 * Valid-candidate count and decisive rejection rule of `problem` on `target` for `variant`
 * (default: `defaultVariant(problem)`), over conv-direct's problem candidates.
 */
export function problemCoverage(problem: Problem, target: TargetName, opts: { variant?: Variant } = {}): ProblemCoverage {
  const variant = opts.variant ?? defaultVariant(problem);
  return candidateCoverage(problemCandidates(problem, target, { variant }), target, variant);
}

/** {@link problemCoverage} of a candidate set already computed (`problemCandidates(problem, target, {variant})`). */
export function candidateCoverage(set: CandidateSet, target: TargetName, variant: Variant): ProblemCoverage {
  const byRule = new Map<string, { example: string; count: number }>();
  for (const r of set.rejected) {
    const rule = rejectionRule(r.reason);
    const seen = byRule.get(rule);
    if (seen) seen.count++;
    else byRule.set(rule, { example: r.reason, count: 1 });
  }
  const rules = [...byRule]
    .map(([rule, { example, count }]) => ({ rule, example, count }))
    .sort((a, b) => b.count - a.count || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
  const top = rules[0];
  const reason =
    set.valid.length > 0
      ? null
      : top
        ? `no valid ${variant} candidate on ${target}: ${top.example} (this rule rejects ${top.count} of ${set.raw} candidates)`
        : `no ${variant} candidate in the ${target} grid`;
  return { target, variant, raw: set.raw, valid: set.valid.length, rejected: set.rejected.length, rules, reason };
}
