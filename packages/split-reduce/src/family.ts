import { getTarget, VERSION as IR_VERSION, type Epilogue, type Family, type KernelCandidate } from '@rocke/ir';
import { emitSplitReduce } from './kernel.js';
import { CACHE_NAMESPACE, helperSpecs, SplitReduceSpecSchema, TARGET_NAMES, type SplitReduceSpec, type TargetName } from './spec.js';

declare const __PACKAGE_VERSION__: string;

/** Variant name of split-reduce entries (one kernel kind; the spec carries dtype and vector width). */
export const SPLIT_REDUCE_VARIANT = 'split_reduce';

/**
 * The split-reduce helper kernels as a kernel family (`direct_fwd_helper`): every spec of
 * `helperSpecs(target)` (each dtype × vector width), keyed by spec only, so one binary serves every
 * split_c conv of that dtype. With `epilogue`, the same specs fused with it (what a fused split_c
 * conv needs).
 */
export function splitReduceFamily(epilogue?: Epilogue): Family<SplitReduceSpec> {
  return {
    name: CACHE_NAMESPACE,
    targets: TARGET_NAMES,
    emitter: `@rocke/split-reduce@${__PACKAGE_VERSION__} @rocke/ir@${IR_VERSION}`,
    schema: SplitReduceSpecSchema,
    candidates(target: TargetName): KernelCandidate<SplitReduceSpec>[] {
      return helperSpecs(target).map((spec) => ({ variant: SPLIT_REDUCE_VARIANT, spec: { ...spec, ...(epilogue ? { epilogue } : {}) } }));
    },
    build({ spec }: KernelCandidate<SplitReduceSpec>, target: TargetName, flavor: string) {
      if (spec.target !== target) throw new TypeError(`split-reduce spec is for ${spec.target}, not ${target}`);
      const irFlavor = getTarget(target).flavor;
      if (irFlavor !== flavor) throw new TypeError(`split-reduce emits ${irFlavor} IR; the compiler expects ${flavor}`);
      return emitSplitReduce(spec);
    },
    // dtype, vector width, threads × outputs per thread, slices per step.
    describe: (s: SplitReduceSpec) => `${s.dtype} vec${s.vectorWidth} ${s.threads}t x${s.outputsPerThread} s${s.slicesPerStep}`,
  };
}
