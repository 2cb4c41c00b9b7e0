import type { Epilogue } from '@rocke/ir';
import type { EpilogueScalars } from './abi.js';
import { problemCandidates } from './candidates.js';
import { chooseReduceHelper, launchSequence, type LaunchSequence } from './launches.js';
import type { Problem } from './problem.js';
import { splitTrials } from './ranking.js';
import { benchVariants, orderAcrossVariants } from './selection.js';
import type { Spec, Variant } from './spec.js';
import type { TargetName } from './targets.js';

/**
 * The launch sequences a bench times for one candidate of a problem: the plan as launched, except
 * split_c, whose split count is a runtime argument (one binary serves every count): the chooser's
 * count and its neighbours (`splitTrials`), each followed by the reduce launches of the widest
 * helper of the problem's dtype among `helpers`. `epilogue`: the scalars of a fused epilogue;
 * `shape`: its shape, which split_c's helper must carry (none: a bare helper).
 */
export function benchTrials(spec: Spec, problem: Problem, helpers: readonly { spec: unknown }[], epilogue?: EpilogueScalars, shape?: Epilogue): LaunchSequence[] {
  const fused = epilogue ? { epilogue } : {};
  if (spec.variant !== 'split_c') return [launchSequence(spec, problem, fused)];
  const reduce = chooseReduceHelper(helpers, problem.dtype, shape);
  if (!reduce) throw new Error(`no split-reduce helper kernel for ${problem.dtype} in the manifest`);
  return splitTrials(spec, problem).map((splits) => launchSequence(spec, problem, { splits, reduce: reduce.spec, ...fused }));
}

/** What {@link compiledSelection} found for a problem. */
export interface CompiledSelection {
  /** Each apt variant with its valid candidates and how many of them are compiled. */
  variants: { variant: Variant; valid: number; compiled: number }[];
  /** The compiled candidates picked, in bench order, with their predicted time (µs). */
  picks: { spec: Spec; kernelName: string; predictedUs: number }[];
}

/**
 * The bench selection of a problem among kernels already compiled (a cache filled by an earlier
 * compile): the valid candidates of its apt variants that `isCompiled`, in the order and under the
 * cap that `selectProblemSpecs` uses (`orderAcrossVariants`).
 */
export function compiledSelection(problem: Problem, target: TargetName, cap: number, isCompiled: (spec: Spec) => boolean): CompiledSelection {
  const variants = benchVariants(problem);
  const valid = variants.map((variant) => problemCandidates(problem, target, { variant }).valid);
  const compiled = valid.map((specs) => specs.filter(isCompiled));
  return {
    variants: variants.map((variant, i) => ({ variant, valid: valid[i]!.length, compiled: compiled[i]!.length })),
    picks: orderAcrossVariants(compiled, problem, cap).map((o) => ({ spec: o.spec, kernelName: o.score.kernelName, predictedUs: o.score.predictedUs })),
  };
}
