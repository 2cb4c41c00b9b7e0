import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probeRuntime, unavailableMessage } from '@rocke/hip-runtime';
import type { CliIo } from '../io.js';
import type { JsonValue } from '../hash.js';
import { benchShape, type ShapeResult } from './bench-shape.js';
import { benchTable, type BenchLine } from './bench-table.js';
import type { OpPlanner } from '../planner.js';
import { findCudnnScript, runCudnnBaseline, type BaselineShape } from './cudnn.js';
import { epilogueShapeText } from './epilogue.js';
import { loadKernels } from './kernels.js';
import type { BenchRequest } from './requests.js';
import { benchInProcess, benchIsolated, CHILD_OUT, type GpuBenchOptions } from './run-shapes.js';

export { benchTable, type BenchLine } from './bench-table.js';
export { manifestFromCache } from './kernels.js';
export { CONTEXT_RETRIES, type GpuBenchOptions } from './run-shapes.js';

/** Runs the cuDNN baseline on the lines' shapes and sets their cuDNN times and ratios (cuDNN ms / ours ms); returns the baseline's error, if any. */
async function joinCudnn(planner: OpPlanner, lines: BenchLine[], io: CliIo, options: GpuBenchOptions, outDir: string | undefined, epilogue: string | undefined): Promise<string | undefined> {
  let cudnnError: string | undefined;
  const script = options.cudnnScript ?? findCudnnScript(io.env, io.cwd);
  const shapes = lines.map((l) => planner.baselineShape(l.result.name, l.result.cls, l.result.problem)).filter((s): s is BaselineShape => typeof s !== 'string' && typeof s['name'] === 'string');
  if (!script) cudnnError = 'cudnn_baseline.py not found (set ROCKE_CUDNN_BASELINE)';
  else {
    io.stderr(`cuDNN baseline: ${script} on ${shapes.length} shape(s)\n`);
    const work = outDir ? resolve(io.cwd, outDir) : mkdtempSync(join(tmpdir(), 'rocke-cudnn-'));
    const run = await runCudnnBaseline(script, shapes, work, (l) => io.stderr(`${l}\n`), options.python, undefined, epilogue ? ['--epilogue', epilogue] : []);
    if (run.error) cudnnError = run.error;
    for (const l of lines) {
      const ms = run.ms.get(l.shape);
      if (ms !== undefined) {
        l.cudnnMs = ms;
        if (l.result.best?.medianMs) l.ratio = ms / l.result.best.medianMs;
      }
    }
  }
  if (cudnnError) io.stderr(`cuDNN baseline: ${cudnnError}\n`);
  return cudnnError;
}

/**
 * Every requested shape benchmarked (see {@link gpuBench}): in a child process per shape unless
 * isolation is off, else in this process. In a child (the isolation's worker) the results are
 * written for the parent and `child` is true.
 */
export async function benchResults(planner: OpPlanner, request: BenchRequest, io: CliIo, options: GpuBenchOptions = {}): Promise<{ results: ShapeResult[]; child: boolean; epilogue: string | undefined }> {
  const probe = probeRuntime(options.binding ? { binding: options.binding } : {});
  if (!probe.available) {
    throw new Error(`no GPU runtime is available on this machine; ${request.problems.length} problem(s) parsed, nothing timed\n${unavailableMessage('auto', probe.attempts, io.env)}`);
  }
  const childOut = io.env[CHILD_OUT];
  const isolate = !childOut && (options.isolate ?? (options.binding === undefined && io.env['ROCKE_BENCH_ISOLATE'] !== '0'));
  // Loaded in the parent too: a bad kernels directory fails early, and the epilogue is the manifest's.
  const { manifest, blobs } = loadKernels(planner, request);
  const epilogue = manifest.epilogue ? epilogueShapeText(manifest.epilogue) : undefined;
  if (epilogue && !childOut) io.stderr(`fused epilogue ${epilogue}: every candidate is timed and verified with it; cuDNN is timed with PyTorch's bias, add and activation after it\n`);
  const results = isolate ? await benchIsolated(request, io) : await benchInProcess(planner, request, io, manifest, blobs, options);
  if (childOut) writeFileSync(childOut, JSON.stringify({ results }));
  return { results, child: childOut !== undefined, epilogue };
}

/**
 * `rocke bench` on a GPU (the CLI's `deps.bench`). Kernels come from `--cache-dir DIR`: the
 * bench manifest `bench-prep` wrote there, else the compiled entries of the cache there. Each shape
 * is benchmarked by {@link benchShape} (in a child process per shape unless disabled); with
 * `--vs-cudnn` the cuDNN baseline script then runs on the same shapes and the rows are joined
 * (ratio = cuDNN ms / ours ms). The per-shape table goes to stderr (stdout carries the command's
 * own summary or `--json`). Failures: shapes without a (verified) best candidate, candidates
 * that failed verification, and shapes without a cuDNN time when one was asked for.
 */
export async function gpuBench(planner: OpPlanner, request: BenchRequest, io: CliIo, options: GpuBenchOptions = {}): Promise<{ rows: JsonValue[]; failures: number }> {
  const { results, child, epilogue } = await benchResults(planner, request, io, options);
  if (child) return { rows: [], failures: results.filter((r) => r.status !== 'ok').length };

  const lines: BenchLine[] = results.map((result) => ({ shape: result.name, class: result.cls ?? 'unclassified', result }));
  let cudnnError: string | undefined;
  const outDir = options.outDir ?? io.env['ROCKE_BENCH_OUT'];
  if (outDir) mkdirSync(resolve(io.cwd, outDir), { recursive: true });
  if (request.vsCudnn) cudnnError = await joinCudnn(planner, lines, io, options, outDir, epilogue);
  const table = benchTable(lines);
  io.stderr(`\n${table}`);
  if (outDir) writeFileSync(join(resolve(io.cwd, outDir), 'bench-table.txt'), table);
  if (outDir) writeFileSync(join(resolve(io.cwd, outDir), 'bench-details.json'), `${JSON.stringify({ shapes: results, cudnnError: cudnnError ?? null }, null, 1)}\n`);

  const rows: JsonValue[] = [];
  for (const l of lines) {
    const b = l.result.best;
    if (!b?.medianMs) continue;
    if (request.vsCudnn && l.cudnnMs === undefined) continue; // the report's rows need both times
    const row: Record<string, JsonValue> = { shape: l.shape, class: l.class, ours_ms: b.medianMs, ...(epilogue ? { epilogue } : {}) };
    if (l.cudnnMs !== undefined) row['cudnn_ms'] = l.cudnnMs;
    row['variant'] = b.variant;
    if (b.splits) row['splits'] = b.splits;
    if (b.merge) row['merge'] = b.merge;
    row['kernel'] = b.kernelName;
    rows.push(row);
  }
  const failures =
    results.filter((r) => r.status !== 'ok').length +
    results.reduce((n, r) => n + r.candidates.filter((c) => c.verify && !c.verify.pass).length, 0) +
    (request.vsCudnn ? lines.filter((l) => l.result.status === 'ok' && l.cudnnMs === undefined).length : 0);
  return { rows, failures };
}
