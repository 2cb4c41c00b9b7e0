/**
 * The GPU half of `rocke bench` / `rocke run`: bench-prep (compile and export a suite's kernels),
 * the bench (plan, launch, time with device events, verify, rank, join cuDNN) and run.
 * Re-export from the package index with `export * from './gpu/index.js'`.
 */
export { benchPrep, benchVariants, DEFAULT_PREP_CAP, SPLIT_C_MAX_PIXELS, type BenchPrepOptions, type BenchPrepResult } from './prep.js';
export { benchPrepCommand, BENCH_PREP_USAGE } from './prep-command.js';
export { fragmentLoadsPerMma, MAX_SPLIT_TRIALS, orderCandidates, scoreCandidate, SPLIT_TRIAL_WINDOW, splitTrials, type CandidateScore, type OrderOptions } from './select.js';
export {
  BENCH_MANIFEST,
  benchManifestSchema,
  parseBenchManifest,
  readBenchManifest,
  type BenchManifest,
  type ManifestCandidate,
  type ManifestHelper,
  type ManifestShape,
} from './manifest.js';
export {
  executePlan,
  GRAPH_WARM_REPLAYS,
  loadSpinKernel,
  MAX_QUEUED_LAUNCHES,
  median,
  preparePlan,
  SPIN_PTX,
  timePlan,
  type PlanBuffers,
  type PlanTiming,
  type ReadyLaunch,
  type ReadyPlan,
  type TimingOptions,
} from './execute.js';
export { FULL_CHECK_MAX_MACS, SAMPLE_POINTS, evenlySpaced, problemMacs, referenceCheck, type ReferenceCheck } from './reference-check.js';
export { benchShape, rankCandidates, type CandidateResult, type ShapeBenchOptions, type ShapeResult, type VerifyResult } from './bench-shape.js';
export { CUDNN_SCRIPT, findCudnnScript, parseCudnnRows, runCudnnBaseline, suiteShape, type CudnnRun, type SuiteShape } from './cudnn.js';
export { benchTable, CONTEXT_RETRIES, gpuBench, gpuRunConv, manifestFromCache, type BenchLine, type GpuBenchOptions } from './gpu-bench.js';
export { fakeConvKernel, fakeReduceKernel } from './fake-kernels.js';
