/**
 * The ranker: orders a problem's candidates by the cost model's predicted time (cost-model.ts)
 * under coefficients fitted (ranker/fit.ts) on measured times.
 */
import { z } from 'zod';
import { costLine, estimateCost, type CostEstimate } from '../cost-model.js';
import type { Problem } from '../problem.js';
import { orderCandidates } from '../ranking.js';
import type { Spec } from '../spec.js';
import { TARGET_NAMES } from '../targets.js';
import { FITTED_RANKER } from './model.generated.js';

/** A fitted ranker: the cost model's coefficients for one target, and what they were fitted on. */
export const RankerModelSchema = z
  .object({
    format: z.literal(2),
    target: z.enum(TARGET_NAMES),
    /** Coefficient per cost term (`mma:<atom class>` per class); a missing key is 1, the roofline. */
    coefficients: z.record(z.string(), z.number().positive()),
    fit: z.object({ lambda: z.number().nonnegative(), anchor: z.number().nonnegative(), weightPower: z.number().nonnegative() }).strict(),
    source: z.object({ device: z.string(), data: z.string(), shapes: z.array(z.string()), rows: z.number().int().nonnegative() }).strict(),
  })
  .strict();

export type RankerModel = z.infer<typeof RankerModelSchema>;

/** The model committed beside this file (fitted on H200 bench rows by ranker/fit.test.ts). */
export function defaultRankerModel(): RankerModel {
  return RankerModelSchema.parse(FITTED_RANKER);
}

/** The coefficients a model gives `spec`'s target: its own when fitted there, else the roofline (none). */
function coefficientsFor(model: RankerModel, spec: Spec): Readonly<Record<string, number>> {
  return model.target === spec.target ? model.coefficients : {};
}

/** The model's estimate of one candidate. */
export function rankerEstimate(model: RankerModel, spec: Spec, problem: Problem, splits = 1): CostEstimate {
  return estimateCost(spec, problem, splits, coefficientsFor(model, spec));
}

/** The model's score of one candidate: log2 of its predicted time in microseconds. */
export function rankerScore(model: RankerModel, spec: Spec, problem: Problem, splits = 1): number {
  return Math.log2(rankerEstimate(model, spec, problem, splits).us);
}

/** One ranked candidate: the spec, its split count (split_c), its predicted cost and time relative to the best. */
export interface RankedCandidate {
  readonly spec: Spec;
  readonly kernelName: string;
  readonly splits?: number;
  /** log2 of the predicted microseconds. */
  readonly score: number;
  readonly cost: CostEstimate;
  /** Predicted time / the best candidate's predicted time (1 for the first). */
  readonly relative: number;
}

/**
 * Orders `specs` for `problem` by predicted time, fastest first: conv-direct's bench order
 * (`orderCandidates`, spillers kept) under the model's coefficients, so the ranker's choice is the
 * bench's first candidate. split_c specs carry their planner's split count (the lowest prediction);
 * a split_c spec with no feasible count is left out. Specs of any variant compete on the one scale.
 */
export function rankerOrder(specs: readonly Spec[], problem: Problem, model: RankerModel = defaultRankerModel()): RankedCandidate[] {
  const target = specs[0]?.target;
  const ordered = orderCandidates(specs, problem, { keepSpilling: true, coefficients: target === model.target ? model.coefficients : {} });
  const top = ordered[0]?.score.predictedUs ?? 1;
  return ordered.map(({ spec, score }) => ({
    spec,
    kernelName: score.kernelName,
    ...(score.splits !== undefined ? { splits: score.splits } : {}),
    score: Math.log2(score.predictedUs),
    cost: score.cost,
    relative: score.predictedUs / top,
  }));
}

/** Why the ranker chose its first candidate: one line for the choice, one with the cost terms of the first and the runner-up. */
export function rankerExplain(ranked: readonly RankedCandidate[], model: RankerModel): string[] {
  const first = ranked[0];
  if (!first) return ['ranker: no candidate to rank'];
  const next = ranked[1];
  const src = model.source;
  const fitted = first.spec.target === model.target ? `coefficients fitted on ${src.rows} ${src.device} rows of ${src.shapes.length} shapes` : `roofline coefficients (no rows for ${first.spec.target})`;
  return [
    `ranker: ${first.kernelName}${first.splits !== undefined ? ` splits ${first.splits}` : ''} has the lowest predicted time of ${ranked.length} candidate(s)` +
      `${next ? ` (next: ${next.relative.toFixed(2)}x, ${next.kernelName})` : ''}; cost model with ${fitted}`,
    `  chosen: ${costLine(first.cost)}`,
    ...(next ? [`  next:   ${costLine(next.cost)}`] : []),
  ];
}
