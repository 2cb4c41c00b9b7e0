import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { problemGeometry, type Problem } from '@rocke/conv-direct';
import { openDevice, probeRuntime, unavailableMessage } from '@rocke/hip-runtime';
import type { CliIo } from '../io.js';
import type { JsonValue } from '../hash.js';
import type { NpyArray } from '../npy.js';
import { benchShape, type ShapeResult } from './bench-shape.js';
import { benchTable, us, type BenchLine } from './bench-table.js';
import { findCudnnScript, runCudnnBaseline, suiteShape, type SuiteShape } from './cudnn.js';
import { epilogueShapeText } from './epilogue.js';
import { loadKernels, matchShape } from './kernels.js';
import type { BenchRequest, RunRequest } from './requests.js';
import { benchInProcess, benchIsolated, CHILD_OUT, type GpuBenchOptions } from './run-shapes.js';

export { benchTable, type BenchLine } from './bench-table.js';
export { manifestFromCache } from './kernels.js';
export { CONTEXT_RETRIES, type GpuBenchOptions } from './run-shapes.js';

/** Runs the cuDNN baseline on the lines' shapes and sets their cuDNN times and ratios (cuDNN ms / ours ms); returns the baseline's error, if any. */
async function joinCudnn(lines: BenchLine[], io: CliIo, options: GpuBenchOptions, outDir: string | undefined, epilogue: string | undefined): Promise<string | undefined> {
  let cudnnError: string | undefined;
  const script = options.cudnnScript ?? findCudnnScript(io.env, io.cwd);
  const shapes = lines.map((l) => suiteShape(l.result.name, l.result.cls, l.result.problem)).filter((s): s is SuiteShape => typeof s !== 'string');
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
 * `rocke bench` on a GPU (the CLI's `deps.bench`). Kernels come from `--cache-dir DIR`: the
 * bench manifest `bench-prep` wrote there, else the compiled entries of the cache there. Each shape
 * is benchmarked by {@link benchShape} (in a child process per shape unless disabled); with
 * `--vs-cudnn` the cuDNN baseline script then runs on the same shapes and the rows are joined
 * (ratio = cuDNN ms / ours ms). The per-shape table goes to stderr (stdout carries the command's
 * own summary or `--json`). Failures: shapes without a (verified) best candidate, candidates
 * that failed verification, and shapes without a cuDNN time when one was asked for.
 */
export async function gpuBench(request: BenchRequest, io: CliIo, options: GpuBenchOptions = {}): Promise<{ rows: JsonValue[]; failures: number }> {
  const probe = probeRuntime(options.binding ? { binding: options.binding } : {});
  if (!probe.available) {
    throw new Error(`no GPU runtime is available on this machine; ${request.problems.length} problem(s) parsed, nothing timed\n${unavailableMessage('auto', probe.attempts, io.env)}`);
  }
  const childOut = io.env[CHILD_OUT];
  const isolate = !childOut && (options.isolate ?? (options.binding === undefined && io.env['ROCKE_BENCH_ISOLATE'] !== '0'));
  let results: ShapeResult[];
  // Loaded in the parent too: a bad kernels directory fails early, and the epilogue is the manifest's.
  const { manifest, blobs } = loadKernels(request);
  const epilogue = manifest.epilogue ? epilogueShapeText(manifest.epilogue) : undefined;
  if (epilogue && !childOut) io.stderr(`fused epilogue ${epilogue}: every candidate is timed and verified with it; cuDNN is timed with PyTorch's bias, add and activation after it\n`);
  if (isolate) results = await benchIsolated(request, io);
  else results = await benchInProcess(request, io, manifest, blobs, options);
  if (childOut) {
    writeFileSync(childOut, JSON.stringify({ results }));
    return { rows: [], failures: results.filter((r) => r.status !== 'ok').length };
  }

  const lines: BenchLine[] = results.map((result) => ({ shape: result.name, class: result.cls ?? 'unclassified', result }));
  let cudnnError: string | undefined;
  const outDir = options.outDir ?? io.env['ROCKE_BENCH_OUT'];
  if (outDir) mkdirSync(resolve(io.cwd, outDir), { recursive: true });
  if (request.vsCudnn) cudnnError = await joinCudnn(lines, io, options, outDir, epilogue);
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

/**
 * `rocke run` on a GPU (the CLI's `deps.runConv`): times the problem's candidates briefly (3
 * repetitions each, no verification), runs the fastest on the given x and w, and returns y.
 */
export async function gpuRunConv(request: RunRequest, io: CliIo, options: GpuBenchOptions = {}): Promise<NpyArray> {
  const bench: BenchRequest = { problems: [{ name: 'run', problem: request.problem, cls: null }], target: request.target, verify: false, vsCudnn: false, warmup: 1, iters: 3, cacheDir: request.cacheDir };
  const { manifest, blobs } = loadKernels(bench);
  if (manifest.epilogue) throw new Error(`the kernels in ${request.cacheDir} are fused with ${epilogueShapeText(manifest.epilogue)}; rocke run needs bare kernels`);
  const shape = matchShape(manifest, bench.problems[0]!);
  if (!shape || shape.candidates.length === 0) throw new Error(`no compiled candidates for this problem in ${request.cacheDir} (run bench-prep or compile-all)`);
  const device = openDevice(options.binding ? { binding: options.binding } : {});
  try {
    if (device.info.arch !== manifest.target) throw new Error(`the device is ${device.info.arch}; the kernels are for ${manifest.target}`);
    const { result, y } = await benchShape(device, shape, manifest.helpers, blobs, {
      ...options.shape,
      verify: false,
      warmup: 1,
      iters: 3,
      inputs: { x: request.x.data as Uint16Array, w: request.w.data as Uint16Array },
      keepOutput: true,
      log: (l) => io.stderr(`${l}\n`),
    });
    if (!y || !result.best) throw new Error(`no candidate ran: ${result.reason ?? 'unknown'}`);
    io.stderr(`rocke run: ${result.best.kernelName} (${us(result.best.medianMs)} us)\n`);
    const p = shape.problem as unknown as Problem;
    const { Ho, Wo } = problemGeometry(p);
    return { dtype: request.x.dtype, shape: [p.N, Ho, Wo, p.K], data: y };
  } finally {
    device.close();
  }
}
