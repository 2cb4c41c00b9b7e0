/**
 * @rocke/conv-direct, host side: problem and spec schemas, validation, candidate grids, the kernel
 * ABI, launch plans with batch chunking, and the split_c / group_merge planners. The IR kernel
 * builders live in src/kernel/.
 */
declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/conv-direct. */
export const VERSION: string = __PACKAGE_VERSION__;

export {
  ATOMS,
  ATOM_NAMES,
  I32_MAX,
  MAX_GRID,
  MAX_TENSOR_BYTES,
  CONV_ATOMS,
  TARGET_NAMES,
  isTargetName,
  isWarpgroupAtom,
  type AtomFacts,
  type AtomName,
  type TargetName,
} from './targets.js';
export {
  DTYPES,
  ELEMENT_BYTES,
  ProblemSchema,
  checkProblem,
  outputExtent,
  parseProblem,
  parseProblemFlags,
  problemGeometry,
  problemLabel,
  zodReason,
  type Dtype,
  type Problem,
  type ProblemGeometry,
  type ProblemResult,
} from './problem.js';
export { parseMiopenCommand } from './miopen-args.js';
export {
  SpecSchema,
  VARIANTS,
  X_VECTOR_ELEMS,
  canonicalSpecJson,
  haloExtent,
  ldsHaloColumn,
  ldsRowPixels,
  kernelName,
  parseSpec,
  specFromJson,
  specGeometry,
  stagedSpec,
  streamLds,
  reducedChannels,
  tapFold,
  wgmmaLds,
  weightRing,
  WEIGHT_RING_X_STAGES,
  WEIGHT_RING_MIN_STAGES,
  type WeightRing,
  type StreamLds,
  wgmmaStages,
  WGMMA_MAX_STAGES,
  type Spec,
  type SpecGeometry,
  type SpecResult,
  type WgmmaLds,
  type Variant,
  withEpilogue,
} from './spec.js';
export { launchGrid, type LaunchGrid } from './grid.js';
export { DEPTHWISE_PAIR, DEPTHWISE_STAGE_BATCH, DEPTHWISE_VECTOR, depthwiseGeometry, depthwiseLdsPad, depthwiseReadConflicts, type DepthwiseGeometry } from './depthwise-geometry.js';
export {
  DEPTHWISE_MAX_FILTER,
  DEPTHWISE_MIN_RESIDENT_THREADS,
  DEPTHWISE_MULTIPLIERS,
  DEPTHWISE_BLOCKS,
  DEPTHWISE_MAX_ROW_COLUMNS,
  depthwiseBlocks,
  DEPTHWISE_SMALL_THREADS,
  DEPTHWISE_THREADS,
  depthwiseGrid,
  depthwiseRegisterBudget,
  depthwiseIssueCost,
  depthwiseTileKs,
  DEPTHWISE_FMAS_PER_STAGED_BYTE,
  DEPTHWISE_MAX_TILE_K,
  DEPTHWISE_MAX_SPECS,
  DEPTHWISE_MAX_IMAGES,
  DEPTHWISE_IMAGE_TILED,
  DEPTHWISE_TILE_IMAGES,
  type DepthwiseChannels,
  depthwiseStagingEfficiency,
  isDepthwiseProblem,
} from './depthwise.js';
export { isPointwiseProblem, pointwisePixels, pointwisePixelTiles, pointwisePixelUtilization, pointwiseTilePixels, streamSlots, streamTilesPerWorkgroup } from './pointwise.js';
export {
  C_TAIL_RUNS,
  MAX_ACCUMULATORS_PER_LANE,
  MAX_STRIDE,
  OUTPUT_VECTOR,
  WORKSPACE_ELEMENT_BYTES,
  validate,
  type Validation,
  type ValidateOptions,
} from './validate.js';
export { SPILL_BUDGET_FRACTION, registerEstimate, spillFilter, spillReason, type RegisterEstimate } from './spill.js';
export {
  AOT_CAPABILITIES,
  POINTWISE_AOT_CAPABILITIES,
  AOT_PROBE_CHANNELS,
  AOT_PROBE_GROUPS,
  CK_CHOICES,
  DEFAULT_CHIPLET_CHUNK,
  DEFAULT_LDS_PAD,
  DEFAULT_SWIZZLE_WGM,
  GROUPED_TILE_K_CHOICES,
  GROUP_MERGE_CHOICES,
  MAX_WIDTH_MULTIPLE,
  TILE_H_CHOICES,
  TILE_K_CHOICES,
  WAVE_LAYOUTS,
  WGMMA_CK_CHOICES,
  WGMMA_LAYOUTS,
  WGMMA_TILE_CHOICES,
  WGMMA_TILE_K_CHOICES,
  COMPACT_TILE_H_CHOICES,
  aotCandidates,
  aotProbe,
  candidateGrid,
  defaultVariant,
  channelRun,
  channelTails,
  filterCandidates,
  fittedWidths,
  groupMergeChoices,
  problemCandidates,
  tileWidthCandidates,
  widthUnit,
  type CandidateSet,
  type Capability,
  type GridOptions,
  type ProblemCandidateOptions,
  type ProblemChannels,
} from './candidates.js';
export {
  KERNEL_ABI,
  KernargError,
  kernargLayout,
  kernargTable,
  kernargValues,
  orderKernargs,
  packKernargs,
  resolveKernargs,
  type BufferName,
  type BufferRef,
  type EpilogueScalars,
  type KernargBuffers,
  type KernargEntry,
  type KernargType,
  type KernargValue,
  type KernargValueOptions,
} from './abi.js';
export { residency, type Residency } from './residency.js';
export { PlanError } from './plan-error.js';
export { balancedChunks, MAX_PLAN_LAUNCHES, plan, type Launch, type LaunchPlan, type PlanOptions, type ReduceStep } from './plan.js';
export { chooseReduceHelper, launchSequence, type LaunchSequence, type LaunchSequenceOptions, type SequencedLaunch } from './launches.js';
export {
  DEFAULT_PROBLEMS,
  DEFAULT_SHAPE_CAP,
  SPLIT_C_MAX_PIXELS,
  benchVariants,
  capShares,
  orderAcrossVariants,
  variantReserve,
  retypeProblems,
  selectProblemSpecs,
  type NamedProblem,
  type SelectOptions,
  type ShapeSelection,
  type VariantSelection,
} from './selection.js';
export {
  MAX_SPLIT_TRIALS,
  SPLIT_TRIAL_WINDOW,
  orderCandidates,
  scoreCandidate,
  splitTrials,
  type CandidateScore,
  type OrderOptions,
} from './ranking.js';
export { fragmentLoadsPerMma } from './fragments.js';
export {
  ATOM_CLASSES,
  COMBINE,
  COST_TERMS,
  TARGET_RATES,
  atomClass,
  coefficientKey,
  combineTerms,
  costLine,
  costTerms,
  defaultCoefficients,
  estimateCost,
  type AtomClass,
  type CostCoefficients,
  type CostEstimate,
  type CostFacts,
  type CostTerm,
  type TargetRates,
} from './cost-model.js';
export { outputStaging, outputStoreRun, stagesOutputInLds, type OutputStaging } from './store-path.js';
export { TARGET_WAVES, chooseSplits, splitOptions, type SplitChoice, type SplitOption } from './split-chooser.js';
export { longestSlice, splitSlice, splitUnit } from './split-slices.js';
export { chooseGroupMerge, mergeRow, rankGroupedSpecs, type MergeChoice, type MergeRow, type RankedGroupedSpec } from './merge-chooser.js';
export {
  ConvKernelError,
  SENTINEL_OFFSET,
  buildConvKernel,
  chipletRemap,
  decodeWorkgroup,
  groupedChannelAlignment,
  interpretConv,
  irAtomName,
  usesAsyncCopy,
  weightPieceElems,
  weightSwizzle,
  type BuildMutation,
  type BuildOptions,
  type ConvKernel,
  type CpuRunOptions,
  type CpuRunResult,
  type FragmentLoad,
  type StagingSchedule,
} from './kernel/index.js';
export { benchTrials, compiledSelection, type CompiledSelection } from './bench-plan.js';
export { CONV_DIRECT_FAMILY, convDirectFamily, describeConvSpec, problemSetFamily, type ConvDirectFamilyOptions } from './family.js';
export { candidateCoverage, problemCoverage, rejectionRule, type ProblemCoverage, type RejectionRule } from './coverage.js';
// What a command line knows of a problem (src/op/): the readers of flags, suite rows, MIOpen logs
// and operand shapes; `rocke plan`'s report; why a problem has no kernel.
export {
  OPERAND_PROBLEM_FLAGS,
  PROBLEM_FLAGS,
  PROBLEM_SET_USAGE,
  PROBLEM_USAGE,
  operandShapes,
  problemFromFlags,
  problemFromOperands,
  problemFromSuiteRow,
  readMiopenLog,
  type MiopenLog,
} from './op/problem-input.js';
export { isUncovered, planReport, specDetail, uncoveredReason, type CachedKernels, type PlanReport, type PlanReportOptions, type RankingEntry } from './op/plan-report.js';
export { wholeMapImages, wholeMapLayout, type WholeMapFields, type WholeMapLayout } from './whole-map.js';
export {
  chooseConv,
  type ChooseOptions,
  type ConvChoice,
  type ConvRecordChoice,
  RankerModelSchema,
  RankerRowsSchema,
  defaultRankerModel,
  evaluateRanker,
  fitRanker,
  generatedModelSource,
  leaveGroupOut,
  leaveOneClassOut,
  leaveOneShapeOut,
  mergeRows,
  problemClass,
  problemKey,
  rankerEstimate,
  rankerExplain,
  rankerOrder,
  rankerScore,
  rowsFromBenchDetails,
  rowsSource,
  specFromKernelName,
  type FitOptions,
  type Evaluation,
  type HeldOutShape,
  type RankedCandidate,
  type RankerModel,
  type RankerRows,
  type RunMeta,
} from './ranker/index.js';
