/**
 * @rocke/pipeline: the kernel cache, compile-all with ELF pruning, planning, bench/run seams,
 * .npy I/O, benchmark reports, and the `rocke` CLI (`main`).
 */
declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/pipeline. */
export const VERSION: string = __PACKAGE_VERSION__;

export { canonicalJson, isSha256Hex, sha256Hex, type JsonValue } from './hash.js';
export { isTempName, TEMP_SUFFIX, writeFileAtomic } from './atomic-file.js';
export {
  CacheIntegrityError,
  defaultCacheDir,
  identityId,
  KernelCache,
  type BlobRef,
  type BlobStatus,
  type CacheEntry,
  type CodeKind,
  type IntegrityKind,
  type KernelIdentity,
  type PruneMark,
} from './cache/cache.js';
export {
  gcCache,
  listCache,
  pruneCache,
  verifyCache,
  type CacheListRow,
  type EntryFilter,
  type GcReport,
  type PruneCacheOptions,
  type PruneCacheReport,
  type VerifyProblem,
  type VerifyReport,
} from './cache/cache-maintenance.js';
export { isTargetName, LlvmToolchain, TARGETS, ToolError, type CompiledCode, type KernelCompiler, type TargetName } from './compile/llvm-toolchain.js';
export { pruneInputOf, type BuiltKernel, type Family, type KernelCandidate, type PruneDecision, type PruneInput, type Pruner } from './compile/family.js';
export { elfPrunePruner, specWavesPerEu, twinKeyOf } from './compile/elf-prune-pruner.js';
export { axpyFamily, type AxpyFamilyOptions, type AxpySpec } from './compile/families/axpy.js';
export { SPLIT_REDUCE_VARIANT, splitReduceFamily } from './compile/families/split-reduce.js';
export { BUILDABLE_VARIANTS, CONV_DIRECT_FAMILY, convDirectFamily, describeConvSpec, type ConvDirectFamilyOptions } from './compile/families/conv-direct.js';
export { problemSetFamily } from './compile/families/conv-direct.js';
export { formatKeptKernels, keptKernelRows, type KeptKernelRow } from './compile/kept-kernels.js';
export { runPool } from './pool.js';
export {
  compileAll,
  type CompileAllOptions,
  type CompileAllProgress,
  type CompileAllReport,
  type CompileFailure,
  type FailureStage,
  type JobStatus,
} from './compile/compile-all.js';
export { compileProgress, type ProgressSink } from './cli/progress.js';
export { formatBytes, formatDuration, formatTable, type Align } from './table.js';
export { NpyFormatError, readNpy, writeNpy, type NpyArray, type NpyDtype } from './npy.js';
export {
  benchRowSchema,
  geometricMean,
  renderBenchHtml,
  renderBenchSvg,
  summarizeBench,
  type BenchRow,
  type BenchSummary,
  type ClassSummary,
  type RatedBenchRow,
} from './bench/bench-report.js';
export { problemFromValues, PROBLEM_OPTIONS } from './cli/problem-input.js';
export { planProblem, type PlanReport } from './cli/plan-command.js';
export { readMiopenFile, readSuite } from './cli/problem-input.js';
export { DEFAULT_COMPILE_TARGET } from './cli/compile-all-command.js';
export { runProblem, operandBits } from './cli/run-command.js';
export { UsageError, type CliIo } from './io.js';
export type { CliDeps } from './cli/deps.js';
export type { BenchRequest, RunRequest } from './bench/requests.js';
export { defaultDeps } from './cli/wiring.js';
export { main, processIo, USAGE } from './cli/main.js';
