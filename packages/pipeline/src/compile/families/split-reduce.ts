import { getTarget, VERSION as IR_VERSION, type Epilogue } from '@rocke/ir';
import { CACHE_NAMESPACE, SplitReduceSpecSchema, TARGET_NAMES, VERSION as SPLIT_REDUCE_VERSION, emitSplitReduce, helperSpecs, zodReason } from '@rocke/split-reduce';
import type { BuiltKernel, Family, KernelCandidate } from '../family.js';
import type { JsonValue } from '../../hash.js';
import type { TargetName } from '../llvm-toolchain.js';

/** Variant name of split-reduce entries (one kernel kind; the spec carries dtype and vector width). */
export const SPLIT_REDUCE_VARIANT = 'split_reduce';

/**
 * The split-reduce helper kernels as a compile-all family (`direct_fwd_helper`): every spec of
 * `helperSpecs(target)` (each dtype × vector width), keyed by spec only, so one binary serves every
 * split_c conv of that dtype. Specs are re-validated with the package's strict schema on build.
 * With `epilogue`, the same specs fused with it (what a fused split_c bench needs).
 */
export function splitReduceFamily(epilogue?: Epilogue): Family {
  return {
    name: CACHE_NAMESPACE,
    targets: TARGET_NAMES,
    emitter: `@rocke/split-reduce@${SPLIT_REDUCE_VERSION} @rocke/ir@${IR_VERSION}`,
    candidates(target: TargetName): KernelCandidate[] {
      return helperSpecs(target).map((spec) => ({ variant: SPLIT_REDUCE_VARIANT, spec: { ...spec, ...(epilogue ? { epilogue } : {}) } as unknown as JsonValue }));
    },
    build(candidate: KernelCandidate, target: TargetName, flavor: string): BuiltKernel {
      const parsed = SplitReduceSpecSchema.safeParse(candidate.spec);
      if (!parsed.success) throw new TypeError(`not a split-reduce spec: ${zodReason(parsed.error)}`);
      if (parsed.data.target !== target) throw new TypeError(`split-reduce spec is for ${parsed.data.target}, not ${target}`);
      const irFlavor = getTarget(target).flavor;
      if (irFlavor !== flavor) throw new TypeError(`split-reduce emits ${irFlavor} IR; the compiler expects ${flavor}`);
      return emitSplitReduce(parsed.data);
    },
    describe(spec: JsonValue): string {
      const parsed = SplitReduceSpecSchema.safeParse(spec);
      if (!parsed.success) return '?';
      const s = parsed.data;
      // dtype, vector width, threads × outputs per thread, slices per step.
      return `${s.dtype} vec${s.vectorWidth} ${s.threads}t x${s.outputsPerThread} s${s.slicesPerStep}`;
    },
  };
}
