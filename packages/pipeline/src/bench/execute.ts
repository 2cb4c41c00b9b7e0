import type { PlannedLaunch, PlannedSequence } from '../planner.js';
import { elapsedMs, packKernargs, type Device, type DeviceBuffer, type Graph, type KernelFunction, type PackedKernargs } from '@rocke/hip-runtime';

/** The device buffers a conv plan binds (ws only for split_c; bias and residual only with a fused epilogue). */
export interface PlanBuffers {
  x: DeviceBuffer;
  w: DeviceBuffer;
  y: DeviceBuffer;
  ws?: DeviceBuffer | undefined;
  bias?: DeviceBuffer | undefined;
  residual?: DeviceBuffer | undefined;
}

/**
 * One launch of a sequence, ready to go: the planned launch's role, grid, block, shared bytes and
 * programmatic flag, with the loaded function and the packed arguments in place of its kernel name,
 * argument table and values (`programmatic` is also off when the bench turns it off, see {@link preparePlan}).
 */
export type ReadyLaunch = Pick<PlannedLaunch, 'role' | 'grid' | 'block' | 'sharedBytes' | 'programmatic'> & {
  readonly fn: KernelFunction;
  readonly args: PackedKernargs;
};

/** A conv plan turned into launches in stream order: each conv launch, then (split_c) its reduce launches. */
export interface ReadyPlan {
  readonly plan: PlannedSequence['plan'];
  readonly launches: readonly ReadyLaunch[];
}

/** Turns plan kernargs (numbers and buffer views) into hip-runtime values (views of the bound buffers). */
function bindValues(values: PlannedLaunch['kernargs'], buffers: PlanBuffers): unknown[] {
  return values.map((v) => {
    if (typeof v !== 'object') return v;
    const buffer = buffers[v.buffer as keyof PlanBuffers];
    if (!buffer) throw new Error(`the plan binds buffer '${v.buffer}', which was not allocated`);
    return buffer.view(v.offsetBytes);
  });
}

/**
 * Binds a planned launch sequence (the planner's: each conv launch, then for a split plan its
 * reduce launches) to loaded functions and buffers, packing every launch once.
 * A launch is programmatic when the sequence says its target supports it and `programmatic` is
 * not turned off.
 */
export function preparePlan(sequence: PlannedSequence, functions: { conv: KernelFunction; reduce?: KernelFunction | undefined }, buffers: PlanBuffers, programmatic = true): ReadyPlan {
  const launches = sequence.launches.map((l): ReadyLaunch => {
    const fn = functions[l.role];
    if (!fn) throw new Error(`${sequence.plan.kernelName} is split_c: it needs a split-reduce helper kernel`);
    return { role: l.role, fn, grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args: packKernargs(l.signature, bindValues(l.kernargs, buffers) as never), programmatic: programmatic && l.programmatic };
  });
  return { plan: sequence.plan, launches };
}

/** Enqueues one execution of the plan (every launch, in order) on the default stream. */
export function executePlan(device: Device, ready: ReadyPlan): void {
  for (const l of ready.launches) device.launch(l.fn, l.grid, l.block, l.args, { sharedBytes: l.sharedBytes, programmatic: l.programmatic });
}

/**
 * PTX (JIT-compiled by the driver; no ptxas on the device) of a one-thread kernel that spins
 * until `ns` nanoseconds of %globaltimer have passed. Queued ahead of a timed loop it keeps the
 * stream busy while the host enqueues the loop, so the events around the loop see back-to-back
 * GPU work, not the host's launch rate (the blocking-kernel technique of GPU benchmark harnesses).
 */
export const SPIN_PTX = `.version 8.0
.target sm_90
.address_size 64

// Spins until ns nanoseconds of %globaltimer have passed, or 2^22 rounds (a timer that does not
// advance must not hang the bench).
.visible .entry rocke_spin(
	.param .u64 rocke_spin_param_0
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [rocke_spin_param_0];
	mov.u32 	%r1, 0;
	mov.u64 	%rd2, %globaltimer;
$L__loop:
	add.s32 	%r1, %r1, 1;
	setp.ge.u32 	%p2, %r1, 4194304;
	@%p2 bra 	$L__done;
	mov.u64 	%rd3, %globaltimer;
	sub.s64 	%rd4, %rd3, %rd2;
	setp.lt.u64 	%p1, %rd4, %rd1;
	@%p1 bra 	$L__loop;
$L__done:
	ret;
}
`;

/** Loads the spin kernel; undefined when the driver cannot (then timing runs without it). */
export function loadSpinKernel(device: Device): KernelFunction | undefined {
  if (device.info.backend !== 'cuda') return undefined;
  try {
    return device.loadModule(SPIN_PTX).getFunction('rocke_spin', [{ name: 'ns', type: 'i64' }]);
  } catch {
    return undefined;
  }
}

/** Timing of one plan. */
export interface PlanTiming {
  /** Median over the timed repetitions of (event time of the repetition / executions per repetition). */
  medianMs: number;
  minMs: number;
  /** Back-to-back executions between the two events of one repetition. */
  inner: number;
  reps: number;
  /**
   * `graph`: each repetition is one launch of a captured graph of `inner` executions (how
   * cudnn_baseline.py times cuDNN); `spin`: each repetition queued behind the spin kernel (GPU
   * time); `plain`: launched as the host goes.
   */
  method: 'graph' | 'spin' | 'plain';
  /** Why graph timing was asked for but not used (capture unavailable or failed): the method is the fallback. */
  graphFallback?: string;
}

/** Options of {@link timePlan}. */
export interface TimingOptions {
  /** Untimed executions first (default 3). */
  warmup?: number;
  /** Timed repetitions (default 20). */
  iters?: number;
  /** Aim for at least this much GPU time per repetition (default 1 ms), capped at `maxInner` executions. */
  targetRepMs?: number;
  maxInner?: number;
  /** The spin kernel ({@link loadSpinKernel}); without it repetitions are launched as the host goes. */
  spin?: KernelFunction | undefined;
  /** Time each repetition as one launch of a captured graph when the device can capture (default true); the spin kernel is the fallback. */
  graphs?: boolean;
}

/** Untimed replays of a freshly captured graph before the timed ones (cudnn_baseline.py replays 3). */
export const GRAPH_WARM_REPLAYS = 3;

/** Launches in flight behind the spin kernel at most (well inside the driver's launch queue). */
export const MAX_QUEUED_LAUNCHES = 512;

/**
 * Times a plan with device events. After the warm-up (which also measures the host's enqueue time
 * per execution), one event-timed execution sizes the loop to `inner` executions. Then, where the
 * device can capture graphs (and `graphs` is not false), `inner` back-to-back executions of the
 * whole plan (conv and reduce launches) are captured once into a graph, replayed
 * {@link GRAPH_WARM_REPLAYS} times untimed, and each repetition is an event, one graph launch and
 * an event, counted as (elapsed / inner): the method cudnn_baseline.py times cuDNN with.
 * Otherwise (or when capture fails: `graphFallback` says why) each repetition queues the spin
 * kernel for 1.5 × the loop's host enqueue time + 50 µs, records an event, enqueues the `inner`
 * executions, records a second event. Without a spin kernel either the loop runs as the host
 * launches it, so plans shorter than the host's launch cost (~6 µs per launch) are charged that
 * cost. The median of the repetitions is the result.
 */
export function timePlan(device: Device, ready: ReadyPlan, options: TimingOptions = {}): PlanTiming {
  const warmup = options.warmup ?? 3;
  const reps = options.iters ?? 20;
  const target = options.targetRepMs ?? 1;
  const perExec = Math.max(1, ready.launches.length);
  const maxInner = Math.max(1, Math.min(options.maxInner ?? 200, Math.floor(MAX_QUEUED_LAUNCHES / perExec)));
  const start = device.createEvent();
  const end = device.createEvent();
  try {
    const host = performance.now();
    for (let i = 0; i < warmup; i++) executePlan(device, ready);
    start.record();
    executePlan(device, ready);
    end.record();
    const hostPerExec = (performance.now() - host) / (warmup + 1);
    end.synchronize();
    const once = elapsedMs(start, end);
    const inner = Math.max(1, Math.min(maxInner, once > 0 ? Math.ceil(target / once) : maxInner));
    let graph: Graph | undefined;
    let graphFallback: string | undefined;
    if (options.graphs !== false) {
      const support = device.graphSupport();
      if (!support.supported) {
        graphFallback = `the ${device.info.backend} library cannot capture graphs (it lacks ${support.missingSymbols.join(', ')})`;
      } else {
        try {
          graph = device.captureGraph(() => {
            for (let i = 0; i < inner; i++) executePlan(device, ready);
          });
        } catch (err) {
          graphFallback = `graph capture failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
        }
      }
    }
    const fallback = graphFallback === undefined ? {} : { graphFallback };
    if (graph) {
      try {
        for (let i = 0; i < GRAPH_WARM_REPLAYS; i++) graph.launch();
        const samples: number[] = [];
        for (let r = 0; r < reps; r++) {
          start.record();
          graph.launch();
          end.record();
          end.synchronize();
          samples.push(elapsedMs(start, end) / inner);
        }
        samples.sort((a, b) => a - b);
        return { medianMs: median(samples), minMs: samples[0]!, inner, reps, method: 'graph' };
      } finally {
        graph.destroy();
      }
    }
    const spinNs = BigInt(Math.round((1.5 * hostPerExec * inner + 0.05) * 1e6));
    const samples: number[] = [];
    for (let r = 0; r < reps; r++) {
      if (options.spin) device.launch(options.spin, 1, 1, [spinNs]);
      start.record();
      for (let i = 0; i < inner; i++) executePlan(device, ready);
      end.record();
      end.synchronize();
      samples.push(elapsedMs(start, end) / inner);
    }
    samples.sort((a, b) => a - b);
    return { medianMs: median(samples), minMs: samples[0]!, inner, reps, method: options.spin ? 'spin' : 'plain', ...fallback };
  } finally {
    start.destroy();
    end.destroy();
  }
}

/** Median of sorted numbers (mean of the middle two for an even count). */
export function median(sorted: readonly number[]): number {
  if (sorted.length === 0) throw new RangeError('median of no values');
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}
