/**
 * The bench order of one problem's candidates: the cost model's predicted time (cost-model.ts),
 * the same model the ranker chooses with, so a capped bench keeps the candidates the model
 * expects to win; and the split counts worth timing for split_c.
 */
import { costLine, defaultCoefficients, estimateCost, type CostCoefficients, type CostEstimate } from './cost-model.js';
import { PlanError } from './plan-error.js';
import type { Problem } from './problem.js';
import { kernelName, type Spec } from './spec.js';
import { spillFilter } from './spill.js';
import { cheapestSplit, chooseSplits, splitOptions } from './split-chooser.js';

/** Why a candidate sits where it does in the bench order: its predicted time and the terms behind it. */
export interface CandidateScore {
  readonly kernelName: string;
  /** Predicted time in microseconds (at `splits` for split_c): the sort key, lower first. */
  readonly predictedUs: number;
  /** The cost model's terms and launch facts. */
  readonly cost: CostEstimate;
  /** split_c: the planner's split count (the lowest prediction of every feasible count). */
  readonly splits?: number;
  /** The cost as one line (the candidate's reason in `explain`). */
  readonly reason: string;
}

/**
 * Scores one spec for one problem with the cost model (coefficients default to the committed fit
 * for the spec's target). A split_c spec is scored at its planner's count (`chooseSplits`, the
 * lowest prediction over every feasible count, hence also over {@link splitTrials}); it throws a
 * PlanError when no split count is feasible.
 */
export function scoreCandidate(spec: Spec, problem: Problem, coefficients: CostCoefficients = defaultCoefficients(spec.target)): CandidateScore {
  const { splits, cost } = spec.variant === 'split_c' ? cheapestSplit(spec, problem, coefficients) : { splits: 1, cost: estimateCost(spec, problem, 1, coefficients) };
  // The reason line is written when read: rankings of many candidates show few of them.
  let reason: string | undefined;
  return {
    kernelName: kernelName(spec),
    predictedUs: cost.us,
    cost,
    ...(spec.variant === 'split_c' ? { splits } : {}),
    get reason() {
      return (reason ??= costLine(cost));
    },
  };
}

/** Options of {@link orderCandidates}. */
export interface OrderOptions {
  /** Keep at most this many (default: all). */
  readonly cap?: number;
  /** Keep specs the spill heuristic drops (default false: they are likely to spill on sm_90). */
  readonly keepSpilling?: boolean;
  /** Cost coefficients (default: the committed fit per target). */
  readonly coefficients?: CostCoefficients;
}

/**
 * The deterministic bench order of one problem's candidates, and the capped subset: conv-direct's
 * spill heuristic drops likely spillers (unless `keepSpilling`), split_c specs with no feasible
 * split count are left out, the rest sort by predicted time (lower first), then kernel name; the
 * first `cap` are kept. Specs of every variant and atom compete on the one time scale. Same specs
 * and problem → same list, in the same order.
 */
export function orderCandidates(specs: readonly Spec[], problem: Problem, options: OrderOptions = {}): { spec: Spec; score: CandidateScore }[] {
  const cap = options.cap ?? Infinity;
  if (cap !== Infinity && (!Number.isInteger(cap) || cap < 0)) throw new RangeError(`cap must be a non-negative integer (got ${cap})`);
  const pool = options.keepSpilling ? [...specs] : spillFilter(specs).kept;
  const scored: { spec: Spec; score: CandidateScore }[] = [];
  for (const spec of pool) {
    try {
      scored.push({ spec, score: scoreCandidate(spec, problem, options.coefficients) });
    } catch (err) {
      if (!(err instanceof PlanError)) throw err;
    }
  }
  scored.sort((a, b) => a.score.predictedUs - b.score.predictedUs || (a.score.kernelName < b.score.kernelName ? -1 : a.score.kernelName > b.score.kernelName ? 1 : 0));
  return scored.slice(0, cap);
}

/** Most split counts the bench times per split_c candidate. */
export const MAX_SPLIT_TRIALS = 6;

/** The bench's split window around the planner's choice: from a quarter of it to eight times it. */
export const SPLIT_TRIAL_WINDOW = { below: 4, above: 8 } as const;

/**
 * Split counts the bench times for one split_c spec on one problem: the planner's choice first,
 * then the other feasible counts (conv-direct's `splitOptions`: slices of whole ck runs, uneven ones included, the
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
