import { spawn } from 'node:child_process';
import { benchVariants, capShares, orderByAtomShares } from '@rocke/conv-direct';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { kernelName, problemCandidates, type Problem } from '@rocke/conv-direct';
import { openDevice, probeRuntime, unavailableMessage, type NativeBinding } from '@rocke/hip-runtime';
import { geometricMean } from './bench-report.js';
import { KernelCache } from '../cache/cache.js';
import type { BenchRequest, RunRequest } from './requests.js';
import type { CliIo } from '../io.js';
import { CONV_DIRECT_FAMILY } from '../compile/families/conv-direct.js';
import { canonicalJson, type JsonValue } from '../hash.js';
import type { NpyArray } from '../npy.js';
import { formatTable } from '../table.js';
import { benchShape, type ShapeBenchOptions, type ShapeResult } from './bench-shape.js';
import { findCudnnScript, runCudnnBaseline, suiteShape, type SuiteShape } from './cudnn.js';
import { parseBenchManifest, readBenchManifest, type BenchManifest, type ManifestShape } from './manifest.js';
import { epilogueShapeText } from './epilogue.js';
import { DEFAULT_PREP_CAP } from './prep.js';

/** Options of {@link gpuBench} and {@link gpuRunConv} beyond the CLI request. */
export interface GpuBenchOptions {
  /** hip-runtime binding (tests inject createFakeBinding()); default: the addon. Implies in-process. */
  binding?: NativeBinding | string;
  /** One child process per shape, so a kernel that kills the GPU context costs only its shape. Default: on, unless `binding` is given or ROCKE_BENCH_ISOLATE=0. */
  isolate?: boolean;
  /** Per-shape caps and verification counts (defaults: 40 candidates, 20 s, top 3 + 4 sampled). */
  shape?: Partial<Omit<ShapeBenchOptions, 'verify' | 'warmup' | 'iters' | 'log'>>;
  python?: string;
  cudnnScript?: string;
  /** Directory for bench-details.json and cudnn.json (default $ROCKE_BENCH_OUT, else none). */
  outDir?: string;
}

/** One line of the per-shape table and the JSON rows. */
export interface BenchLine {
  shape: string;
  class: string;
  result: ShapeResult;
  cudnnMs?: number;
  ratio?: number;
}

const CHILD_OUT = 'ROCKE_BENCH_CHILD_OUT';
/** Candidates a child must not run: JSON `{kernelName: reason}` (they killed the context before). */
const EXCLUDE = 'ROCKE_BENCH_EXCLUDE';
/** Fresh processes per shape after a candidate kills the GPU context (each time without it). */
export const CONTEXT_RETRIES = 3;

function parseExclude(text: string | undefined): Map<string, string> {
  if (!text) return new Map();
  return new Map(Object.entries(JSON.parse(text) as Record<string, string>));
}

function sameProblem(a: Problem | Record<string, unknown>, b: Problem | Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * A manifest built from a compile cache (a GPU machine that also ran compile-all): per problem the
 * valid candidates that are compiled and not pruned, in {@link orderCandidates} order, capped.
 */
export function manifestFromCache(cache: KernelCache, problems: BenchRequest['problems'], target: string, cap = DEFAULT_PREP_CAP): BenchManifest {
  const entries = cache.listEntries().entries.filter((e) => e.identity.target === target && !e.pruned && e.code.kind !== 'hsaco');
  const conv = new Map(entries.filter((e) => e.identity.family === CONV_DIRECT_FAMILY).map((e) => [e.kernelName, e]));
  const helpers = entries
    .filter((e) => e.identity.family === 'direct_fwd_helper')
    .map((e) => ({ kernelName: e.kernelName, spec: e.identity.spec as Record<string, unknown>, code: e.code }));
  const shapes: ManifestShape[] = problems.map(({ name, cls, problem }) => {
    const candidates: ManifestShape['candidates'] = [];
    const available: Record<string, number> = {};
    const notes: string[] = [];
    const variants = benchVariants(problem);
    const quota = capShares(cap, variants.length);
    for (const [i, variant] of variants.entries()) {
      const valid = problemCandidates(problem, target as 'sm_90', { variant }).valid;
      available[variant] = valid.length;
      const compiled = valid.filter((s) => conv.has(kernelName(s)));
      if (compiled.length === 0) notes.push(`${variant}: none of ${valid.length} valid candidates is compiled in the cache`);
      for (const o of orderByAtomShares(compiled, problem, quota[i]!)) {
        const e = conv.get(o.score.kernelName)!;
        candidates.push({ kernelName: e.kernelName, variant: o.spec.variant, spec: { ...o.spec }, code: e.code, score: o.score.score });
      }
    }
    return { name, cls, problem: { ...problem }, candidates, available, notes };
  });
  return parseBenchManifest({ format: 1, target, cap, toolchain: entries[0]?.toolchain ?? '', shapes, helpers });
}

/** The manifest shape for a requested problem: same name and problem, else the same problem. */
function matchShape(manifest: BenchManifest, want: BenchRequest['problems'][number]): ManifestShape | undefined {
  return (
    manifest.shapes.find((s) => s.name === want.name && sameProblem(s.problem, want.problem)) ??
    manifest.shapes.find((s) => sameProblem(s.problem, want.problem))
  );
}

function failedShape(want: BenchRequest['problems'][number], reason: string): ShapeResult {
  return { name: want.name, cls: want.cls, problem: want.problem, status: 'failed', reason, candidates: [], ranking: [], notes: [], wallMs: 0 };
}

function envInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive integer (got '${v}')`);
  return Number(v);
}

/** Runs shapes in this process on one device. */
async function benchInProcess(request: BenchRequest, io: CliIo, manifest: BenchManifest, blobs: KernelCache, options: GpuBenchOptions): Promise<ShapeResult[]> {
  const device = openDevice(options.binding ? { binding: options.binding } : {});
  const log = (line: string) => io.stderr(`${line}\n`);
  try {
    if (device.info.arch !== manifest.target) throw new Error(`the device is ${device.info.name} (${device.info.arch}); the kernels are for ${manifest.target}`);
    const out: ShapeResult[] = [];
    for (const want of request.problems) {
      const shape = matchShape(manifest, want);
      if (!shape) {
        out.push(failedShape(want, `no compiled candidates for this shape in ${request.cacheDir} (run bench-prep with it)`));
        continue;
      }
      log(`${want.name}: ${shape.candidates.length} candidates on ${device.info.name}`);
      try {
        const maxCandidates = options.shape?.maxCandidates ?? envInt(io.env, 'ROCKE_BENCH_MAX_CANDIDATES');
        const budgetS = envInt(io.env, 'ROCKE_BENCH_BUDGET_S');
        const exclude = parseExclude(io.env[EXCLUDE]);
        const { result } = await benchShape(device, { ...shape, name: want.name, cls: want.cls }, manifest.helpers, blobs, {
          ...options.shape,
          ...(maxCandidates !== undefined ? { maxCandidates } : {}),
          ...(options.shape?.budgetMs === undefined && budgetS !== undefined ? { budgetMs: budgetS * 1000 } : {}),
          ...(exclude.size ? { exclude } : {}),
          ...(io.env['ROCKE_BENCH_GRAPHS'] === '0' ? { graphs: false } : {}), // spin-kernel timing, to compare the methods
          ...(io.env['ROCKE_BENCH_PDL'] === '0' ? { programmatic: false } : {}), // plain launches, to compare
          verify: request.verify,
          warmup: request.warmup,
          iters: request.iters,
          ...(manifest.epilogue ? { epilogue: manifest.epilogue } : {}),
          log,
        });
        out.push(result);
      } catch (err) {
        out.push(failedShape(want, (err as Error).message));
      }
    }
    return out;
  } finally {
    closeQuietly(device);
  }
}

/** Closes a device whose context may be lost (then closing fails too, and there is nothing left to keep). */
function closeQuietly(device: { close(): void }): void {
  try {
    device.close();
  } catch {
    // a lost context: the process ends soon anyway
  }
}

/**
 * Runs each shape in a child `rocke bench` process (same CLI entry), collecting its results. When
 * a candidate leaves the GPU context unusable, the shape runs again in a fresh process without it
 * (up to {@link CONTEXT_RETRIES} times); it is then reported as an error, never ranked. A child
 * gets the shape's time budget plus 90 s before it is killed (a hung kernel).
 */
async function benchIsolated(request: BenchRequest, io: CliIo): Promise<ShapeResult[]> {
  const entry = process.argv[1];
  if (!entry) throw new Error('cannot isolate shapes: the CLI entry script is unknown');
  const work = mkdtempSync(join(tmpdir(), 'rocke-bench-'));
  const timeoutMs = (envInt(io.env, 'ROCKE_BENCH_BUDGET_S') ?? 20) * 1000 + 90_000;
  const out: ShapeResult[] = [];
  try {
    for (const [i, want] of request.problems.entries()) {
      const suitePath = join(work, `shape-${i}.json`);
      writeFileSync(suitePath, JSON.stringify({ shapes: [{ name: want.name, cls: want.cls, ...want.problem }] }));
      const args = [...process.execArgv, entry, 'bench', '--suite', suitePath, '--cache-dir', request.cacheDir, '--warmup', String(request.warmup), '--iters', String(request.iters)];
      if (request.verify) args.push('--verify');
      if (request.target) args.push('--target', request.target);
      const exclude: Record<string, string> = {};
      let result: ShapeResult | undefined;
      for (let attempt = 0; attempt <= CONTEXT_RETRIES; attempt++) {
        const resultPath = join(work, `result-${i}-${attempt}.json`);
        const env = { ...io.env, [CHILD_OUT]: resultPath, ...(Object.keys(exclude).length ? { [EXCLUDE]: JSON.stringify(exclude) } : {}) };
        const status = await new Promise<string>((done) => {
          const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
          let last = '';
          child.stderr.on('data', (d: Buffer) => {
            const text = d.toString('utf8');
            io.stderr(text);
            const lines = text.trim().split('\n');
            last = lines[lines.length - 1] ?? last;
          });
          child.on('error', (e) => done(`cannot start ${process.execPath}: ${e.message}`));
          child.on('close', (code, signal) => done(signal ? `killed by ${signal}; last line: ${last}` : `exit ${code}; last line: ${last}`));
        });
        result = existsSync(resultPath)
          ? (JSON.parse(readFileSync(resultPath, 'utf8')) as { results: ShapeResult[] }).results[0]
          : failedShape(want, `the bench process for this shape died (${status})`);
        const culprit = result?.contextLostBy;
        if (!culprit || attempt === CONTEXT_RETRIES) break;
        exclude[culprit] = `left the GPU context unusable in an earlier process: ${result!.reason ?? ''}`.slice(0, 300);
        io.stderr(`${want.name}: again in a fresh process without ${culprit}\n`);
      }
      out.push(result ?? failedShape(want, 'no result'));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}

/** The kernels for a request: the bench manifest of `cacheDir`, else one built from the cache there. */
function loadKernels(request: BenchRequest): { manifest: BenchManifest; blobs: KernelCache } {
  const blobs = new KernelCache(request.cacheDir);
  const manifest = readBenchManifest(request.cacheDir) ?? manifestFromCache(blobs, request.problems, request.target ?? 'sm_90');
  if (request.target && request.target !== manifest.target) throw new Error(`the kernels in ${request.cacheDir} are for ${manifest.target}, not ${request.target}`);
  return { manifest, blobs };
}

/** Formats µs with one decimal. */
const us = (ms: number | undefined) => (ms === undefined ? '-' : (ms * 1000).toFixed(1));

/** The per-shape table and the per-class geometric means of the ratios. */
export function benchTable(lines: readonly BenchLine[]): string {
  const rows = lines.map((l) => {
    const b = l.result.best;
    const verify = l.result.status !== 'ok' ? `FAILED: ${l.result.reason ?? ''}`.slice(0, 80) : b?.verify ? `${b.verify.pass ? 'pass' : 'FAIL'} (${b.verify.mode})` : 'not verified';
    const failedOthers = l.result.candidates.filter((c) => c.verify && !c.verify.pass).length;
    return [
      l.shape,
      l.class,
      b?.kernelName.replace(/^rocke_direct_/, '') ?? '-',
      b?.variant ?? '-',
      b?.splits ? `s${b.splits}` : b?.merge ? `gm${b.merge}` : '-',
      us(b?.medianMs),
      us(l.cudnnMs),
      l.ratio === undefined ? '-' : `${l.ratio.toFixed(2)}x`,
      `${verify}${failedOthers ? `; ${failedOthers} other candidate(s) FAILED` : ''}`,
    ];
  });
  let text = formatTable(['shape', 'class', 'best kernel', 'variant', 'splits/merge', 'ours us', 'cuDNN us', 'ratio', 'verify'], rows, ['left', 'left', 'left', 'left', 'left', 'right', 'right', 'right', 'left']);
  const byClass = new Map<string, number[]>();
  for (const l of lines) if (l.ratio !== undefined) byClass.set(l.class, [...(byClass.get(l.class) ?? []), l.ratio]);
  if (byClass.size) {
    text += `\ngeometric mean of cuDNN / ours (above 1: we are faster)\n`;
    text += formatTable(['class', 'shapes', 'geomean'], [...byClass].map(([c, r]) => [c, r.length, `${geometricMean(r).toFixed(3)}x`]), ['left', 'right', 'right']);
    const all = [...byClass.values()].flat();
    text += `\noverall: ${geometricMean(all).toFixed(3)}x over ${all.length} shapes\n`;
  }
  return text;
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
  if (request.vsCudnn) {
    const script = options.cudnnScript ?? findCudnnScript(io.env, io.cwd);
    const shapes = results.map((r) => suiteShape(r.name, r.cls, r.problem)).filter((s): s is SuiteShape => typeof s !== 'string');
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
  }
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
    const g = shape.problem as unknown as Problem;
    const Ho = Math.floor((g.H + 2 * g.padH - g.dilationH * (g.R - 1) - 1) / g.strideH) + 1;
    const Wo = Math.floor((g.W + 2 * g.padW - g.dilationW * (g.S - 1) - 1) / g.strideW) + 1;
    return { dtype: request.x.dtype, shape: [g.N, Ho, Wo, g.K], data: y };
  } finally {
    device.close();
  }
}
