import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { problemJson } from '../api/kernel-source.js';
import { RecordStore, recordKey, RECORD_SCHEMA_VERSION, type TuningRecord } from '../cache/records.js';
import type { JsonValue } from '../hash.js';
import type { CliIo } from '../io.js';
import type { CandidateResult, ShapeResult } from './bench-shape.js';
import { benchResults, type GpuBenchOptions } from './gpu-bench.js';
import { loadKernels } from './kernels.js';
import type { BenchManifest } from './manifest.js';
import type { BenchRequest } from './requests.js';
import type { OpPlanner } from '../planner.js';

/** Runners-up a record keeps. */
export const RUNNERS_UP = 4;

/** One tuned shape: the record it produced (or why none) and what the store kept. */
export interface TuneLine {
  name: string;
  status: 'recorded' | 'kept-faster' | 'failed';
  reason?: string;
  record?: TuningRecord;
}

const launchOf = (c: CandidateResult): Record<string, JsonValue> => (c.splits !== undefined ? { splits: c.splits } : {});

/**
 * The tuning record of one benchmarked shape, or the reason there is none: only a best candidate
 * that passed verification is recorded.
 */
export function recordOf(family: string, result: ShapeResult, manifest: BenchManifest, date: string): TuningRecord | string {
  const best = result.best;
  if (result.status !== 'ok' || !best || best.medianMs === undefined) return result.reason ?? 'no candidate ran';
  if (!best.verify?.pass) return 'the fastest candidate was not verified';
  if (!result.device) return 'the device is unknown';
  const candidate = manifest.shapes.flatMap((s) => s.candidates).find((c) => c.kernelName === best.kernelName);
  if (!candidate) return `${best.kernelName} is not in the kernels' manifest`;
  const problem = problemJson(result.problem);
  const byName = new Map(result.candidates.map((c) => [c.kernelName, c]));
  const runnersUp = result.ranking
    .filter((k) => k !== best.kernelName)
    .slice(0, RUNNERS_UP)
    .map((k) => byName.get(k)!)
    .map((c) => ({ kernelName: c.kernelName, launch: launchOf(c), timeMs: c.medianMs! }));
  return {
    schema: RECORD_SCHEMA_VERSION,
    key: recordKey(family, result.device.arch, problem),
    family,
    arch: result.device.arch,
    problem,
    choice: { kernelName: best.kernelName, spec: candidate.spec as JsonValue, launch: launchOf(best), code: candidate.code },
    timeMs: best.medianMs,
    runnersUp,
    verified: { mode: best.verify.mode },
    device: { name: result.device.name, driver: result.device.driver },
    toolchain: manifest.toolchain,
    date,
  };
}

/**
 * `rocke tune` on a GPU (the CLI's `deps.tune`): benchmarks every shape like `rocke bench
 * --verify` (same kernels directory, same isolation), then writes each shape's verified winner as
 * a tuning record into the records beside the kernels (`<cache-dir>/records/`). The store keeps
 * the faster of an existing record and the new one.
 */
export async function gpuTune(planner: OpPlanner, request: BenchRequest, io: CliIo, options: GpuBenchOptions & { now?: () => Date } = {}): Promise<{ lines: TuneLine[]; failures: number }> {
  const tuned = { ...request, verify: true, vsCudnn: false };
  const { results, child } = await benchResults(planner, tuned, io, options);
  if (child) return { lines: [], failures: results.filter((r) => r.status !== 'ok').length };
  const { manifest } = loadKernels(planner, tuned);
  // The per-candidate times, in the bench's format (the ranker's rows are fitted and evaluated on them).
  const outDir = io.env['ROCKE_BENCH_OUT'];
  if (outDir) {
    mkdirSync(resolve(io.cwd, outDir), { recursive: true });
    writeFileSync(join(resolve(io.cwd, outDir), 'tune-details.json'), `${JSON.stringify({ shapes: results }, null, 1)}\n`);
  }
  const store = new RecordStore(request.cacheDir);
  const date = (options.now?.() ?? new Date()).toISOString();
  const lines = results.map((result): TuneLine => {
    const record = recordOf(planner.family.name, result, manifest, date);
    if (typeof record === 'string') return { name: result.name, status: 'failed', reason: record };
    const { kept, replaced } = store.put(record);
    return { name: result.name, status: replaced ? 'recorded' : 'kept-faster', record: kept };
  });
  return { lines, failures: lines.filter((l) => l.status === 'failed').length };
}
