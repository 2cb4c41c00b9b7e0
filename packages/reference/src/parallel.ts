// Multi-core forward convolution with worker_threads. Each chunk's output rows (n, ho) are split
// into contiguous ranges, one per thread (the main thread takes the first). Every output is summed
// by the same function in the same order whichever thread computes it, so results are identical
// bit for bit to the single-threaded path.
//
// The workers run `convRows` from its source text (`new Worker(code, { eval: true })`), so no
// worker file has to be found on disk: it works from dist and from src under vitest alike.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_BUDGET_BYTES, planChunks, type BatchChunk } from './chunks.js';
import { encodeDtype } from './dtype.js';
import { convRows, type KernelShape } from './kernel.js';
import { largestChunk, operandValues, prepareConv, type ConvChunkOutput, type ConvOptions, type ConvOutput, type Operand } from './conv.js';
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

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const convRows = (${convRows.toString()});
const x = new Float32Array(workerData.x);
const w = new Float32Array(workerData.w);
const y = new Float32Array(workerData.y);
parentPort.on('message', (job) => {
  try {
    convRows(x.subarray(0, job.xLength), w, y.subarray(0, job.yLength), job.shape, job.rowStart, job.rowEnd);
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.stack) || error) });
  }
});
`;

interface RowJob {
  shape: KernelShape;
  xLength: number;
  yLength: number;
  rowStart: number;
  rowEnd: number;
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

/** A set of workers sharing the x chunk, w and y chunk buffers. */
class RowPool {
  private readonly workers: Worker[];
  private readonly x: Float32Array;
  private readonly w: Float32Array;
  private readonly y: Float32Array;

  constructor(helpers: number, xElements: number, w32: Float32Array, yElements: number) {
    this.x = new Float32Array(new SharedArrayBuffer(xElements * 4));
    this.w = new Float32Array(new SharedArrayBuffer(w32.length * 4));
    this.w.set(w32);
    this.y = new Float32Array(new SharedArrayBuffer(yElements * 4));
    const workerData = { x: this.x.buffer, w: this.w.buffer, y: this.y.buffer };
    this.workers = Array.from({ length: helpers }, () => new Worker(WORKER_SOURCE, { eval: true, workerData }));
  }

  /** The shared x buffer, to be filled with the chunk before {@link run}. */
  xChunk(elements: number): Float32Array {
    return this.x.subarray(0, elements);
  }

  /** Compute the chunk's rows over all threads; returns the shared y view (valid until the next run). */
  async run(shape: KernelShape, xLength: number, yLength: number, ranges: [number, number][]): Promise<Float32Array> {
    const [first, ...rest] = ranges;
    const pending = rest.map((range, i) => this.dispatch(this.workers[i] as Worker, { shape, xLength, yLength, rowStart: range[0], rowEnd: range[1] }));
    // Keep the rejections handled even if the main thread's share throws first.
    const all = Promise.all(pending);
    all.catch(() => undefined);
    const xs = this.x.subarray(0, xLength);
    const ys = this.y.subarray(0, yLength);
    if (first) convRows(xs, this.w, ys, shape, first[0], first[1]);
    await all;
    return ys;
  }

  private dispatch(worker: Worker, job: RowJob): Promise<void> {
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

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
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
  const prepared = prepareConv(problem, x, w);
  const plan = planChunks(prepared.geometry, options.budgetBytes ?? DEFAULT_BUDGET_BYTES);
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
  const prepared = prepareConv(problem, x, w);
  const { geometry } = prepared;
  const plan = planChunks(geometry, options.budgetBytes ?? DEFAULT_BUDGET_BYTES);
  const y32 = new Float32Array(geometry.yElements);
  for await (const out of runParallel(prepared, plan, options.threads)) {
    y32.set(out.y32, out.chunk.n0 * geometry.yImageElements);
  }
  return { geometry, chunks: plan, y32, y: encodeDtype(y32, prepared.dtype) };
}

/** Yields each chunk with a view of its output that stays valid only until the next step. */
async function* runParallel(
  prepared: ReturnType<typeof prepareConv>,
  plan: BatchChunk[],
  threadsOption: number | 'auto' | undefined,
): AsyncGenerator<{ chunk: BatchChunk; y32: Float32Array }, void, undefined> {
  const { geometry, shape } = prepared;
  const largest = largestChunk(plan);
  const threads = resolveThreads(threadsOption, geometry.macs / plan.length, largest * geometry.Ho);
  const pool = new RowPool(threads - 1, largest * geometry.xImageElements, prepared.w32, largest * geometry.yImageElements);
  try {
    for (const chunk of plan) {
      const xLength = chunk.count * geometry.xImageElements;
      const yLength = chunk.count * geometry.yImageElements;
      operandValues(prepared.x, prepared.dtype, chunk.n0 * geometry.xImageElements, xLength, pool.xChunk(xLength));
      const y32 = await pool.run(shape, xLength, yLength, splitRows(chunk.count * geometry.Ho, threads));
      yield { chunk, y32 };
    }
  } finally {
    await pool.close();
  }
}
