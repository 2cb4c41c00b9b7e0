/**
 * The conv kernel builder's entry: validates the spec and hands it to the builder of its variant
 * and atom — the depthwise kernel (depthwise.ts, no MMA), the warpgroup-MMA kernel (wgmma.ts) for
 * m64nNk16 (its whole-map and per-tap weight-ring forms in wgmma-whole-map.ts and wgmma-ring.ts), the per-wave MMA kernel (mma.ts) for the MFMA and mma.sync atoms. All open their
 * kernels through open.ts.
 */
import { getTarget, type Target } from '@rocke/ir';
import { kernelName, type Spec } from '../spec.js';
import { isWarpgroupAtom } from '../targets.js';
import { validate } from '../validate.js';
import { buildDepthwiseKernel } from './depthwise.js';
import { buildMmaConvKernel } from './mma.js';
import { ConvKernelError, type BuildMutation, type ConvKernel } from './open.js';
import { buildWgmmaConvKernel } from './wgmma.js';
import { WeightRingBuilder } from './wgmma-ring.js';
import { WholeMapBuilder } from './wgmma-whole-map.js';

export { ConvKernelError, SENTINEL_OFFSET, type BuildMutation, type ConvKernel, type FragmentLoad, type StagingSchedule } from './open.js';
export { irAtomName, weightSwizzle } from './mma.js';

/** Options for {@link buildConvKernel}. */
export interface BuildOptions {
  /** Use this target object (default: `getTarget(spec.target)`). */
  readonly target?: Target;
  /** Tests only: a deliberate defect, to show the numerics checks catch it. */
  readonly mutation?: BuildMutation;
}

/**
 * Builds the kernel of `spec`: a module holding one kernel named `kernelName(spec)` whose
 * parameters follow the variant's kernarg table. Throws {@link ConvKernelError} with the
 * validation reason for a spec `validate()` rejects.
 */
export function buildConvKernel(spec: Spec, options: BuildOptions = {}): ConvKernel {
  const v = validate(spec);
  if (!v.ok) throw new ConvKernelError(`cannot build ${safeName(spec)}: ${v.reason}`);
  const target = options.target ?? getTarget(spec.target);
  if (target.name !== spec.target) throw new ConvKernelError(`spec targets ${spec.target} but the target object is ${target.name}`);
  if (spec.variant === 'depthwise') return buildDepthwiseKernel(spec, target);
  if (isWarpgroupAtom(spec.atom)) return buildWgmmaConvKernel(spec, target, spec.whole_map ? WholeMapBuilder : spec.weight_ring ? WeightRingBuilder : undefined, options.mutation);
  return buildMmaConvKernel(spec, target, options.mutation);
}

function safeName(spec: Spec): string {
  try {
    return kernelName(spec);
  } catch {
    return 'spec';
  }
}
