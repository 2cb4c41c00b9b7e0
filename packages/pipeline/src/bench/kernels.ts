// Where a bench's kernels come from: the bench manifest in the kernels directory, else one built
// from the compile cache there; and which manifest shape serves a requested problem.
import { KernelCache } from '../cache/cache.js';
import type { TargetName } from '../compile/llvm-toolchain.js';
import type { OpPlanner, OpProblem } from '../planner.js';
import { canonicalJson } from '../hash.js';
import { parseBenchManifest, readBenchManifest, type BenchManifest, type ManifestShape } from './manifest.js';
import type { BenchRequest } from './requests.js';

function sameProblem(a: OpProblem | Record<string, unknown>, b: OpProblem | Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * A manifest built from a compile cache (a GPU machine that also ran compile-all): per problem the
 * valid candidates that are compiled and not pruned, in the bench order, capped (the planner's `compiledSelection`).
 */
export function manifestFromCache(planner: OpPlanner, cache: KernelCache, problems: BenchRequest['problems'], target: TargetName, cap = planner.defaultCap): BenchManifest {
  const entries = cache.listEntries().entries.filter((e) => e.identity.target === target && !e.pruned && e.code.kind !== 'hsaco');
  const conv = new Map(entries.filter((e) => e.identity.family === planner.family.name).map((e) => [e.kernelName, e]));
  const helpers = entries
    .filter((e) => e.identity.family === planner.helperFamily().name)
    .map((e) => ({ kernelName: e.kernelName, spec: e.identity.spec as Record<string, unknown>, code: e.code }));
  const shapes: ManifestShape[] = problems.map(({ name, cls, problem }) => {
    const candidates: ManifestShape['candidates'] = [];
    const available: Record<string, number> = {};
    const notes: string[] = [];
    const selection = planner.compiledSelection(problem, target, cap, (name) => conv.has(name));
    for (const { variant, valid, compiled } of selection.variants) {
      available[variant] = valid;
      if (compiled === 0) notes.push(`${variant}: none of ${valid} valid candidates is compiled in the cache`);
    }
    for (const p of selection.picks) {
      const e = conv.get(p.kernelName)!;
      candidates.push({ kernelName: e.kernelName, variant: p.variant, spec: { ...(p.spec as Record<string, unknown>) }, code: e.code, score: p.score });
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
export function loadKernels(planner: OpPlanner, request: BenchRequest): { manifest: BenchManifest; blobs: KernelCache } {
  const blobs = new KernelCache(request.cacheDir);
  const manifest = readBenchManifest(request.cacheDir) ?? manifestFromCache(planner, blobs, request.problems, request.target ?? 'sm_90');
  if (request.target && request.target !== manifest.target) throw new Error(`the kernels in ${request.cacheDir} are for ${manifest.target}, not ${request.target}`);
  return { manifest, blobs };
}

