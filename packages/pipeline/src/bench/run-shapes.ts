// Running a request's shapes on the device: in this process, or one child process per shape so a
// kernel that leaves the GPU context unusable costs only its shape (and is excluded on a retry).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDevice, type NativeBinding } from '@rocke/hip-runtime';
import type { KernelCache } from '../cache/cache.js';
import type { CliIo } from '../io.js';
import { benchShape, type ShapeBenchOptions, type ShapeResult } from './bench-shape.js';
import { matchShape } from './kernels.js';
import type { BenchManifest } from './manifest.js';
import type { BenchRequest } from './requests.js';
import type { OpPlanner } from '../planner.js';

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

/** Set in a child: where it writes its results (JSON) instead of printing. */
export const CHILD_OUT = 'ROCKE_BENCH_CHILD_OUT';
/** Candidates a child must not run: JSON `{kernelName: reason}` (they killed the context before). */
const EXCLUDE = 'ROCKE_BENCH_EXCLUDE';
/** Fresh processes per shape after a candidate kills the GPU context (each time without it). */
export const CONTEXT_RETRIES = 3;

function parseExclude(text: string | undefined): Map<string, string> {
  if (!text) return new Map();
  return new Map(Object.entries(JSON.parse(text) as Record<string, string>));
}

export function failedShape(want: BenchRequest['problems'][number], reason: string): ShapeResult {
  return { name: want.name, cls: want.cls, problem: want.problem, status: 'failed', reason, candidates: [], ranking: [], notes: [], wallMs: 0 };
}

function envInt(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive integer (got '${v}')`);
  return Number(v);
}

/** Runs shapes in this process on one device. */
export async function benchInProcess(planner: OpPlanner, request: BenchRequest, io: CliIo, manifest: BenchManifest, blobs: KernelCache, options: GpuBenchOptions): Promise<ShapeResult[]> {
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
        const { result } = await benchShape(planner, device, { ...shape, name: want.name, cls: want.cls }, manifest.helpers, blobs, {
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
        out.push({ ...result, device: { name: device.info.name, arch: device.info.arch, driver: String(device.info.driverVersion) } });
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
export async function benchIsolated(request: BenchRequest, io: CliIo): Promise<ShapeResult[]> {
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

