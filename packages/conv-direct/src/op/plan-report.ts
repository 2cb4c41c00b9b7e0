/**
 * What `rocke plan` reports for one problem on one target (no GPU, nothing timed): the candidates
 * of each variant weighed and why the others were rejected, the chosen kernel and why, its launch
 * plan and the ranker's order. The caller says which kernels its cache holds and hands in the
 * problem's tuning record; this module knows the rest.
 */
import { problemCandidates, type GridMemo } from '../candidates.js';
import { costLine } from '../cost-model.js';
import { candidateCoverage, problemCoverage } from '../coverage.js';
import { chooseGroupMerge } from '../merge-chooser.js';
import { plan, type LaunchPlan } from '../plan.js';
import { problemLabel, type Problem } from '../problem.js';
import { chooseConv, type ConvChoice, type ConvRecordChoice } from '../ranker/index.js';
import { benchVariants } from '../selection.js';
import { kernelName, type Spec, type Variant } from '../spec.js';
import type { TargetName } from '../targets.js';
import { frozenProblem } from '../validate.js';

/** The result of {@link planReport}: what `rocke plan --json` prints. */
export interface PlanReport {
  problem: Problem;
  label: string;
  target: string;
  /** The problem's main variant and every variant weighed (the bench's, or the one asked for). */
  variant: Variant;
  variants: Variant[];
  candidates: { raw: number; valid: number; rejected: number; duplicates: number };
  validKernels: string[];
  /** Valid kernels with an unpruned cache entry for this target, and those the prune step dropped (name → reason). */
  cachedKernels: string[];
  prunedKernels: Record<string, string>;
  rejectedReasons: { reason: string; count: number }[];
  chosen: {
    kernelName: string;
    /** `record`: the tuning record of this problem on this arch; `ranker`: the cost model; `kernel`: named by the caller. */
    chosenBy: 'record' | 'ranker' | 'kernel';
    rule: string;
    explain: readonly string[];
    spec: Spec;
    splits?: number;
    mergeExplain: readonly string[];
    plan: LaunchPlan;
  } | null;
  /** The ranker's order (when it chose): every candidate's place, predicted time and the cost terms behind it. */
  ranking: RankingEntry[];
  /** Why nothing was chosen: no valid candidate (the decisive reason), or the plan failed. */
  note: string | null;
}

/** One candidate's place in the ranker's order and why. */
export interface RankingEntry {
  position: number;
  kernelName: string;
  splits?: number;
  predictedUs: number;
  /** Predicted time over the first one's. */
  relative: number;
  /** The cost model's terms, microseconds after their coefficients. */
  terms: Readonly<Record<string, number>>;
  reason: string;
}

/** The kernels of the caller's cache among the valid ones: compiled (code intact) and pruned (name → reason). */
export interface CachedKernels {
  cached: ReadonlySet<string>;
  pruned: Record<string, string>;
}

/** Options of {@link planReport}. */
export interface PlanReportOptions {
  /** Weigh this variant only (default: the bench's variants of the problem). */
  variant?: Variant;
  /** Choose this kernel (it must be a valid candidate). */
  kernel?: string;
  /** Which of the `valid` kernel names the cache holds (default: none). */
  cache?: (valid: ReadonlySet<string>) => CachedKernels;
  /** The problem's tuning record on the target, if any (asked only when no `kernel` is given). */
  record?: () => ConvRecordChoice | undefined;
  /** Leave the ranker's order and the rejection tally out (a problem set reports one row per shape, not every candidate). */
  noRanking?: boolean;
  /** Candidate grids shared with the other problems of a problem set (see GridMemo). */
  grids?: GridMemo;
}

type Chosen = Omit<ConvChoice, 'chosenBy'> & { chosenBy: 'record' | 'ranker' | 'kernel' };

function rankingOf(choice: Chosen): RankingEntry[] {
  return (choice.ranked ?? []).map((r, i) => ({
    position: i + 1,
    kernelName: r.kernelName,
    ...(r.splits !== undefined ? { splits: r.splits } : {}),
    predictedUs: r.cost.us,
    relative: r.relative,
    terms: r.cost.terms,
    reason: costLine(r.cost),
  }));
}

/**
 * The kernel for a problem: `options.kernel` if given, else {@link chooseConv} — the tuning record
 * if it still validates, else the ranker over the kernels compiled in the cache (every unpruned
 * valid one when none is). A reason when the named kernel is not a valid candidate.
 */
function choose(problem: Problem, target: TargetName, variants: Variant[], specs: readonly Spec[], state: CachedKernels, options: PlanReportOptions): Chosen | { reason: string } | { usage: string } {
  if (options.kernel !== undefined) {
    const spec = specs.find((s) => kernelName(s) === options.kernel);
    if (!spec) return { usage: `kernel ${options.kernel} is not a valid ${variants.join('/')} candidate for ${problemLabel(problem)} on ${target}` };
    return { spec, kernelName: options.kernel, chosenBy: 'kernel', explain: ['--kernel'] };
  }
  const record = options.record?.();
  const { cached, pruned } = state;
  return chooseConv(problem, target, {
    variants,
    candidates: specs,
    available: cached.size ? (n) => cached.has(n) : (n) => !(n in pruned),
    ...(record ? { record } : {}),
  });
}

/**
 * Candidates and the chosen plan for one problem on one target, or `{usage}` when `options.kernel`
 * is not a valid candidate. With no valid candidate, or a plan that fails, `chosen` is null and
 * `note` says why.
 */
export function planReport(given: Problem, target: TargetName, options: PlanReportOptions = {}): PlanReport | { usage: string } {
  // One frozen problem for candidates, choice and plan: each keeps what it derived from it.
  const problem = frozenProblem(given);
  const variants: Variant[] = options.variant ? [options.variant] : benchVariants(problem);
  const sets = variants.map((variant) => problemCandidates(problem, target, { variant, ...(options.grids ? { grids: options.grids } : {}) }));
  const reasons = new Map<string, number>();
  if (!options.noRanking) for (const r of sets.flatMap((s) => s.rejected)) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
  const sum = (f: (s: (typeof sets)[number]) => number) => sets.reduce((n, s) => n + f(s), 0);
  const specs = sets.flatMap((s) => s.valid);
  const validKernels = specs.map((s) => kernelName(s));
  const state = options.cache?.(new Set(validKernels)) ?? { cached: new Set<string>(), pruned: {} };
  const base = {
    problem,
    label: problemLabel(problem),
    target,
    variant: variants[0]!,
    variants,
    candidates: { raw: sum((s) => s.raw), valid: sum((s) => s.valid.length), rejected: sum((s) => s.rejected.length), duplicates: sum((s) => s.duplicates) },
    validKernels,
    cachedKernels: validKernels.filter((k) => state.cached.has(k)),
    prunedKernels: state.pruned,
    rejectedReasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
  };
  const choice = choose(problem, target, variants, specs, state, options);
  if ('usage' in choice) return choice;
  if ('reason' in choice) {
    const none = { ...base, ranking: [] };
    if (specs[0]) {
      try {
        plan(specs[0], problem, target);
      } catch (err) {
        return { ...none, chosen: null, note: `planning ${kernelName(specs[0])} failed: ${(err as Error).message}` };
      }
    }
    const coverage = candidateCoverage(sets[0]!, target, variants[0]!).reason;
    return { ...none, chosen: null, note: specs.length === 0 && coverage ? coverage : choice.reason };
  }
  let spec = choice.spec;
  let mergeExplain: readonly string[] = [];
  if (choice.chosenBy === 'kernel' && spec.variant === 'grouped') {
    const merge = chooseGroupMerge(spec, problem);
    spec = merge.spec;
    mergeExplain = merge.explain;
  }
  const splits = choice.splits;
  try {
    const p = plan(spec, problem, target, splits === undefined ? {} : { splits });
    const rule = choice.explain[choice.explain.length - 1]!;
    return {
      ...base,
      chosen: { kernelName: kernelName(spec), chosenBy: choice.chosenBy, rule, explain: choice.explain, spec, ...(splits !== undefined ? { splits } : {}), mergeExplain, plan: p },
      ranking: options.noRanking ? [] : rankingOf(choice),
      note: null,
    };
  } catch (err) {
    return { ...base, chosen: null, ranking: options.noRanking ? [] : rankingOf(choice), note: `planning ${kernelName(spec)} failed: ${(err as Error).message}` };
  }
}

/** What a plan's summary line adds after the workspace and split count (a grouped kernel's merge degree). */
export function specDetail(spec: Spec): string {
  return spec.variant === 'grouped' ? `, group_merge ${spec.group_merge}` : '';
}

/** Whether no apt variant of `problem` has a valid candidate on `target`. */
export function isUncovered(problem: Problem, target: TargetName): boolean {
  return benchVariants(problem).every((variant) => problemCoverage(problem, target, { variant }).valid === 0);
}

/** Why `problem` has no kernel on `target`: the rule that rejects the most candidates of its first apt variant. */
export function uncoveredReason(problem: Problem, target: TargetName): string {
  const variant = benchVariants(problem)[0]!;
  return problemCoverage(problem, target, { variant }).reason ?? `no valid ${variant} candidate on ${target}`;
}
