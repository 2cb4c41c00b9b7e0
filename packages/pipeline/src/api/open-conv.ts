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
  type RankerModel,
  type Variant,
} from '@rocke/conv-direct';
import type { Device, DeviceBuffer, KernelFunction, Module, Stream } from '@rocke/hip-runtime';
import { KERNARG_TABLE as REDUCE_KERNARGS } from '@rocke/split-reduce';
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
}

/** Options of one {@link ConvHandle.run} call. */
export interface RunOptions {
  /** Stream to enqueue on (default: the device's default stream). */
  stream?: Stream | null;
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
  const choice = chooseConv(problem, arch, {
    ...(record ? { record: { spec: record.choice.spec, launch: record.choice.launch, timeMs: record.timeMs, device: record.device.name, date: record.date } } : {}),
    variants: options.variants ?? benchVariants(problem),
    available: (name) => kernels.has(name),
    ...(options.model ? { model: options.model } : {}),
  });
  if ('reason' in choice) throw new Error(`no kernel for this problem in ${source.root}: ${choice.reason}`);
  const modules: Module[] = [];
  const load = (k: SourceKernel): Module => {
    const m = device.loadModule(source.readCode(k.code));
    modules.push(m);
    return m;
  };
  let ws: DeviceBuffer | undefined;
  try {
    const splits = choice.splits === undefined ? {} : { splits: choice.splits };
    const helper = choice.spec.variant === 'split_c' ? chooseReduceHelper(source.helpers(arch), problem.dtype) : undefined;
    if (choice.spec.variant === 'split_c' && !helper) throw new Error(`no split-reduce helper kernel for ${problem.dtype} in ${source.root}`);
    const sequence = launchSequence(choice.spec, problem, { ...splits, ...(helper ? { reduce: helper.spec } : {}) });
    const functions = {
      conv: load(kernels.get(choice.kernelName)!).getFunction(choice.kernelName, kernargTable(choice.spec.variant)),
      reduce: helper ? load(helper.helper).getFunction(helper.helper.kernelName, REDUCE_KERNARGS) : undefined,
    };
    if (sequence.plan.workspaceBytes > 0) ws = device.alloc(sequence.plan.workspaceBytes);
    return handle(problem, choice, sequence, device, functions, ws, modules);
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
): ConvHandle {
  const plan = sequence.plan;
  const g = problemGeometry(problem);
  // The packed launches of the last buffers run on: re-packed only when the caller's buffers change.
  let ready: { x: DeviceBuffer; w: DeviceBuffer; y: DeviceBuffer; plan: ReadyPlan } | undefined;
  let closed = false;
  return {
    problem,
    choice,
    plan,
    explain: () => [...choice.explain, ...plan.explain],
    run(x, w, y, options = {}) {
      if (closed) throw new Error('this conv was closed');
      if (ready?.x !== x || ready.w !== w || ready.y !== y) {
        for (const [name, buf, need] of [['x', x, g.xBytes], ['w', w, g.wBytes], ['y', y, g.yBytes]] as const) {
          if (buf.byteLength < need) throw new RangeError(`${name} holds ${buf.byteLength} bytes; the problem needs ${need}`);
        }
        ready = { x, w, y, plan: preparePlan(sequence, functions, { x, w, y, ws }) };
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
