import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.js';
import { KernelCache } from '../cache/cache.js';
import { RecordIntegrityError } from '../cache/records.js';
import { canonicalJson } from '../hash.js';
import type { TargetName } from '../compile/llvm-toolchain.js';
import type { OpChoice, OpProblem, OpRuntime } from '../planner.js';
import { cacheSource, CATALOG_MANIFEST, catalogSchema, problemJson, type Catalog } from './kernel-source.js';

/** What {@link buildCatalog} wrote. */
export interface CatalogReport {
  dir: string;
  target: string;
  kernels: number;
  helpers: number;
  bytes: number;
  plans: Catalog['plans'];
  /** Suite shapes no kept kernel serves, with the reason. */
  unplanned: { name: string; reason: string }[];
}

/**
 * Writes an AOT catalog for `target` into `out` from the kernel cache (and bench manifest) at
 * `cacheDir` and the tuning records beside it: every kept code object of the target and the
 * split-reduce helpers (content-addressed under `out/blobs/`), the records for the target, and
 * per suite shape the plan `runtime` chooses (record, else ranker). The directory needs nothing else at run
 * time: `openConv(problem, { device, catalog: out })` reads it with no LLVM, compile or search.
 * `out` must be empty or absent; the manifest is written last.
 */
export function buildCatalog<P extends OpProblem, C extends OpChoice, O>(runtime: OpRuntime<P, C, O>, cacheDir: string, target: TargetName, out: string, problems: readonly { name: string; problem: P }[] = []): CatalogReport {
  mkdirSync(out, { recursive: true });
  if (readdirSync(out).length) throw new Error(`${out} is not empty; a catalog is written into a fresh directory`);
  const source = cacheSource(cacheDir, runtime.families);
  const blobs = new KernelCache(out).ensure();
  const kernels = [...source.kernels(target).values()].filter((k) => runtime.isSpec(k.spec)).sort((a, b) => (a.kernelName < b.kernelName ? -1 : 1));
  const helpers = [...source.helpers(target)].sort((a, b) => (a.kernelName < b.kernelName ? -1 : 1));
  let bytes = 0;
  for (const k of [...kernels, ...helpers]) {
    blobs.putBlob(source.readCode(k.code));
    bytes += k.code.size;
  }
  const available = new Set(kernels.map((k) => k.kernelName));
  const records: Catalog['records'] = [];
  const plans: Catalog['plans'] = [];
  const unplanned: CatalogReport['unplanned'] = [];
  for (const { name, problem } of problems) {
    let record;
    try {
      record = source.record(target, problemJson(problem));
    } catch (err) {
      if (!(err instanceof RecordIntegrityError)) throw err;
      unplanned.push({ name, reason: err.message });
    }
    if (record && !records.some((r) => r.key === record.key)) records.push(record);
    const choice = runtime.choose(problem, target, {
      available: (n) => available.has(n),
      ...(record ? { record: { spec: record.choice.spec, launch: record.choice.launch, timeMs: record.timeMs, device: record.device.name, date: record.date } } : {}),
    });
    if ('reason' in choice) {
      unplanned.push({ name, reason: choice.reason });
      continue;
    }
    plans.push({ name: name || runtime.label(problem), problem: problemJson(problem), kernelName: choice.kernelName, launch: choice.splits === undefined ? {} : { splits: choice.splits }, chosenBy: choice.chosenBy, explain: [...choice.explain] });
  }
  const toolchain = [...new Set(kernels.map((k) => k.toolchain))].sort().join(' | ');
  const catalog = catalogSchema.parse({
    format: 1,
    target,
    toolchain,
    kernels: kernels.map(({ kernelName, spec, code }) => ({ kernelName, spec, code })),
    helpers: helpers.map(({ kernelName, spec, code }) => ({ kernelName, spec, code })),
    plans,
    records: records.sort((a, b) => (a.key < b.key ? -1 : 1)),
  });
  writeFileAtomic(join(out, CATALOG_MANIFEST), `${JSON.stringify(JSON.parse(canonicalJson(catalog)), null, 1)}\n`);
  return { dir: out, target, kernels: kernels.length, helpers: helpers.length, bytes, plans, unplanned };
}
