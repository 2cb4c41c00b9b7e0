/**
 * The ranker: orders a problem's candidates by a linear model over {@link rankerFeatures}, fitted
 * (ranker/fit.ts) on measured times. It predicts log2 time up to a per-problem constant, which is
 * all a choice between candidates of one problem needs.
 */
import { z } from 'zod';
import { PlanError } from '../plan-error.js';
import type { Problem } from '../problem.js';
import { kernelName, type Spec } from '../spec.js';
import { splitTrials } from '../ranking.js';
import { RANKER_FEATURES, rankerFeatures } from './features.js';
import { FITTED_RANKER } from './model.generated.js';

/** A fitted ranker: one weight per feature (raw units), and what it was fitted on. */
export const RankerModelSchema = z
  .object({
    format: z.literal(1),
    features: z.array(z.string()),
    weights: z.array(z.number()),
    lambda: z.number().nonnegative(),
    /** Relative times above 2^clampLog2 counted as 2^clampLog2 in the fit (slow outliers matter less). */
    clampLog2: z.number().positive(),
    source: z
      .object({ device: z.string(), target: z.string(), data: z.string(), shapes: z.array(z.string()), rows: z.number().int().nonnegative() })
      .strict(),
  })
  .strict()
  .refine((m) => m.features.length === m.weights.length, 'one weight per feature');

export type RankerModel = z.infer<typeof RankerModelSchema>;

/** The model committed beside this file (fitted on H200 bench rows by ranker/fit.test.ts). */
export function defaultRankerModel(): RankerModel {
  return RankerModelSchema.parse(FITTED_RANKER);
}

/** The model's score of one candidate: predicted log2 time, up to the problem's constant. */
export function rankerScore(model: RankerModel, spec: Spec, problem: Problem, splits = 1): number {
  if (model.features.join() !== RANKER_FEATURES.join()) {
    throw new Error(`the ranker model's features (${model.features.join(', ')}) are not this build's (${RANKER_FEATURES.join(', ')}): refit it`);
  }
  const f = rankerFeatures(spec, problem, splits);
  let score = 0;
  for (let i = 0; i < f.length; i++) score += model.weights[i]! * f[i]!;
  return score;
}

/** One ranked candidate: the spec, its split count (split_c) and its predicted time relative to the best. */
export interface RankedCandidate {
  readonly spec: Spec;
  readonly kernelName: string;
  readonly splits?: number;
  readonly score: number;
  /** Predicted time / the best candidate's predicted time (1 for the first). */
  readonly relative: number;
}

/**
 * Orders `specs` for `problem` by predicted time, fastest first (ties: kernel name, then fewer
 * splits). split_c specs are weighed at each of conv-direct's `splitTrials`; their best count is
 * kept (the counts the bench times, so the model never extrapolates far from its data); a split_c
 * spec with no feasible count is left out. The specs are the problem's valid candidates (validated
 * on the batch chunk a launch runs, as `problemCandidates` does).
 */
export function rankerOrder(specs: readonly Spec[], problem: Problem, model: RankerModel = defaultRankerModel()): RankedCandidate[] {
  const scored: Omit<RankedCandidate, 'relative'>[] = [];
  for (const spec of specs) {
    const name = kernelName(spec);
    if (spec.variant !== 'split_c') {
      scored.push({ spec, kernelName: name, score: rankerScore(model, spec, problem) });
      continue;
    }
    let counts: number[];
    try {
      counts = splitTrials(spec, problem);
    } catch (err) {
      if (err instanceof PlanError) continue;
      throw err;
    }
    const best = counts.map((splits) => ({ splits, score: rankerScore(model, spec, problem, splits) })).sort((a, b) => a.score - b.score || a.splits - b.splits)[0]!;
    scored.push({ spec, kernelName: name, splits: best.splits, score: best.score });
  }
  scored.sort((a, b) => a.score - b.score || (a.kernelName < b.kernelName ? -1 : a.kernelName > b.kernelName ? 1 : 0));
  const top = scored[0]?.score ?? 0;
  return scored.map((c) => ({ ...c, relative: 2 ** (c.score - top) }));
}

/** One line that says why the ranker chose its first candidate. */
export function rankerExplain(ranked: readonly RankedCandidate[], model: RankerModel): string {
  const first = ranked[0];
  if (!first) return 'ranker: no candidate to rank';
  const next = ranked[1];
  const src = model.source;
  return (
    `ranker: ${first.kernelName}${first.splits !== undefined ? ` splits ${first.splits}` : ''} has the lowest predicted time of ${ranked.length} candidate(s)` +
    `${next ? ` (next: ${next.relative.toFixed(2)}x, ${next.kernelName})` : ''}; model fitted on ${src.rows} ${src.device} rows of ${src.shapes.length} shapes (${src.target})`
  );
}
