// Where a bench's kernels come from: the bench manifest in the kernels directory, else one built
// from the compile cache there; and which manifest shape serves a requested problem.
import { compiledSelection, kernelName, type Problem } from '@rocke/conv-direct';
import { CACHE_NAMESPACE } from '@rocke/split-reduce';
import { KernelCache } from '../cache/cache.js';
import { CONV_DIRECT_FAMILY } from '@rocke/conv-direct';
import { canonicalJson } from '../hash.js';
import { parseBenchManifest, readBenchManifest, type BenchManifest, type ManifestShape } from './manifest.js';
import { DEFAULT_PREP_CAP } from './prep.js';
import type { BenchRequest } from './requests.js';

function sameProblem(a: Problem | Record<string, unknown>, b: Problem | Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * A manifest built from a compile cache (a GPU machine that also ran compile-all): per problem the
 * valid candidates that are compiled and not pruned, in the cost model's order across variants (conv-direct's `compiledSelection`), capped.
 */
export function manifestFromCache(cache: KernelCache, problems: BenchRequest['problems'], target: string, cap = DEFAULT_PREP_CAP): BenchManifest {
  const entries = cache.listEntries().entries.filter((e) => e.identity.target === target && !e.pruned && e.code.kind !== 'hsaco');
  const conv = new Map(entries.filter((e) => e.identity.family === CONV_DIRECT_FAMILY).map((e) => [e.kernelName, e]));
  const helpers = entries
    .filter((e) => e.identity.family === CACHE_NAMESPACE)
    .map((e) => ({ kernelName: e.kernelName, spec: e.identity.spec as Record<string, unknown>, code: e.code }));
  const shapes: ManifestShape[] = problems.map(({ name, cls, problem }) => {
    const candidates: ManifestShape['candidates'] = [];
    const available: Record<string, number> = {};
    const notes: string[] = [];
    const selection = compiledSelection(problem, target as 'sm_90', cap, (s) => conv.has(kernelName(s)));
    for (const { variant, valid, compiled } of selection.variants) {
      available[variant] = valid;
      if (compiled === 0) notes.push(`${variant}: none of ${valid} valid candidates is compiled in the cache`);
    }
    for (const p of selection.picks) {
      const e = conv.get(p.kernelName)!;
      candidates.push({ kernelName: e.kernelName, variant: p.spec.variant, spec: { ...p.spec }, code: e.code, score: p.predictedUs });
    }
    return { name, cls, problem: { ...problem }, candidates, available, notes };
  });
  return parseBenchManifest({ format: 1, target, cap, toolchain: entries[0]?.toolchain ?? '', shapes, helpers });
}

/** The manifest shape for a requested problem: same name and problem, else the same problem. */
export function matchShape(manifest: BenchManifest, want: BenchRequest['problems'][number]): ManifestShape | undefined {
  return (
    manifest.shapes.find((s) => s.name === want.name && sameProblem(s.problem, want.problem)) ??
    manifest.shapes.find((s) => sameProblem(s.problem, want.problem))
  );
}

/** The kernels for a request: the bench manifest of `cacheDir`, else one built from the cache there. */
export function loadKernels(request: BenchRequest): { manifest: BenchManifest; blobs: KernelCache } {
  const blobs = new KernelCache(request.cacheDir);
  const manifest = readBenchManifest(request.cacheDir) ?? manifestFromCache(blobs, request.problems, request.target ?? 'sm_90');
  if (request.target && request.target !== manifest.target) throw new Error(`the kernels in ${request.cacheDir} are for ${manifest.target}, not ${request.target}`);
  return { manifest, blobs };
}

