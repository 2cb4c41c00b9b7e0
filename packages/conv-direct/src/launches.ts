/**
 * The full launch sequence of one problem with one spec: every conv launch of the plan and, for
 * split_c, the split-reduce launches that fold each conv launch's workspace slices into y before
 * the next conv launch reuses the workspace. A runtime binds the buffer views, packs each launch's
 * values with its `signature` and launches them in order.
 */
import { epilogueTag, getTarget, NO_EPILOGUE, type Epilogue, type SequencedLaunch as Launch } from '@rocke/ir';
import { kernargTable as reduceKernargTable, planReduce, SplitReduceSpecSchema, type SplitReduceSpec } from '@rocke/split-reduce';
import { kernargTable, type BufferName } from './abi.js';
import type { Dtype, Problem } from './problem.js';
import { plan, type LaunchPlan, type PlanOptions } from './plan.js';
import type { Spec } from './spec.js';

/**
 * One launch in stream order: the conv (the spec's kernel) or the split-reduce helper. Pointer
 * arguments are views of the bound buffers (x, w, y, ws, bias, residual); a launch is programmatic
 * where the target has grid dependency control, whose conv and split-reduce kernels both wait for
 * the grid ahead at entry.
 */
export type SequencedLaunch = Launch<'conv' | 'reduce', BufferName>;

/** A problem's conv plan and its launches in stream order. */
export interface LaunchSequence {
  readonly plan: LaunchPlan;
  readonly launches: readonly SequencedLaunch[];
}

/** Options of {@link launchSequence}. */
export interface LaunchSequenceOptions extends PlanOptions {
  /**
   * split_c: the split-reduce helper spec that folds the slices (see {@link chooseReduceHelper});
   * with a fused epilogue it carries the epilogue (the conv spec does not), and `epilogue` holds
   * its scalars as for the other variants.
   */
  reduce?: SplitReduceSpec;
}

/**
 * Plans `problem` with `spec` (split_c: the split chooser picks the count unless `splits` is given)
 * and lists every launch, each split_c conv launch followed by its split-reduce launches.
 */
export function launchSequence(spec: Spec, problem: Problem, options: LaunchSequenceOptions = {}): LaunchSequence {
  const { reduce, ...planOptions } = options;
  const convPlan = plan(spec, problem, spec.target, planOptions);
  const programmatic = getTarget(spec.target).gridDependency !== undefined;
  const convSignature = kernargTable(spec.variant, spec.epilogue);
  const reduceSignature = reduceKernargTable(reduce?.epilogue);
  const scalars = planOptions.epilogue ?? {};
  // split_c's epilogue (the reduce spec's) is applied per output channel of the whole problem.
  const reduceEpilogue = reduce?.epilogue ? { epilogue: reduce.epilogue, epilogueArgs: { channels: problem.K, ...scalars, alpha: scalars.alpha ?? 1 } } : {};
  const launches: SequencedLaunch[] = [];
  convPlan.launches.forEach((l, index) => {
    launches.push({ role: 'conv', kernelName: l.kernelName, grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, signature: convSignature, kernargs: l.kernargs, programmatic });
    for (const step of convPlan.reduce?.filter((r) => r.launchIndex === index) ?? []) {
      if (!reduce) throw new Error(`${convPlan.kernelName} is split_c: it needs a split-reduce helper kernel for ${step.dtype}`);
      const rp = planReduce({ count: step.elements, splits: step.splits, dtype: step.dtype, target: spec.target, spec: reduce, wsOffsetBytes: step.wsOffsetBytes, yOffsetBytes: step.yOffsetBytes, ...reduceEpilogue });
      for (const r of rp.launches) launches.push({ role: 'reduce', kernelName: r.kernelName, grid: r.grid, block: r.block, sharedBytes: 0, signature: reduceSignature, kernargs: r.kernargs, programmatic });
    }
  });
  return { plan: convPlan, launches };
}

/**
 * The split-reduce helper a split_c conv of `dtype` uses among `specs` (e.g. those compiled): the
 * one of that dtype and that fused epilogue (none: a bare helper) with the widest vectors (fewest
 * loads per output). Undefined when none fits.
 */
export function chooseReduceHelper<T extends { spec: unknown }>(helpers: readonly T[], dtype: Dtype, epilogue?: Epilogue): { helper: T; spec: SplitReduceSpec } | undefined {
  const tag = epilogueTag(epilogue ?? NO_EPILOGUE);
  const fits = helpers
    .map((helper) => ({ helper, parsed: SplitReduceSpecSchema.safeParse(helper.spec) }))
    .flatMap((c) => (c.parsed.success && c.parsed.data.dtype === dtype && epilogueTag(c.parsed.data.epilogue ?? NO_EPILOGUE) === tag ? [{ helper: c.helper, spec: c.parsed.data }] : []))
    .sort((a, b) => b.spec.vectorWidth - a.spec.vectorWidth);
  return fits[0];
}
