/**
 * @rocke/pipeline: the `rocke` CLI (`main`) and what it is made of that a program may use: the
 * kernel cache, compile-all over kernel families with ELF pruning, the GPU bench, .npy I/O and
 * benchmark reports. Test doubles and the smoke family are in `@rocke/pipeline/testing`.
 */
declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/pipeline. */
export const VERSION: string = __PACKAGE_VERSION__;

// The CLI.
export { main, processIo, USAGE } from './cli/main.js';
export { convPlanner, convRuntime, defaultDeps } from './cli/wiring.js';
export type { CliDeps } from './cli/deps.js';
export { UsageError, type CliIo } from './io.js';
export type { BenchRequest } from './bench/requests.js';
export { gpuRun, runEpilogue, type RunRequest } from './api/run-conv.js';

// The kernel cache.
export { CacheIntegrityError, defaultCacheDir, identityId, KernelCache, type BlobRef, type CacheEntry, type CodeKind, type KernelIdentity, type PruneMark } from './cache/cache.js';
export { gcCache, listCache, pruneCache, verifyCache, type CacheListRow, type GcReport, type PruneCacheReport, type VerifyReport } from './cache/cache-maintenance.js';
export type { JsonValue } from './hash.js';

// Compiling kernel families.
export { compileAll, type CompileAllOptions, type CompileAllProgress, type CompileAllReport, type CompileFailure, type JobStatus } from './compile/compile-all.js';
export type { AnyFamily, AnyPruner, PruneDecision, PruneInput, Pruner } from './compile/family.js';
export { LlvmToolchain, type CompiledCode, type KernelCompiler, type TargetName } from './compile/llvm-toolchain.js';
export { elfPrunePruner } from './compile/elf-prune-pruner.js';

// The GPU bench, over a family's planner (convPlanner: conv-direct's).
export type { OpPlanner, OpRuntime, OpChoice, OpEpilogue, OpProblem, NamedOpProblem, PlannedSelection, PlannedSequence, PlannedLaunch, ReferenceCheck } from './planner.js';
export { benchPrep, type BenchPrepOptions, type BenchPrepResult } from './bench/prep.js';
export { gpuBench, type GpuBenchOptions } from './bench/gpu-bench.js';
export { readBenchManifest, type BenchManifest } from './bench/manifest.js';
export { benchRowSchema, renderBenchHtml, renderBenchSvg, summarizeBench, type BenchRow, type BenchSummary } from './bench/bench-report.js';

// Files.
export { NpyFormatError, readNpy, writeNpy, type NpyArray, type NpyDtype } from './npy.js';

// Dispatch without timing: tuning records, shards, merge, the catalog and openConv.
export { openConv, gpuRunConv, type ConvEpilogue, type ConvHandle, type ConvOpenOptions, type OpenConvOptions } from './cli/wiring.js';
export { openOp, type OpenOptions, type OpHandle, type RunOptions } from './api/open-conv.js';
export { buildCatalog, type CatalogReport } from './api/catalog.js';
export { cacheSource, catalogSource, openKernelSource, readCatalog, CATALOG_MANIFEST, type Catalog, type KernelSource, type SourceFamilies, type SourceKernel } from './api/kernel-source.js';
export { RecordStore, RecordIntegrityError, RECORD_SCHEMA_VERSION, betterRecord, recordKey, type TuningRecord } from './cache/records.js';
export { mergeCaches, type MergeReport } from './cache/merge.js';
export { inShard, parseShard, SHARD_INDEX_ENV, type Shard } from './compile/shard.js';
export { gpuTune, type TuneLine } from './bench/tune.js';
