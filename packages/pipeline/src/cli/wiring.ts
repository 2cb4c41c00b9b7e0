import {
  benchTrials,
  benchVariants,
  chooseConv,
  chooseReduceHelper,
  compiledSelection,
  CONV_DIRECT_FAMILY,
  convDirectFamily,
  DEFAULT_SHAPE_CAP,
  isTargetName,
  kernargTable,
  kernelName,
  launchSequence,
  parseProblem,
  parseSpec,
  problemGeometry,
  problemLabel,
  selectProblemSpecs,
  withEpilogue,
  DEFAULT_PROBLEMS,
  isUncovered,
  OPERAND_PROBLEM_FLAGS,
  operandShapes,
  GridMemo,
  planReport,
  PROBLEM_FLAGS,
  PROBLEM_SET_USAGE,
  PROBLEM_USAGE,
  problemFromFlags,
  problemFromOperands,
  problemFromSuiteRow,
  problemSetFamily,
  readMiopenLog,
  retypeProblems,
  specDetail,
  uncoveredReason,
  VARIANTS,
  type ConvChoice,
  type Dtype,
  type LaunchPlan,
  type NamedProblem,
  type Problem,
  type RankerModel,
  type Spec,
  type TargetName,
  type Variant,
} from '@rocke/conv-direct';
import type { NativeBinding } from '@rocke/hip-runtime';
import { epilogueTag, type Epilogue } from '@rocke/ir';
import { applyEpilogue, compare, convForward, convForwardParallel, convGeometry, convSample, DEFAULT_BUDGET_BYTES, fp32ImageBytes, gather, type EpilogueValues } from '@rocke/reference';
import { CACHE_NAMESPACE, kernargTable as reduceKernargTable, splitReduceFamily } from '@rocke/split-reduce';
import { openOp, type OpenOptions, type OpHandle } from '../api/open-conv.js';
import { gpuRun, type RunRequest } from '../api/run-conv.js';
import type { CliIo } from '../io.js';
import type { NpyArray } from '../npy.js';
import { BENCH_EPILOGUE_SCALARS } from '../bench/epilogue.js';
import { gpuBench } from '../bench/gpu-bench.js';
import { SAMPLE_POINTS } from '../bench/reference-check.js';
import { gpuTune } from '../bench/tune.js';
import { axpyFamily } from '../compile/axpy-family.js';
import { elfPrunePruner } from '../compile/elf-prune-pruner.js';
import { LlvmToolchain } from '../compile/llvm-toolchain.js';
import type { LoadableKernel, OpEpilogue, OpenedPlan, OpPlanner, OpProblem, OpRuntime, PlannedSelection, RecordedChoice, ReferenceCheck } from '../planner.js';
import type { CliDeps } from './deps.js';

/**
 * The CLI's default seams. This is where the real packages plug in:
 * - `families`: conv-direct (`direct_fwd`: dense, split_c and grouped; its AOT grid serves
 *   `compile-all --grid aot`, a problem set replaces it with `problemSetFamily`) and split-reduce
 *   (`direct_fwd_helper`) are wired and are the default set;
 * - `planner`: {@link convPlanner}, what bench/ knows of conv-direct (selection, launch plans,
 *   reference, cuDNN shape);
 * - `bench` / `tune`: bench/ (hip-runtime launches timed with device events, verified with
 *   @rocke/reference, kernels from `--cache-dir`: a bench-prep manifest or a compile cache;
 *   tune writes tuning records beside them); `runConv`: api/ (openConv: record, else ranker).
 * `axpy` is the hand-written smoke family, selectable by name but never part of the default set.
 */
export function defaultDeps(): CliDeps {
  const planner = convPlanner();
  const runtime = convRuntime();
  return {
    families: () => [convDirectFamily(), splitReduceFamily(), axpyFamily()],
    defaultFamilyNames: ['direct_fwd', 'direct_fwd_helper'],
    compiler: () => new LlvmToolchain(),
    pruner: () => elfPrunePruner(),
    planner: () => planner,
    bench: (request, io) => gpuBench(planner, request, io),
    runConv: (request, io) => gpuRun(runtime, request, io),
    tune: (request, io) => gpuTune(planner, request, io),
  };
}

/**
 * What the CLI's commands know of the problems they take, all of it conv-direct's: the flags of a
 * problem and their usage, the readers of suite rows, MIOpen logs and operand shapes, the built-in
 * problem set and its selection, `rocke plan`'s report, why a problem has no kernel, and the CPU
 * reference of `rocke run --device cpu`. The commands reach the family only through this object.
 */
export const cliOp = {
  family: CONV_DIRECT_FAMILY,
  variants: VARIANTS,
  defaultCap: DEFAULT_SHAPE_CAP,
  /** The built-in problem set, re-typed to `dtypes` when given. */
  defaultProblems: (dtypes: readonly Dtype[]): NamedProblem[] => (dtypes.length ? retypeProblems(DEFAULT_PROBLEMS, dtypes) : [...DEFAULT_PROBLEMS]),
  problemSet: problemSetFamily,
  problemFlags: PROBLEM_FLAGS,
  operandFlags: OPERAND_PROBLEM_FLAGS,
  problemUsage: PROBLEM_USAGE,
  problemSetUsage: PROBLEM_SET_USAGE,
  problemFromFlags,
  problemFromSuiteRow,
  readMiopenLog,
  problemFromOperands,
  operandShapes,
  tensors: (p: Problem) => convTensors(p),
  label: problemLabel,
  planReport,
  /** Candidate grids kept across the plans of one problem set (`rocke plan --suite`): problems of one geometry share theirs. */
  planGrids: (): GridMemo => new GridMemo(),
  specDetail,
  isUncovered,
  uncoveredReason,
  cpuRun,
};

/**
 * `rocke run --device cpu`: @rocke/reference's conv (and the epilogue in fp64), or why it cannot
 * run: one image of x or y as fp32 over the CPU reference's budget (such a problem only runs on a GPU).
 */
function cpuRun(problem: Problem, x: Uint16Array, w: Uint16Array, epilogue?: EpilogueValues): { y: Uint16Array } | { reason: string } {
  const image = fp32ImageBytes(convGeometry(problem));
  const per = Math.max(image.x, image.y);
  if (per > DEFAULT_BUDGET_BYTES) {
    return { reason: `--device cpu: one image needs ${per} bytes as fp32 (x ${image.x}, y ${image.y}), over the CPU reference's budget of ${DEFAULT_BUDGET_BYTES} bytes per operand; run it with --device gpu` };
  }
  const ref = convForward(problem, x, w);
  return { y: epilogue ? applyEpilogue(ref.geometry, ref.y32, epilogue).y : ref.y };
}

/**
 * A problem the planner handed out: every OpProblem bench/ passes back came from this planner's
 * `parseProblem` or from the CLI's conv problem readers, so it is a conv-direct Problem.
 */
const conv = (p: OpProblem): Problem => p as Problem;

/**
 * conv-direct as bench/'s planner: `selectProblemSpecs` (each spec with the fused epilogue compiled
 * in; the candidates past the cap follow as back-fill), `compiledSelection`, `benchTrials` with the
 * bench's epilogue scalars (split_c: one sequence per split count tried), `chooseReduceHelper`, the
 * @rocke/reference check and the cuDNN script's suite shape.
 */
export function convPlanner(): OpPlanner {
  return {
    family: convDirectFamily(),
    helperFamily: (epilogue) => splitReduceFamily(epilogue),
    defaultCap: DEFAULT_SHAPE_CAP,
    parseProblem: (json) => parseProblem(json),
    tensors(problem) {
      const g = problemGeometry(conv(problem));
      return convTensors(conv(problem), g);
    },
    select: (problems, target, { cap, variants, epilogue }) =>
      selectProblemSpecs(problems as readonly NamedProblem[], target, { cap, ...(variants ? { variants } : {}) }).map((s) => plannedSelection(s, epilogue)),
    compiledSelection(problem, target, cap, isCompiled) {
      const s = compiledSelection(conv(problem), target, cap, (spec) => isCompiled(kernelName(spec)));
      return { variants: s.variants, picks: s.picks.map((p) => ({ variant: p.spec.variant, spec: p.spec, kernelName: p.kernelName, score: p.predictedUs })) };
    },
    trials(spec, problem, helpers, epilogue) {
      const sp = parseSpec(spec);
      if (!sp.ok) throw new TypeError(`bad spec in manifest: ${sp.reason}`);
      const scalars = epilogue ? { ...BENCH_EPILOGUE_SCALARS } : undefined;
      return { trials: benchTrials(sp.spec, conv(problem), helpers, scalars, epilogue), report: sp.spec.variant === 'grouped' ? { merge: sp.spec.group_merge } : {} };
    },
    helperFor: (helpers, problem, epilogue) => chooseReduceHelper(helpers, problem.dtype, epilogue)?.helper,
    reference: (problem, x, w, seed, fullMaxMacs, epilogue) => convReferenceCheck(conv(problem), x, w, seed, fullMaxMacs, epilogue),
    baselineShape: (name, cls, problem) => suiteShape(name, cls, conv(problem)),
  };
}

function plannedSelection(s: ReturnType<typeof selectProblemSpecs>[number], epilogue: Epilogue | undefined): PlannedSelection {
  const entry = (bare: Spec, score: number) => {
    const spec = withEpilogue(bare, epilogue);
    return { variant: spec.variant, spec, kernelName: kernelName(spec), score };
  };
  const selected = s.variants.flatMap((v) => v.specs.map((spec, i) => entry(spec, v.predictedUs[i]!)));
  return {
    name: s.name,
    cls: s.cls,
    problem: s.problem,
    cap: s.cap,
    variants: s.variants.map((v) => ({ variant: v.variant, valid: v.valid, selected: v.specs.length, ...(v.error ? { error: v.error } : {}) })),
    ranked: [...selected, ...s.backfill.map((b) => entry(b.spec, b.predictedUs))],
    selected: selected.length,
  };
}

/**
 * The reference for one shape's inputs: the whole output for problems up to `fullMaxMacs`
 * multiply-adds (multi-threaded), else {@link SAMPLE_POINTS} seeded points. Comparison uses
 * @rocke/reference's per-dtype tolerance (fp32 accumulation + one rounding); with a fused
 * `epilogue`, the reference applies it in fp64 and the tolerance takes its `sumRms`.
 */
export async function convReferenceCheck(problem: Problem, x: Uint16Array, w: Uint16Array, seed: number, fullMaxMacs: number, epilogue?: EpilogueValues): Promise<ReferenceCheck> {
  if (problemGeometry(problem).flops / 2 <= fullMaxMacs) {
    const ref = await convForwardParallel(problem, x, w);
    if (epilogue) {
      const e = applyEpilogue(ref.geometry, ref.y32, epilogue);
      return { mode: 'full', check: (y) => compare(y, e.y, problem.dtype, { ...ref.geometry, sumRms: e.sumRms }) };
    }
    return { mode: 'full', check: (y) => compare(y, ref.y, problem.dtype, ref.geometry) };
  }
  const s = convSample(problem, x, w, { count: SAMPLE_POINTS, seed });
  if (epilogue) {
    const e = applyEpilogue(s.geometry, s.y32, epilogue, s.indices);
    return { mode: `sampled ${s.indices.length}`, check: (y) => compare(gather(y, s.indices), e.y, problem.dtype, { ...s, sumRms: e.sumRms }) };
  }
  return { mode: `sampled ${s.indices.length}`, check: (y) => compare(gather(y, s.indices), s.y, problem.dtype, s) };
}

/** One shape of a suite file as cudnn_baseline.py and `rocke bench --suite` read it. */
export type SuiteShape = {
  name: string;
  cls: string | null;
  N: number; C: number; H: number; W: number; K: number; R: number; S: number;
  stride: number; pad: number; groups: number; dtype: string;
};

/**
 * A problem as a suite shape. The suite format has one stride and one pad; a problem with
 * different H and W strides/pads or a dilation cannot be written (cuDNN's script would time
 * another conv), which is a reason string instead.
 */
export function suiteShape(name: string, cls: string | null, p: Problem): SuiteShape | string {
  if (p.strideH !== p.strideW || p.padH !== p.padW) return 'the suite format has one stride and one pad (H and W differ)';
  if (p.dilationH !== 1 || p.dilationW !== 1) return 'the cuDNN baseline script has no dilation';
  return { name, cls, N: p.N, C: p.C, H: p.H, W: p.W, K: p.K, R: p.R, S: p.S, stride: p.strideH, pad: p.padH, groups: p.groups, dtype: p.dtype };
}

function convTensors(p: Problem, g = problemGeometry(p)) {
  return { xBytes: g.xBytes, wBytes: g.wBytes, yBytes: g.yBytes, channels: p.K, macs: g.flops / 2, yShape: [p.N, g.Ho, g.Wo, p.K] };
}

/** conv-direct's own options of an open: the ranker model (default: the committed H200 fit) and the variants it weighs (default: the bench's). */
export interface ConvOpenOptions {
  model?: RankerModel;
  variants?: readonly Variant[];
}

/** Options of {@link openConv}. */
export type OpenConvOptions = OpenOptions<ConvOpenOptions>;

/** A fused epilogue of {@link openConv}: the compiled-in shape and the scalars it uses. */
export type ConvEpilogue = OpEpilogue;

/** An opened conv (x NHWC, w KRSC, y NHWK): the chosen plan, ready to launch on device buffers. */
export type ConvHandle = OpHandle<Problem, ConvChoice, LaunchPlan>;

/**
 * Opens a conv for `problem` on `options.device`: the tuning record for the device's arch if the
 * source has one, else the ranker's choice among the source's compiled kernels (split_c only with a
 * split-reduce helper of the dtype and epilogue there). Launches nothing.
 */
export function openConv(problem: Problem, options: OpenConvOptions): ConvHandle {
  return openOp(convRuntime(), problem, options);
}

/** `rocke run` on a GPU with conv-direct's kernels (see `gpuRun`). */
export function gpuRunConv(request: RunRequest, io: CliIo, options: { binding?: NativeBinding | string } = {}): Promise<NpyArray> {
  return gpuRun(convRuntime(), request, io, options);
}

/** conv-direct as api/'s runtime: `chooseConv` (record, else ranker), `launchSequence` and the kernels' argument tables. */
export function convRuntime(): OpRuntime<Problem, ConvChoice, ConvOpenOptions, LaunchPlan> {
  return {
    name: 'conv-direct',
    families: { kernels: CONV_DIRECT_FAMILY, helpers: CACHE_NAMESPACE },
    hasTarget: isTargetName,
    tensors: (p) => convTensors(p),
    isSpec: (spec) => parseSpec(spec).ok,
    label: problemLabel,
    choose: (problem, target, { available, record }) => chooseConv(problem, target as TargetName, { available, ...(record ? { record } : {}) }),
    open: openConvPlan,
  };
}

/** The choice and launch sequence of a conv over a source's kernels; a split_c choice needs a split-reduce helper of its dtype and epilogue. */
function openConvPlan<K extends LoadableKernel>(problem: Problem, arch: string, source: { kernels: ReadonlyMap<string, K>; helpers: readonly K[]; root: string; record?: RecordedChoice }, options: Partial<ConvOpenOptions> & { epilogue?: OpEpilogue }): OpenedPlan<ConvChoice, K, LaunchPlan> {
  const fused = options.epilogue;
  const which = fused ? ` with the fused epilogue ${epilogueTag(fused)}` : '';
  const helper = chooseReduceHelper(source.helpers, problem.dtype, fused);
  const variants = (options.variants ?? benchVariants(problem)).filter((v) => v !== 'split_c' || helper);
  const choice = chooseConv(problem, arch as TargetName, {
    ...(source.record ? { record: source.record } : {}),
    variants,
    available: (name) => source.kernels.has(name),
    ...(options.model ? { model: options.model } : {}),
    ...(fused ? { epilogue: fused } : {}),
  });
  if ('reason' in choice) throw new Error(`no kernel for this problem${which} in ${source.root}: ${choice.reason}`);
  const reduce = choice.spec.variant === 'split_c' ? helper : undefined;
  if (choice.spec.variant === 'split_c' && !reduce) throw new Error(`no split-reduce helper kernel for ${problem.dtype}${which} in ${source.root}`);
  const { alpha, beta, slope, lo, hi } = fused ?? {};
  const scalars = Object.fromEntries(Object.entries({ alpha, beta, slope, lo, hi }).filter(([, v]) => v !== undefined));
  const sequence = launchSequence(choice.spec, problem, { ...(choice.splits === undefined ? {} : { splits: choice.splits }), ...(reduce ? { reduce: reduce.spec } : {}), ...(fused ? { epilogue: scalars } : {}) });
  return {
    choice,
    sequence,
    conv: { kernel: source.kernels.get(choice.kernelName)!, signature: kernargTable(choice.spec.variant, choice.spec.epilogue) },
    ...(reduce ? { reduce: { kernel: reduce.helper, signature: reduceKernargTable(reduce.spec.epilogue) } } : {}),
  };
}
