/**
 * The split-reduce spec: which kernel binary to build. It never mentions a convolution shape, so
 * one binary (one cache entry) serves every problem of its dtype and vector width on its target.
 */
import { ACTIVATIONS, BIAS_KINDS, epilogueTag, TARGET_NAMES, type TargetName } from '@rocke/ir';
import { z } from 'zod';

/** Output element types. */
export const DTYPES = ['fp16', 'bf16'] as const;
export type Dtype = (typeof DTYPES)[number];

/** Targets the kernel is written for: every @rocke/ir target (re-exported for callers). */
export { TARGET_NAMES, type TargetName };

/** fp32 elements a thread reads per slice per vector group: 4 = one 16-byte load, 8 = two. */
export const VECTOR_WIDTHS = [4, 8] as const;
export type VectorWidth = (typeof VECTOR_WIDTHS)[number];

/** Bytes of one output element. */
export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = { fp16: 2, bf16: 2 };
/** Bytes of one workspace (fp32 partial sum) element. */
export const WS_ELEMENT_BYTES = 4;
/** fp32 elements in one 16-byte load. */
export const ELEMENTS_PER_LOAD = 4;

/**
 * The spec. Strict: a missing or unknown field is an error, never a silent default.
 * - `threads`: workgroup size (a multiple of the target's wave size, at most 1024);
 * - `outputsPerThread`: output elements each thread folds, in groups of `vectorWidth` consecutive
 *   elements; group `g` of thread `t` in workgroup `w` starts at element
 *   `w*threads*outputsPerThread + g*threads*vectorWidth + t*vectorWidth` (coalesced per group);
 * - `slicesPerStep`: slices whose loads are issued together before they are added (in order), so
 *   that many memory round trips overlap instead of one per slice;
 * - `epilogue` (optional): the conv's fused epilogue (@rocke/ir's `Epilogue`), applied to each
 *   fixed-order sum before the cast. Absent: the bare fold; present, it must do something (one
 *   spelling per kernel, so one name and one cache entry).
 */
export const SplitReduceSpecSchema = z
  .object({
    dtype: z.enum(DTYPES),
    vectorWidth: z.union([z.literal(4), z.literal(8)]),
    target: z.enum(TARGET_NAMES),
    threads: z.number().int(),
    outputsPerThread: z.number().int(),
    slicesPerStep: z.union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)]),
    epilogue: z.object({ act: z.enum(ACTIVATIONS), bias: z.enum(BIAS_KINDS), residual: z.boolean() }).strict().optional(),
  })
  .strict();

export type SplitReduceSpec = z.infer<typeof SplitReduceSpecSchema>;

/** Threads per workgroup of the specs compile-all builds. */
export const DEFAULT_THREADS = 256;
/** Slices loaded per step in the specs compile-all builds. */
export const DEFAULT_SLICES_PER_STEP = 4;

/**
 * The spec compile-all builds for (target, dtype, vectorWidth): 256 threads, one vector group per
 * thread (many small workgroups, so the small reduces of small-map convolutions still spread over
 * every CU/SM), four slices in flight per step.
 */
export function defaultSpec(target: TargetName, dtype: Dtype, vectorWidth: VectorWidth): SplitReduceSpec {
  return { dtype, vectorWidth, target, threads: DEFAULT_THREADS, outputsPerThread: vectorWidth, slicesPerStep: DEFAULT_SLICES_PER_STEP };
}

/** Every spec compile-all builds for a target: each dtype × vector width, in a fixed order. */
export function helperSpecs(target: TargetName): SplitReduceSpec[] {
  return DTYPES.flatMap((dtype) => VECTOR_WIDTHS.map((vw) => defaultSpec(target, dtype, vw)));
}

/** Output elements one workgroup covers. */
export function tileElements(spec: SplitReduceSpec): number {
  return spec.threads * spec.outputsPerThread;
}

/**
 * The kernel symbol: deterministic, and different for any two different specs
 * (e.g. `rocke_split_reduce_sm_90_bf16_v4_t256_o4_u4`, `..._u4_epsilu_b32_res` with an epilogue).
 */
export function kernelName(spec: SplitReduceSpec): string {
  const { target, dtype, vectorWidth, threads, outputsPerThread, slicesPerStep } = spec;
  const base = `rocke_split_reduce_${target}_${dtype}_v${vectorWidth}_t${threads}_o${outputsPerThread}_u${slicesPerStep}`;
  return spec.epilogue ? `${base}_${epilogueTag(spec.epilogue)}` : base;
}

/** Cache namespace shared by conv helper kernels. */
export const CACHE_NAMESPACE = 'direct_fwd_helper';

/** What the pipeline's kernel cache keys a split-reduce binary by. No conv shape appears in it. */
export interface CacheIdentity {
  readonly namespace: typeof CACHE_NAMESPACE;
  readonly name: string;
  readonly dtype: Dtype;
  readonly vectorWidth: VectorWidth;
  readonly target: TargetName;
}

/** The cache identity of a spec's binary: namespace `direct_fwd_helper`, keyed by dtype and vector width. */
export function cacheIdentity(spec: SplitReduceSpec): CacheIdentity {
  return { namespace: CACHE_NAMESPACE, name: kernelName(spec), dtype: spec.dtype, vectorWidth: spec.vectorWidth, target: spec.target };
}
