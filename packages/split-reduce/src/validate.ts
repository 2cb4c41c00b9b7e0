/**
 * Spec validation. `validate()` never throws: malformed input and every rule violation come back
 * as a reason. Positivity is checked before anything divides by a field.
 */
import { getTarget, isBareEpilogue } from '@rocke/ir';
import type { z } from 'zod';
import { ELEMENTS_PER_LOAD, SplitReduceSpecSchema, type SplitReduceSpec } from './spec.js';

/** Outcome of {@link validate}: the parsed spec, or why it is not a valid spec. */
export type Validation = { ok: true; spec: SplitReduceSpec } | { ok: false; reason: string };

/**
 * Most output elements one thread may fold: it keeps that many fp32 accumulators plus the same
 * number of freshly loaded values live, so 32 keeps the loop within 64 registers per lane.
 */
export const MAX_OUTPUTS_PER_THREAD = 32;
/** Most fp32 values one thread may have loaded but not yet added (outputsPerThread × slicesPerStep). */
export const MAX_VALUES_IN_FLIGHT = 64;

/** One line naming the first offending field of a zod error. */
export function zodReason(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid spec';
  const where = issue.path.length ? issue.path.map(String).join('.') : 'spec';
  return `${where}: ${issue.message}`;
}

/** Checks a spec (any input). Returns the typed spec when valid, else the first reason it is not. */
export function validate(input: unknown): Validation {
  const parsed = SplitReduceSpecSchema.safeParse(input);
  if (!parsed.success) return { ok: false, reason: zodReason(parsed.error) };
  const spec = parsed.data;
  const reason = ruleViolation(spec);
  return reason === null ? { ok: true, spec } : { ok: false, reason };
}

function ruleViolation(s: SplitReduceSpec): string | null {
  if (s.threads < 1) return `threads must be >= 1 (got ${s.threads})`;
  if (s.outputsPerThread < 1) return `outputsPerThread must be >= 1 (got ${s.outputsPerThread})`;
  const target = getTarget(s.target);
  if (s.threads > target.maxThreadsPerBlock) return `threads ${s.threads} exceeds ${s.target}'s ${target.maxThreadsPerBlock} threads per workgroup`;
  if (s.threads % target.waveSize !== 0) {
    return `threads ${s.threads} is not a multiple of ${s.target}'s wave size ${target.waveSize} (partial waves waste lanes)`;
  }
  if (s.outputsPerThread % s.vectorWidth !== 0) {
    return `outputsPerThread ${s.outputsPerThread} is not a multiple of vectorWidth ${s.vectorWidth} (a thread folds whole vector groups)`;
  }
  if (s.outputsPerThread > MAX_OUTPUTS_PER_THREAD) {
    return `outputsPerThread ${s.outputsPerThread} exceeds ${MAX_OUTPUTS_PER_THREAD} (${s.outputsPerThread / ELEMENTS_PER_LOAD} 16-byte loads per slice per thread; accumulators would crowd out occupancy)`;
  }
  if (s.epilogue && isBareEpilogue(s.epilogue)) return 'epilogue: a bare epilogue (act none, no bias, no residual) is written by leaving the field out';
  if (s.outputsPerThread * s.slicesPerStep > MAX_VALUES_IN_FLIGHT) {
    return `outputsPerThread ${s.outputsPerThread} × slicesPerStep ${s.slicesPerStep} = ${s.outputsPerThread * s.slicesPerStep} loaded values per thread exceed ${MAX_VALUES_IN_FLIGHT} (registers)`;
  }
  return null;
}
