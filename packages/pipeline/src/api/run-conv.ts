import { openDevice, type NativeBinding } from '@rocke/hip-runtime';
import type { TargetName } from '../compile/llvm-toolchain.js';
import type { CliIo } from '../io.js';
import type { NpyArray } from '../npy.js';
import { encodeDtype, type EpilogueValues } from '@rocke/reference';
import type { OpChoice, OpEpilogue, OpProblem, OpRuntime } from '../planner.js';
import { openOp, type OpenOptions } from './open-conv.js';

/** The epilogue of `rocke run`'s flags as an open's: its shape from the tensors given, and its scalars. */
export function runEpilogue(e: EpilogueValues): OpEpilogue {
  const bias = e.bias === undefined ? 'none' : e.bias instanceof Float32Array ? 'fp32' : 'dtype';
  const { alpha, beta, slope, lo, hi } = e;
  const scalars = Object.fromEntries(Object.entries({ alpha, beta, slope, lo, hi }).filter(([, v]) => v !== undefined));
  return { act: e.act, bias, residual: e.residual !== undefined, ...scalars };
}

/** Request handed to a run implementation (x, w already checked against the problem). */
export interface RunRequest {
  problem: OpProblem;
  x: NpyArray;
  w: NpyArray;
  target: TargetName | null;
  cacheDir: string;
  /** Calls of the conv's run() (default 1): with more, the host time per call is reported. */
  repeat?: number;
  /** A fused epilogue (`--act`, `--bias`, `--residual`, ...): the run opens the fused kernels and binds its tensors. */
  epilogue?: EpilogueValues;
}

/** Calls enqueued per timed batch of `--repeat`: far below the launch queue's depth (about a thousand). */
const HOST_TIMING_BATCH = 64;

/**
 * `rocke run` on a GPU (the CLI's `deps.runConv`): opens the problem with {@link openOp} over the
 * kernels and tuning records of `--cache-dir` (a record hit times nothing; else the runtime's
 * ranker chooses), runs it once on the given x and w (with a fused epilogue: its kernels, bias and
 * residual), and returns y.
 */
export async function gpuRun<P extends OpProblem, C extends OpChoice, O>(runtime: OpRuntime<P, C, O>, request: RunRequest, io: CliIo, options: { binding?: NativeBinding | string } = {}): Promise<NpyArray> {
  const device = openDevice(options.binding ? { binding: options.binding } : {});
  try {
    if (request.target && device.info.arch !== request.target) throw new Error(`the device is ${device.info.name} (${device.info.arch}), not ${request.target}`);
    const e = request.epilogue;
    // None of the family's own options (each is optional: Partial<O>).
    const opening: OpenOptions<O> = { device, cache: request.cacheDir, ...(e ? { epilogue: runEpilogue(e) } : {}) } as OpenOptions<O>;
    const conv = openOp(runtime, request.problem as P, opening);
    try {
      io.stderr(`rocke run: ${conv.choice.kernelName}${conv.choice.splits !== undefined ? ` splits ${conv.choice.splits}` : ''} (chosen by ${conv.choice.chosenBy})\n`);
      for (const line of conv.choice.explain) io.stderr(`  ${line}\n`);
      const g = runtime.tensors(request.problem as P);
      const x = device.upload(request.x.data);
      const w = device.upload(request.w.data);
      const y = device.alloc(g.yBytes);
      const fused = { ...(e?.bias ? { bias: device.upload(e.bias) } : {}), ...(e?.residual ? { residual: device.upload(e.residual instanceof Float32Array ? encodeDtype(e.residual, request.problem.dtype) : e.residual) } : {}) };
      const repeat = request.repeat ?? 1;
      conv.run(x, w, y, fused);
      device.synchronize();
      if (repeat > 1) {
        // Timed in batches with an untimed synchronize between them: a long kernel would otherwise fill
        // the driver's launch queue and the enqueue would block on the GPU, timing the kernel, not the host.
        let hostMs = 0;
        for (let done = 1; done < repeat; ) {
          const batch = Math.min(HOST_TIMING_BATCH, repeat - done);
          const t0 = performance.now();
          for (let i = 0; i < batch; i++) conv.run(x, w, y, fused);
          hostMs += performance.now() - t0;
          device.synchronize();
          done += batch;
        }
        const hostUs = (hostMs * 1000) / (repeat - 1);
        io.stderr(`rocke run: host time per run() call ${hostUs.toFixed(2)} us over ${repeat - 1} calls (enqueue only, in batches of ${HOST_TIMING_BATCH}; ${conv.launches.filter((l) => l.role === 'conv').length} conv launch(es)${conv.launches.some((l) => l.role === 'reduce') ? ' + reduce' : ''} each, no timing)\n`);
      }
      return { dtype: request.x.dtype, shape: g.yShape, data: y.read(new Uint16Array(g.yBytes / 2)) };
    } finally {
      conv.close();
    }
  } finally {
    device.close();
  }
}
