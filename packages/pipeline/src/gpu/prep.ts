import { buildConvKernel, kernelName as convKernelName, problemCandidates, problemGeometry, type Problem, type Spec, type Variant } from '@rocke/conv-direct';
import { helperSpecs, kernelName as reduceKernelName } from '@rocke/split-reduce';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.js';
import { identityId, KernelCache, type CacheEntry } from '../cache.js';
import type { BenchRequest } from '../cli-io.js';
import { compileAll, type CompileAllProgress, type CompileAllReport } from '../compile-all.js';
import type { Pruner } from '../family.js';
import { BUILDABLE_VARIANTS, CONV_DIRECT_FAMILY, convDirectFamily } from '../families/conv-direct.js';
import { SPLIT_REDUCE_VARIANT, splitReduceFamily } from '../families/split-reduce.js';
import type { JsonValue } from '../hash.js';
import type { KernelCompiler, TargetName } from '../llvm-toolchain.js';
import { BENCH_MANIFEST, parseBenchManifest, type BenchManifest, type ManifestCandidate, type ManifestHelper, type ManifestShape } from './manifest.js';
import { orderCandidates } from './select.js';

/** Default cap of candidates per shape: the bench times at most this many per shape anyway. */
export const DEFAULT_PREP_CAP = 40;

/** Output maps up to this many pixels (Ho·Wo) also get split_c candidates (the 7×7…16×16 class). */
export const SPLIT_C_MAX_PIXELS = 16 * 16;

/** Options of {@link benchPrep}. */
export interface BenchPrepOptions {
  problems: BenchRequest['problems'];
  target: TargetName;
  /** Kernels directory to write: `bench-manifest.json` plus `blobs/` (content-addressed, deduplicated). */
  outDir: string;
  /** The compile cache compile-all fills (and skips up-to-date entries in). */
  cache: KernelCache;
  compiler: KernelCompiler;
  pruner: Pruner | null;
  /** Candidates per shape at most (default {@link DEFAULT_PREP_CAP}), shared evenly by its variants. */
  cap?: number;
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
}

/** Variants worth timing for a problem: grouped for groups > 1; dense, plus split_c on small maps. */
export function benchVariants(problem: Problem): Variant[] {
  if (problem.groups > 1) return ['grouped'];
  const g = problemGeometry(problem);
  return g.Ho * g.Wo <= SPLIT_C_MAX_PIXELS ? ['dense', 'split_c'] : ['dense'];
}

const buildCheck = new Map<string, boolean>();
/**
 * Whether conv-direct builds kernels of `variant`: the pipeline's BUILDABLE_VARIANTS, or (for a
 * variant whose builder landed before the family list caught up) a probe build of one valid spec.
 */
function canBuild(variant: Variant, probe: Spec | undefined): boolean {
  if (BUILDABLE_VARIANTS.includes(variant)) return true;
  if (!probe) return false;
  let ok = buildCheck.get(variant);
  if (ok === undefined) {
    try {
      buildConvKernel(probe);
      ok = true;
    } catch {
      ok = false;
    }
    buildCheck.set(variant, ok);
  }
  return ok;
}

/** Splits `cap` over `n` variants: equal shares, the remainder to the first ones. */
function shares(cap: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(cap / n) + (i < cap % n ? 1 : 0));
}

/**
 * Compiles what `rocke bench` needs for a suite on a machine without a GPU, and exports it:
 * per shape the valid candidates of each variant conv-direct can build ({@link benchVariants}),
 * ordered and capped by {@link orderCandidates}, compiled through compile-all (the cache skips
 * up-to-date entries; elf-prune drops spilling split_c entries), plus the split-reduce helper
 * kernels. The kernels directory holds only the code blobs, content-addressed like the cache
 * (identical code is stored once), and the manifest. Blobs of earlier runs no longer referenced
 * are removed so the directory stays small.
 */
export async function benchPrep(options: BenchPrepOptions): Promise<BenchPrepResult> {
  const { target, cache, compiler } = options;
  const cap = options.cap ?? DEFAULT_PREP_CAP;
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a positive integer (got ${cap})`);
  const flavor = compiler.flavor;
  const pick = new Map<string, Spec>(); // `${dtype}/${variant}` + name -> spec, the union over shapes
  const perShape: { shape: BenchRequest['problems'][number]; chosen: { spec: Spec; score: number }[]; available: Record<string, number>; notes: string[] }[] = [];
  for (const shape of options.problems) {
    const variants = benchVariants(shape.problem);
    const available: Record<string, number> = {};
    const notes: string[] = [];
    const chosen: { spec: Spec; score: number }[] = [];
    const valids = new Map(variants.map((v) => [v, problemCandidates(shape.problem, target, { variant: v }).valid]));
    const buildable = variants.filter((v) => canBuild(v, valids.get(v)![0]));
    const quota = shares(cap, Math.max(buildable.length, 1));
    for (const variant of variants) {
      const valid = valids.get(variant)!;
      available[variant] = valid.length;
      const share = buildable.indexOf(variant);
      if (share < 0) {
        notes.push(`${variant}: ${valid.length} valid candidates, none compiled: conv-direct cannot build ${variant} kernels`);
        continue;
      }
      const ordered = orderCandidates(valid, shape.problem, { cap: quota[share]! });
      if (valid.length > ordered.length) notes.push(`${variant}: ${ordered.length} of ${valid.length} valid candidates kept (spill heuristic, then the cap of ${quota[share]} in score order)`);
      for (const o of ordered) {
        chosen.push({ spec: o.spec, score: o.score.score });
        pick.set(`${o.spec.dtype}/${o.spec.variant}/${o.score.kernelName}`, o.spec);
      }
    }
    perShape.push({ shape, chosen, available, notes });
  }

  const grid = (t: TargetName, dtype: string, variant: string): Spec[] =>
    [...pick.entries()].filter(([key, s]) => key.startsWith(`${dtype}/${variant}/`) && s.target === t).map(([, s]) => s);
  const dtypes = [...new Set([...pick.values()].map((s) => s.dtype))];
  const variants = [...new Set([...pick.values()].map((s) => s.variant))];
  const families = [convDirectFamily({ dtypes, variants, grid }), splitReduceFamily()];
  const compile = await compileAll({
    cache,
    families,
    compiler,
    targets: [target],
    // The emitter string is the packages' version (0.0.0 in the tree), so a kernel-builder edit
    // leaves it unchanged: without the IR check the bench would time stale cubins of old code.
    checkIr: true,
    pruner: options.pruner,
    ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
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

  const shapes: ManifestShape[] = perShape.map(({ shape, chosen, available, notes }) => {
    const candidates: ManifestCandidate[] = [];
    for (const { spec, score } of chosen) {
      const entry = lookup(CONV_DIRECT_FAMILY, spec.variant, { ...spec } as JsonValue);
      if (typeof entry === 'string') {
        notes.push(`${convKernelName(spec)}: ${entry}`);
        continue;
      }
      candidates.push({ kernelName: entry.kernelName, variant: spec.variant, spec: { ...spec }, code: exportCode(entry), score });
    }
    return { name: shape.name, cls: shape.cls, problem: { ...shape.problem }, candidates, available, notes };
  });
  const helpers: ManifestHelper[] = [];
  for (const spec of helperSpecs(target)) {
    const entry = lookup(splitReduceFamily().name, SPLIT_REDUCE_VARIANT, { ...spec } as unknown as JsonValue);
    if (typeof entry === 'string') continue; // a split_c shape then reports the missing helper when it runs
    helpers.push({ kernelName: reduceKernelName(spec), spec: { ...spec }, code: exportCode(entry) });
  }
  const manifest = parseBenchManifest({ format: 1, target, cap, toolchain: await compiler.fingerprint(target), shapes, helpers });
  writeFileAtomic(join(options.outDir, BENCH_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
  let bytes = 0;
  for (const d of out.listBlobDigests()) {
    if (!referenced.has(d)) out.removeBlob(d);
    else bytes += out.blobStat(d)?.size ?? 0;
  }
  return { manifest, compile, blobs: referenced.size, bytes };
}
