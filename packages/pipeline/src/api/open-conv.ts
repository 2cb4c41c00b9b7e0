import { isBareEpilogue } from '@rocke/ir';
import type { Device, DeviceBuffer, KernelFunction, Module, Stream } from '@rocke/hip-runtime';
import { preparePlan, type ReadyPlan } from '../bench/execute.js';
import type { OpChoice, OpEpilogue, OpProblem, OpRuntime, PlannedSequence } from '../planner.js';
import { openKernelSource, problemJson, type KernelSource, type SourceKernel } from './kernel-source.js';

/** Options of {@link openOp}: where the kernels are, the device, a fused epilogue; `O` the family's own. */
export type OpenOptions<O> = Partial<O> & {
  /** The open GPU the kernel runs on (its arch picks the kernels and the record). */
  device: Device;
  /** A catalog directory (`rocke catalog build`), a kernel cache directory, or an opened source. */
  catalog?: string | KernelSource;
  cache?: string | KernelSource;
  /**
   * A fused epilogue, y = act(alpha * op + bias[k] + beta * r): its shape picks the fused kernels
   * of the source (a split plan: a bare kernel and a fused helper); its scalars are launched.
   * `run` then takes the bias and residual buffers the shape names.
   */
  epilogue?: OpEpilogue;
};

/** Options of one {@link OpHandle.run} call. */
export interface RunOptions {
  /** Stream to enqueue on (default: the device's default stream). */
  stream?: Stream | null;
  /** The epilogue's per-output-channel bias: fp32 values (bias 'fp32') or dtype values (bias 'dtype'). */
  bias?: DeviceBuffer;
  /** The epilogue's residual, in y's layout and dtype. */
  residual?: DeviceBuffer;
}

/** An opened kernel: the chosen plan, ready to launch on device buffers. */
export interface OpHandle<P extends OpProblem, C extends OpChoice, L extends PlannedSequence['plan']> {
  readonly problem: P;
  readonly choice: C;
  /** The launch plan of the chosen kernel. */
  readonly plan: L;
  /** Its launches in stream order, as one `run` enqueues them. */
  readonly launches: PlannedSequence['launches'];
  /** Why this plan: the choice's lines, then the plan's. */
  explain(): string[];
  /**
   * Enqueues the kernel on `x`, `w` and `y` (the family's layouts). The workspace (a split plan's)
   * is owned by the handle and reused; nothing is timed and nothing is synchronized.
   */
  run(x: DeviceBuffer, w: DeviceBuffer, y: DeviceBuffer, options?: RunOptions): void;
  /** The fused epilogue it was opened with, if any. */
  readonly epilogue: OpEpilogue | undefined;
  /** Frees the workspace and unloads the modules. */
  close(): void;
}

function sourceOf(options: OpenOptions<unknown>, families: { kernels: string; helpers: string }): KernelSource {
  const given = options.catalog ?? options.cache;
  if (given === undefined) throw new TypeError('openConv needs a catalog or a cache');
  if (options.catalog !== undefined && options.cache !== undefined) throw new TypeError('openConv takes a catalog or a cache, not both');
  return typeof given === 'string' ? openKernelSource(given, families) : given;
}

/**
 * Opens `problem` on `options.device` with `runtime`'s kernels: the tuning record for the device's
 * arch if the source has one, else the runtime's choice among the source's compiled kernels. Loads
 * the chosen code object (and a helper a split plan needs) and allocates the workspace once.
 * Launches nothing: no timing run, no search, no compile.
 */
export function openOp<P extends OpProblem, C extends OpChoice, O, L extends PlannedSequence['plan']>(runtime: OpRuntime<P, C, O, L>, problem: P, options: OpenOptions<O>): OpHandle<P, C, L> {
  const { device } = options;
  const arch = device.info.arch;
  if (!runtime.hasTarget(arch)) throw new Error(`the device is ${device.info.name} (${arch}); ${runtime.name} has no kernels for it`);
  const source = sourceOf(options, runtime.families);
  const record = source.record(arch, problemJson(problem));
  const fused = options.epilogue && !isBareEpilogue(options.epilogue) ? options.epilogue : undefined;
  // What is left of the options is the family's own (Partial<O>).
  const { device: _d, catalog: _c, cache: _k, epilogue: _e, ...own } = options;
  const recorded = record ? { spec: record.choice.spec, launch: record.choice.launch, timeMs: record.timeMs, device: record.device.name, date: record.date } : undefined;
  const opened = runtime.open(problem, arch, { kernels: source.kernels(arch), helpers: source.helpers(arch), root: source.root, ...(recorded ? { record: recorded } : {}) }, { ...(own as Partial<O>), ...(fused ? { epilogue: fused } : {}) });
  const modules: Module[] = [];
  const load = (k: SourceKernel): Module => {
    const m = device.loadModule(source.readCode(k.code));
    modules.push(m);
    return m;
  };
  let ws: DeviceBuffer | undefined;
  try {
    const functions = {
      conv: load(opened.conv.kernel).getFunction(opened.conv.kernel.kernelName, opened.conv.signature),
      reduce: opened.reduce ? load(opened.reduce.kernel).getFunction(opened.reduce.kernel.kernelName, opened.reduce.signature) : undefined,
    };
    if (opened.sequence.plan.workspaceBytes > 0) ws = device.alloc(opened.sequence.plan.workspaceBytes);
    return handle(problem, opened.choice, opened.sequence, device, functions, ws, modules, fused, runtime.tensors(problem));
  } catch (err) {
    ws?.free();
    for (const m of modules) m.unload();
    throw err;
  }
}

function handle<P extends OpProblem, C extends OpChoice, L extends PlannedSequence['plan']>(
  problem: P,
  choice: C,
  sequence: { plan: L; launches: PlannedSequence['launches'] },
  device: Device,
  functions: { conv: KernelFunction; reduce: KernelFunction | undefined },
  ws: DeviceBuffer | undefined,
  modules: readonly Module[],
  epilogue: OpEpilogue | undefined,
  tensors: { xBytes: number; wBytes: number; yBytes: number; channels: number },
): OpHandle<P, C, L> {
  const plan = sequence.plan;
  const need = bufferBytes(tensors, epilogue);
  // The packed launches of the last buffers run on: re-packed only when the caller's buffers change.
  let ready: { buffers: Record<BufferRole, DeviceBuffer | undefined>; plan: ReadyPlan } | undefined;
  let closed = false;
  return {
    problem,
    choice,
    plan,
    launches: sequence.launches,
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
function bufferBytes(g: { xBytes: number; wBytes: number; yBytes: number; channels: number }, e: OpEpilogue | undefined): Record<BufferRole, number> {
  const bias = !e || e.bias === 'none' ? 0 : g.channels * (e.bias === 'fp32' ? 4 : 2);
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
