import {
  benchVariants,
  chooseConv,
  chooseReduceHelper,
  isTargetName,
  kernargTable,
  launchSequence,
  problemGeometry,
  type LaunchSequence,
  type ConvChoice,
  type LaunchPlan,
  type Problem,
  type EpilogueScalars,
  type RankerModel,
  type Variant,
} from '@rocke/conv-direct';
import { epilogueTag, isBareEpilogue, type Epilogue } from '@rocke/ir';
import type { Device, DeviceBuffer, KernelFunction, Module, Stream } from '@rocke/hip-runtime';
import { kernargTable as reduceKernargTable } from '@rocke/split-reduce';
import { preparePlan, type ReadyPlan } from '../bench/execute.js';
import { openKernelSource, problemJson, type KernelSource, type SourceKernel } from './kernel-source.js';

/** Options of {@link openConv}. */
export interface OpenConvOptions {
  /** The open GPU the conv runs on (its arch picks the kernels and the record). */
  device: Device;
  /** A catalog directory (`rocke catalog build`), a kernel cache directory, or an opened source. */
  catalog?: string | KernelSource;
  cache?: string | KernelSource;
  /** The ranker model (default: the committed H200 fit). */
  model?: RankerModel;
  /** Variants the ranker weighs (default: the bench's for the problem). */
  variants?: readonly Variant[];
  /**
   * A fused epilogue, y = act(alpha * conv + bias[k] + beta * r): its shape picks the fused kernels
   * of the source (split_c: a bare conv and a fused split-reduce helper); its scalars are launched.
   * `run` then takes the bias and residual buffers the shape names.
   */
  epilogue?: ConvEpilogue;
}

/** A fused epilogue of {@link openConv}: the compiled-in shape and the scalars it uses. */
export interface ConvEpilogue extends Epilogue, EpilogueScalars {}

/** Options of one {@link ConvHandle.run} call. */
export interface RunOptions {
  /** Stream to enqueue on (default: the device's default stream). */
  stream?: Stream | null;
  /** The epilogue's per-output-channel bias: K fp32 values (bias 'fp32') or K dtype values (bias 'dtype'). */
  bias?: DeviceBuffer;
  /** The epilogue's residual, in y's layout and dtype. */
  residual?: DeviceBuffer;
}

/** An opened conv: the chosen plan, ready to launch on device buffers. */
export interface ConvHandle {
  readonly problem: Problem;
  readonly choice: ConvChoice;
  /** The launch plan of the chosen kernel. */
  readonly plan: LaunchPlan;
  /** Why this plan: the choice's lines, then the plan's. */
  explain(): string[];
  /**
   * Enqueues the conv on `x` (NHWC), `w` (KRSC) and `y` (NHWK). The workspace (split_c) is owned by
   * the handle and reused; nothing is timed and nothing is synchronized.
   */
  run(x: DeviceBuffer, w: DeviceBuffer, y: DeviceBuffer, options?: RunOptions): void;
  /** The fused epilogue it was opened with, if any. */
  readonly epilogue: ConvEpilogue | undefined;
  /** Frees the workspace and unloads the modules. */
  close(): void;
}

function sourceOf(options: OpenConvOptions): KernelSource {
  const given = options.catalog ?? options.cache;
  if (given === undefined) throw new TypeError('openConv needs a catalog or a cache');
  if (options.catalog !== undefined && options.cache !== undefined) throw new TypeError('openConv takes a catalog or a cache, not both');
  return typeof given === 'string' ? openKernelSource(given) : given;
}

/**
 * Opens a conv for `problem` on `options.device`: the tuning record for the device's arch if the
 * source has one, else the ranker's choice among the source's compiled kernels. Loads the chosen
 * code object (and the split-reduce helper for split_c) and allocates the workspace once. Launches
 * nothing: no timing run, no search, no compile.
 */
export function openConv(problem: Problem, options: OpenConvOptions): ConvHandle {
  const { device } = options;
  const arch = device.info.arch;
  if (!isTargetName(arch)) throw new Error(`the device is ${device.info.name} (${arch}); conv-direct has no kernels for it`);
  const source = sourceOf(options);
  const kernels = source.convKernels(arch);
  const record = source.record(arch, problemJson(problem));
  const fused = options.epilogue && !isBareEpilogue(options.epilogue) ? options.epilogue : undefined;
  // split_c only with a split-reduce helper of this dtype and epilogue in the source.
  const helper = chooseReduceHelper(source.helpers(arch), problem.dtype, fused);
  const variants = (options.variants ?? benchVariants(problem)).filter((v) => v !== 'split_c' || helper);
  const choice = chooseConv(problem, arch, {
    ...(record ? { record: { spec: record.choice.spec, launch: record.choice.launch, timeMs: record.timeMs, device: record.device.name, date: record.date } } : {}),
    variants,
    available: (name) => kernels.has(name),
    ...(options.model ? { model: options.model } : {}),
    ...(fused ? { epilogue: fused } : {}),
  });
  const which = fused ? ` with the fused epilogue ${epilogueTag(fused)}` : '';
  if ('reason' in choice) throw new Error(`no kernel for this problem${which} in ${source.root}: ${choice.reason}`);
  const modules: Module[] = [];
  const load = (k: SourceKernel): Module => {
    const m = device.loadModule(source.readCode(k.code));
    modules.push(m);
    return m;
  };
  let ws: DeviceBuffer | undefined;
  try {
    const splits = choice.splits === undefined ? {} : { splits: choice.splits };
    const reduce = choice.spec.variant === 'split_c' ? helper : undefined;
    if (choice.spec.variant === 'split_c' && !reduce) throw new Error(`no split-reduce helper kernel for ${problem.dtype}${which} in ${source.root}`);
    const scalars = fused ? { epilogue: epilogueScalars(fused) } : {};
    const sequence = launchSequence(choice.spec, problem, { ...splits, ...(reduce ? { reduce: reduce.spec } : {}), ...scalars });
    const functions = {
      conv: load(kernels.get(choice.kernelName)!).getFunction(choice.kernelName, kernargTable(choice.spec.variant, choice.spec.epilogue)),
      reduce: reduce ? load(reduce.helper).getFunction(reduce.helper.kernelName, reduceKernargTable(reduce.spec.epilogue)) : undefined,
    };
    if (sequence.plan.workspaceBytes > 0) ws = device.alloc(sequence.plan.workspaceBytes);
    return handle(problem, choice, sequence, device, functions, ws, modules, fused);
  } catch (err) {
    ws?.free();
    for (const m of modules) m.unload();
    throw err;
  }
}

function handle(
  problem: Problem,
  choice: ConvChoice,
  sequence: LaunchSequence,
  device: Device,
  functions: { conv: KernelFunction; reduce: KernelFunction | undefined },
  ws: DeviceBuffer | undefined,
  modules: readonly Module[],
  epilogue: ConvEpilogue | undefined,
): ConvHandle {
  const plan = sequence.plan;
  const need = bufferBytes(problem, epilogue);
  // The packed launches of the last buffers run on: re-packed only when the caller's buffers change.
  let ready: { buffers: Record<BufferRole, DeviceBuffer | undefined>; plan: ReadyPlan } | undefined;
  let closed = false;
  return {
    problem,
    choice,
    plan,
    epilogue,
    explain: () => [...choice.explain, ...plan.explain],
    run(x, w, y, options = {}) {
      if (closed) throw new Error('this conv was closed');
      const buffers = { x, w, y, bias: options.bias, residual: options.residual };
      if (!ready || BUFFER_ROLES.some((r) => ready!.buffers[r] !== buffers[r])) {
        for (const role of BUFFER_ROLES) checkBuffer(role, buffers[role], need[role]);
        ready = { buffers, plan: preparePlan(sequence, functions, { ...buffers, ws }) };
      }
      const stream = options.stream ?? null;
      for (const l of ready.plan.launches) device.launch(l.fn, l.grid, l.block, l.args, { sharedBytes: l.sharedBytes, programmatic: l.programmatic, stream });
    },
    close() {
      if (closed) return;
      closed = true;
      ws?.free();
      for (const m of modules) m.unload();
    },
  };
}

const BUFFER_ROLES = ['x', 'w', 'y', 'bias', 'residual'] as const;
type BufferRole = (typeof BUFFER_ROLES)[number];

/** Bytes each buffer of a run needs; 0: the run takes none (bias and residual only where the epilogue has them). */
function bufferBytes(problem: Problem, e: ConvEpilogue | undefined): Record<BufferRole, number> {
  const g = problemGeometry(problem);
  const bias = !e || e.bias === 'none' ? 0 : problem.K * (e.bias === 'fp32' ? 4 : 2);
  return { x: g.xBytes, w: g.wBytes, y: g.yBytes, bias, residual: e?.residual ? g.yBytes : 0 };
}

function checkBuffer(role: BufferRole, buffer: DeviceBuffer | undefined, need: number): void {
  if (need === 0) {
    if (buffer) throw new TypeError(`run() got a ${role} buffer, but this conv was opened without ${role === 'bias' ? 'a bias' : 'a residual'} in its epilogue`);
    return;
  }
  if (!buffer) throw new TypeError(`this conv's epilogue needs a ${role} buffer: run(x, w, y, { ${role} })`);
  if (buffer.byteLength < need) throw new RangeError(`${role} holds ${buffer.byteLength} bytes; the problem needs ${need}`);
}

/** The scalars of an epilogue (alpha and beta default to 1 in the plan). */
function epilogueScalars(e: ConvEpilogue): EpilogueScalars {
  const { alpha, beta, slope, lo, hi } = e;
  return Object.fromEntries(Object.entries({ alpha, beta, slope, lo, hi }).filter(([, v]) => v !== undefined));
}
