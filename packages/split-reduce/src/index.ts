declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/split-reduce. */
export const VERSION: string = __PACKAGE_VERSION__;

export {
  CACHE_NAMESPACE, DEFAULT_SLICES_PER_STEP, DEFAULT_THREADS, DTYPE_BYTES, DTYPES, ELEMENTS_PER_LOAD, SplitReduceSpecSchema, TARGET_NAMES, VECTOR_WIDTHS,
  WS_ELEMENT_BYTES, cacheIdentity, defaultSpec, helperSpecs, kernelName, tileElements,
} from './spec.js';
export type { CacheIdentity, Dtype, SplitReduceSpec, TargetName, VectorWidth } from './spec.js';
export { MAX_OUTPUTS_PER_THREAD, MAX_VALUES_IN_FLIGHT, validate, zodReason } from './validate.js';
export type { Validation } from './validate.js';
export { SplitReduceError } from './errors.js';
export { KERNARG_TABLE, MAX_VIEW_BYTES, kernargTable, kernargValues, orderKernargs, resolveKernargs } from './abi.js';
export type { BufferRef, EpilogueArgs, KernargEntry, KernargType, KernargValue, ReduceLaunchArgs } from './abi.js';
export { buildSplitReduce, emitSplitReduce, kernelParams } from './kernel.js';
export { planReduce } from './plan.js';
export type { ReduceLaunch, ReducePlan, ReduceProblem } from './plan.js';
export { f32ToBf16Bits, f32ToF16Bits, foldSlices } from './fold.js';
export { SPLIT_REDUCE_VARIANT, splitReduceFamily } from './family.js';
