import type { Epilogue } from '@rocke/ir';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.js';
import { identityId, KernelCache, type CacheEntry } from '../cache/cache.js';
import type { BenchRequest } from './requests.js';
import { type CompileAllProgress, type CompileAllReport } from '../compile/compile-all.js';
import { compileCapped } from '../compile/capped.js';
import type { AnyPruner } from '../compile/family.js';
import type { JsonValue } from '../hash.js';
import type { KernelCompiler, TargetName } from '../compile/llvm-toolchain.js';
import type { OpPlanner, PlannedSelection } from '../planner.js';
import { BENCH_MANIFEST, parseBenchManifest, type BenchManifest, type ManifestCandidate, type ManifestHelper, type ManifestShape } from './manifest.js';

/** Options of {@link benchPrep}. */
export interface BenchPrepOptions {
  /** The family whose candidates are selected, compiled and exported (cli/wiring.ts: conv-direct's). */
  planner: OpPlanner;
  problems: BenchRequest['problems'];
  target: TargetName;
  /** Kernels directory to write: `bench-manifest.json` plus `blobs/` (content-addressed, deduplicated). */
  outDir: string;
  /** The compile cache compile-all fills (and skips up-to-date entries in). */
  cache: KernelCache;
  compiler: KernelCompiler;
  pruner: AnyPruner | null;
  /** Candidates per shape at most (default: the planner's `defaultCap`), shared by its variants. */
  cap?: number;
  /** Only these variants of each shape (default: every apt one); the cap is shared by those. */
  variants?: readonly string[];
  /**
   * Compile every candidate with this fused epilogue (split_c: its split-reduce helpers), the same
   * selection as the bare run, so a fused and a bare bench compare the same tiles.
   */
  epilogue?: Epilogue;
  jobs?: number;
  progress?: CompileAllProgress;
  signal?: AbortSignal;
}

/** What {@link benchPrep} did. */
export interface BenchPrepResult {
  manifest: BenchManifest;
  compile: CompileAllReport;
  /** Distinct code blobs in the kernels directory and their total bytes. */
  blobs: number;
  bytes: number;
  /** Shapes whose selection threw for some variant (that variant is left out; the rest was prepared), with the reasons. */
  failedShapes: { name: string; reasons: string[] }[];
}

/**
 * Compiles what `rocke bench` needs for a suite on a machine without a GPU, and exports it:
 * per shape the candidates the planner selects (the same selection compile-all uses, in bench
 * order under the cap), compiled through compile-all (the cache skips up-to-date entries; the
 * pruner drops spilling entries), plus the planner's helper kernels. The cap counts usable
 * kernels: for each one that fails to compile or is pruned, the next candidate of the shape's
 * ranking is compiled ({@link compileCapped}; the notes say how many). The kernels directory
 * holds only the code blobs, content-addressed like the cache (identical code is stored once),
 * and the manifest. Blobs of earlier runs no longer referenced are removed so the directory stays
 * small. A shape whose selection throws (a chooser's PlanError) is recorded in `failedShapes` and
 * its manifest notes; the other shapes are still prepared.
 */
export async function benchPrep(options: BenchPrepOptions): Promise<BenchPrepResult> {
  const { planner, target, cache, compiler } = options;
  const cap = options.cap ?? planner.defaultCap;
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a positive integer (got ${cap})`);
  const flavor = compiler.flavor;
  const failedShapes: BenchPrepResult['failedShapes'] = [];
  const selections = planner.select(options.problems, target, { cap, ...(options.variants ? { variants: options.variants } : {}), ...(options.epilogue ? { epilogue: options.epilogue } : {}) });
  const perShape = selections.map((selection) => {
    const reasons = selection.variants.flatMap((v) => (v.error ? [`${v.variant}: ${v.error}`] : []));
    if (reasons.length) failedShapes.push({ name: selection.name, reasons });
    return { selection, available: Object.fromEntries(selection.variants.map((v) => [v.variant, v.valid])), notes: selectionNotes(selection) };
  });

  // Each shape's cap counts usable kernels: one that fails to compile or is pruned (a spilling
  // binary, a twin) is replaced by the next of the shape's ranking.
  const helperFamily = planner.helperFamily(options.epilogue);
  const capped = await compileCapped({
    cache,
    family: planner.family,
    targets: [target],
    lists: selections.map((s) => ({ target, cap: s.cap, ranked: s.ranked.map(({ variant, spec }) => ({ variant, spec })) })),
    alongside: [helperFamily],
    compiler,
    // The emitter string is the packages' version (0.0.0 in the tree), so a kernel-builder edit
    // leaves it unchanged: without the IR check the bench would time stale cubins of old code.
    checkIr: true,
    pruner: options.pruner,
    ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const compile = capped.report;
  const failures = new Map(compile.failed.filter((f) => f.id).map((f) => [f.id!, f]));

  const out = new KernelCache(options.outDir).ensure();
  const referenced = new Set<string>();
  const exportCode = (entry: CacheEntry) => {
    const bytes = cache.readBlob(entry.code);
    out.putBlob(bytes);
    referenced.add(entry.code.digest);
    return { digest: entry.code.digest, size: entry.code.size, kind: entry.code.kind };
  };
  /** The usable entry of an identity, or the reason it is not usable. */
  const lookup = (family: string, variant: string, spec: JsonValue): CacheEntry | string => {
    const id = identityId({ family, variant, target, flavor, spec });
    const failure = failures.get(id);
    if (failure) return `failed to compile (${failure.stage}): ${failure.message.split('\n')[0]}`;
    const entry = cache.getEntry(id);
    if (!entry) return 'not in the cache after compile-all';
    if (entry.pruned) return `pruned: ${entry.pruned.reason}`;
    return entry;
  };

  const shapes: ManifestShape[] = perShape.map(({ selection, available, notes }, i) => {
    const candidates: ManifestCandidate[] = [];
    const backfilled = capped.backfilled[i]!;
    if (backfilled > 0) notes.push(`${backfilled} candidate(s) after the cap of ${selection.cap} back-filled for kernels that failed to compile or were pruned (${capped.usable[i]} usable)`);
    for (const { variant, spec, kernelName, score } of selection.ranked.slice(0, capped.built[i]!.length)) {
      const entry = lookup(planner.family.name, variant, spec as JsonValue);
      if (typeof entry === 'string') {
        notes.push(`${kernelName}: ${entry}`);
        continue;
      }
      candidates.push({ kernelName: entry.kernelName, variant, spec: { ...(spec as Record<string, unknown>) }, code: exportCode(entry), score });
    }
    return { name: selection.name, cls: selection.cls, problem: { ...selection.problem }, candidates, available, notes };
  });
  const helpers: ManifestHelper[] = [];
  for (const { variant, spec } of helperFamily.candidates(target)) {
    const entry = lookup(helperFamily.name, variant, spec as JsonValue);
    if (typeof entry === 'string') continue; // a shape whose plans need it then reports the missing helper when it runs
    helpers.push({ kernelName: entry.kernelName, spec: { ...(spec as Record<string, unknown>) }, code: exportCode(entry) });
  }
  const manifest = parseBenchManifest({ format: 1, target, cap, toolchain: await compiler.fingerprint(target), shapes, helpers, ...(options.epilogue ? { epilogue: options.epilogue } : {}) });
  writeFileAtomic(join(options.outDir, BENCH_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
  let bytes = 0;
  for (const d of out.listBlobDigests()) {
    if (!referenced.has(d)) out.removeBlob(d);
    else bytes += out.blobStat(d)?.size ?? 0;
  }
  return { manifest, compile, blobs: referenced.size, bytes, failedShapes };
}

/** A shape's selection notes: variants whose selection failed, and those the cap cut. */
function selectionNotes(selection: PlannedSelection): string[] {
  return selection.variants.flatMap((v) => [
    ...(v.error ? [`${v.variant}: selection failed: ${v.error}`] : []),
    ...(v.valid > v.selected ? [`${v.variant}: ${v.selected} of ${v.valid} valid candidates kept (spill heuristic, then the shape's cap of ${selection.cap} by predicted time)`] : []),
  ]);
}
