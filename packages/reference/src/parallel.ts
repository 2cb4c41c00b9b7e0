// Multi-core forward convolution with worker_threads. Each chunk's output rows (n, ho) are split
// into contiguous ranges, one per thread (the main thread takes the first). Every output is summed
// by the same function in the same order whichever thread computes it, so results are identical
// bit for bit to the single-threaded path.
//
// The workers run `convRows` from its source text (`new Worker(code, { eval: true })`), so no
// worker file has to be found on disk: it works from dist and from src under vitest alike.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BatchChunk } from './chunks.js';
import { encodeDtype } from './dtype.js';
import { convRows, type KernelShape } from './kernel.js';
import { largestChunk, operandValues, prepareChunked, type ConvChunkOutput, type ConvOptions, type ConvOutput, type Operand, type PreparedConv } from './conv.js';
import { ConvReferenceError, type ConvProblem } from './problem.js';

/** Options of the multi-threaded reference. */
export interface ParallelConvOptions extends ConvOptions {
  /**
   * Threads including the main one. 'auto' (default) uses one thread below
   * {@link AUTO_THREADS_MIN_MACS} multiply-accumulates (a worker costs tens of milliseconds to
   * start) and all available cores above it.
   */
  threads?: number | 'auto';
}

/** Problems smaller than this many MACs run on one thread under `threads: 'auto'`. */
export const AUTO_THREADS_MIN_MACS = 5e7;

// Jobs carry their SharedArrayBuffers (shared, not copied), so one pool serves every call.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const convRows = (${convRows.toString()});
parentPort.on('message', (job) => {
  try {
    const x = new Float32Array(job.x, 0, job.xLength);
    const w = new Float32Array(job.w);
    const y = new Float32Array(job.y, 0, job.yLength);
    convRows(x, w, y, job.shape, job.rowStart, job.rowEnd);
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.stack) || error) });
  }
});
`;

interface RowJob {
  x: SharedArrayBuffer;
  w: SharedArrayBuffer;
  y: SharedArrayBuffer;
  xLength: number;
  yLength: number;
  shape: KernelShape;
  rowStart: number;
  rowEnd: number;
}

/**
 * Workers are started on first use and kept for later calls (starting one costs tens of
 * milliseconds). Idle workers are unref'd, so they never keep the process alive.
 */
class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly live = new Set<Worker>();

  acquire(count: number): Worker[] {
    const taken: Worker[] = [];
    while (taken.length < count) {
      const worker = this.idle.pop() ?? this.spawn();
      worker.ref();
      taken.push(worker);
    }
    return taken;
  }

  release(workers: Worker[]): void {
    for (const worker of workers) {
      if (!this.live.has(worker)) continue; // it died during the job
      worker.unref();
      this.idle.push(worker);
    }
  }

  async stop(): Promise<void> {
    const all = [...this.live];
    this.live.clear();
    this.idle.length = 0;
    await Promise.all(all.map((w) => w.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    this.live.add(worker);
    worker.on('exit', () => {
      this.live.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    // Errors are reported to the job that is waiting (see runJob); this keeps an idle worker's
    // error from becoming an unhandled 'error' event.
    worker.on('error', () => undefined);
    return worker;
  }
}

const pool = new WorkerPool();

/** Stop the reference's worker threads now (they are unref'd when idle, so this is optional). */
export function stopReferenceWorkers(): Promise<void> {
  return pool.stop();
}

function runJob(worker: Worker, job: RowJob): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { ok: boolean; message?: string }): void => {
      cleanup();
      if (m.ok) resolve();
      else reject(new Error(`reference worker failed: ${m.message ?? 'unknown error'}`));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new Error(`reference worker crashed: ${error.message}`));
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`reference worker exited early with code ${code}`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage(job);
  });
}

/** Threads a call will use: the option resolved against the problem size and the row count. */
export function resolveThreads(threads: number | 'auto' | undefined, macs: number, rows: number): number {
  const requested = threads ?? 'auto';
  if (requested === 'auto') return macs < AUTO_THREADS_MIN_MACS ? 1 : Math.max(1, Math.min(availableParallelism(), rows));
  if (!Number.isSafeInteger(requested) || requested < 1) {
    throw new ConvReferenceError('invalid-argument', `threads must be a positive integer or 'auto', got ${String(requested)}`);
  }
  return Math.max(1, Math.min(requested, rows));
}

/** Contiguous, balanced ranges of [0, rows) for `parts` threads (the first ranges are one longer). */
export function splitRows(rows: number, parts: number): [number, number][] {
  const ranges: [number, number][] = [];
  const base = Math.floor(rows / parts);
  const extra = rows % parts;
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const end = start + base + (i < extra ? 1 : 0);
    if (end > start) ranges.push([start, end]);
    start = end;
  }
  return ranges;
}

/**
 * Forward convolution chunk by chunk over several threads; yields each chunk's output (its own
 * copy) as soon as it is done. Same bits as {@link convForwardChunks}. Workers are started once
 * and stopped when the iteration ends, including early `break`s and errors.
 */
export async function* convForwardChunksParallel(
  problem: ConvProblem,
  x: Operand,
  w: Operand,
  options: ParallelConvOptions = {},
): AsyncGenerator<ConvChunkOutput, void, undefined> {
  const { prepared, plan } = prepareChunked(problem, x, w, options);
  for await (const out of runParallel(prepared, plan, options.threads)) {
    yield { ...out.chunk, y32: out.y32.slice(), y: encodeDtype(out.y32, prepared.dtype) };
  }
}

/**
 * Forward convolution of the whole batch over several threads, chunked under
 * `options.budgetBytes`. Same bits as {@link convForward}.
 */
export async function convForwardParallel(
  problem: ConvProblem,
  x: Operand,
  w: Operand,
  options: ParallelConvOptions = {},
): Promise<ConvOutput> {
  const { prepared, plan } = prepareChunked(problem, x, w, options);
  const { geometry } = prepared;
  const y32 = new Float32Array(geometry.yElements);
  for await (const out of runParallel(prepared, plan, options.threads)) {
    y32.set(out.y32, out.chunk.n0 * geometry.yImageElements);
  }
  return { geometry, chunks: plan, y32, y: encodeDtype(y32, prepared.dtype) };
}

/** Yields each chunk with a view of its output that stays valid only until the next step. */
async function* runParallel(
  prepared: PreparedConv,
  plan: BatchChunk[],
  threadsOption: number | 'auto' | undefined,
): AsyncGenerator<{ chunk: BatchChunk; y32: Float32Array }, void, undefined> {
  const { geometry, shape } = prepared;
  const largest = largestChunk(plan);
  const threads = resolveThreads(threadsOption, geometry.macs / plan.length, largest * geometry.Ho);
  const x = new SharedArrayBuffer(largest * geometry.xImageElements * 4);
  const y = new SharedArrayBuffer(largest * geometry.yImageElements * 4);
  const w = new SharedArrayBuffer(prepared.w32.length * 4);
  new Float32Array(w).set(prepared.w32);
  const xAll = new Float32Array(x);
  const wAll = new Float32Array(w);
  const yAll = new Float32Array(y);
  const helpers = pool.acquire(threads - 1);
  try {
    for (const chunk of plan) {
      const xLength = chunk.count * geometry.xImageElements;
      const yLength = chunk.count * geometry.yImageElements;
      const xs = xAll.subarray(0, xLength);
      const ys = yAll.subarray(0, yLength);
      operandValues(prepared.x, prepared.dtype, chunk.n0 * geometry.xImageElements, xLength, xs);
      const [mine, ...theirs] = splitRows(chunk.count * geometry.Ho, threads);
      const jobs = theirs.map((range, i) =>
        runJob(helpers[i] as Worker, { x, w, y, xLength, yLength, shape, rowStart: range[0], rowEnd: range[1] }),
      );
      // The main thread computes the first range while the workers do the rest. Every job is
      // settled before anything is thrown, so a worker goes back to the pool only when idle.
      let mainError: unknown;
      try {
        if (mine) convRows(xs, wAll, ys, shape, mine[0], mine[1]);
      } catch (error) {
        mainError = error ?? new Error('reference main-thread share failed');
      }
      const settled = await Promise.allSettled(jobs);
      if (mainError !== undefined) throw mainError;
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
      yield { chunk, y32: ys };
    }
  } finally {
    pool.release(helpers);
  }
}
