import { availableParallelism } from 'node:os';
import { identityId, type CacheEntry, type KernelCache, type KernelIdentity } from '../cache/cache.js';
import type { BuiltKernel, Family, KernelCandidate, PruneDecision, Pruner } from './family.js';
import { pruneInputOf } from './family.js';
import { sha256Hex } from '../hash.js';
import type { KernelCompiler, TargetName } from './llvm-toolchain.js';
import { runPool } from '../pool.js';

/** Where a job failed. */
export type FailureStage = 'candidates' | 'build' | 'compile' | 'facts' | 'prune';

/** One failure of a compile-all run; the run itself goes on. */
export interface CompileFailure {
  stage: FailureStage;
  family: string;
  target: string;
  variant: string | null;
  kernelName: string | null;
  id: string | null;
  message: string;
}

/** How one job of the run ended. */
export type JobStatus = 'compiled' | 'rebuilt' | 'cached' | 'failed';

/** Progress callbacks (the CLI draws a bar from them). */
export interface CompileAllProgress {
  start?(total: number): void;
  done?(status: JobStatus, label: string, failure?: CompileFailure): void;
}

/** Options of {@link compileAll}. */
export interface CompileAllOptions {
  cache: KernelCache;
  families: readonly Family[];
  compiler: KernelCompiler;
  /** Targets to build; a family is asked only for the targets it lists. Default: all of each family's. */
  targets?: readonly TargetName[];
  /** Only candidates of these variants (default: all). */
  variants?: readonly string[];
  /** Only candidates whose spec's `dtype` is one of these (specs without a dtype always pass). */
  dtypes?: readonly string[];
  /** At most this many candidates per family and target, in the family's order (default: all). */
  limit?: number;
  /**
   * Also re-emit the IR of entries that look up to date and rebuild those whose IR digest changed
   * (catches kernel-builder edits that keep `Family.emitter`); costs one IR emission per entry.
   */
  checkIr?: boolean;
  /** Applied after compiling; without it nothing is pruned and the report says so. */
  pruner?: Pruner | null;
  /** Concurrent compiles; default: the number of cores. */
  jobs?: number;
  progress?: CompileAllProgress;
  /** Stops the run: no new job starts, running tool processes are killed; finished entries stay. */
  signal?: AbortSignal;
  /** Also return the run's entries in the report (`entries`); off by default (a full grid has thousands). */
  collectEntries?: boolean;
}

/** Result of {@link compileAll}. */
export interface CompileAllReport {
  /** Distinct entries this run selected (after de-duplication by id). */
  total: number;
  /** Newly compiled entries (no record before). */
  compiled: number;
  /** Recompiled because the record was stale (toolchain, emitter or IR changed) or its code blob was missing/corrupt. */
  rebuilt: number;
  /** Up to date: skipped. */
  cached: number;
  /** Jobs not finished because the run was aborted (not counted as failures). */
  aborted: number;
  failed: CompileFailure[];
  /** Entries of this run the prune step dropped (marked in the cache), sorted by id. */
  pruned: PruneDecision[];
  /** Count of pruned entries per reason, reasons sorted. */
  prunedByReason: Record<string, number>;
  /** False when no pruner was given. */
  pruneApplied: boolean;
  /** Why each rebuilt entry was rebuilt, by cause. */
  rebuiltByCause: Record<string, number>;
  jobs: number;
  durationMs: number;
  /**
   * With `collectEntries`: the entries this run compiled, rebuilt or found up to date, sorted by id,
   * with the prune marks as written (`pruned` null for kept entries). Failed jobs have none.
   */
  entries?: CacheEntry[];
}

interface Job {
  family: Family;
  target: TargetName;
  candidate: KernelCandidate;
  identity: KernelIdentity;
  id: string;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Compiles every candidate of every family for the requested targets into the cache, skipping
 * up-to-date entries, isolating failures, then runs the prune step over this run's entries.
 *
 * An entry is up to date when its record exists, its toolchain fingerprint and the family's
 * emitter label match, and its code blob is present with the right digest; it is then skipped
 * without emitting IR (emission costs tens of ms per kernel, which adds up over a full grid). With
 * `checkIr` the IR is re-emitted too and a changed digest rebuilds the entry. Compiling is the
 * expensive step, done by `compiler` with up to `jobs` compiles in flight.
 */
export async function compileAll(options: CompileAllOptions): Promise<CompileAllReport> {
  const started = performance.now();
  const { cache, compiler, progress } = options;
  const pruner = options.pruner ?? null;
  const jobs = options.jobs ?? availableParallelism();
  if (!Number.isInteger(jobs) || jobs < 1) throw new RangeError(`jobs must be a positive integer, got ${jobs}`);
  const limit = options.limit ?? Infinity;
  if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 1))) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  cache.ensure();

  const failed: CompileFailure[] = [];
  const queue: Job[] = [];
  const seen = new Set<string>();
  for (const family of options.families) {
    for (const target of family.targets) {
      if (options.targets && !options.targets.includes(target)) continue;
      let candidates: readonly KernelCandidate[];
      try {
        candidates = family.candidates(target);
      } catch (err) {
        failed.push({ stage: 'candidates', family: family.name, target, variant: null, kernelName: null, id: null, message: errorMessage(err) });
        continue;
      }
      let taken = 0;
      for (const candidate of candidates) {
        if (options.variants && !options.variants.includes(candidate.variant)) continue;
        if (options.dtypes && !dtypeAllowed(candidate.spec, options.dtypes)) continue;
        if (taken >= limit) break;
        const identity: KernelIdentity = { family: family.name, variant: candidate.variant, target, flavor: compiler.flavor, spec: candidate.spec };
        let id: string;
        try {
          id = identityId(identity);
        } catch (err) {
          failed.push({ stage: 'candidates', family: family.name, target, variant: candidate.variant, kernelName: null, id: null, message: errorMessage(err) });
          continue;
        }
        if (seen.has(id)) continue;
        seen.add(id);
        taken++;
        queue.push({ family, target, candidate, identity, id });
      }
    }
  }
  progress?.start?.(queue.length);

  const counts = { compiled: 0, rebuilt: 0, cached: 0 };
  const rebuiltByCause: Record<string, number> = {};
  const runEntries = new Map<string, CacheEntry>();

  const results = await runPool(
    queue,
    jobs,
    async (job) => {
      const label = `${job.family.name}/${job.target}/${job.candidate.variant}`;
      const fail = (stage: FailureStage, err: unknown, kernelName: string | null): 'failed' => {
        const failure: CompileFailure = {
          stage,
          family: job.family.name,
          target: job.target,
          variant: job.candidate.variant,
          kernelName,
          id: job.id,
          message: errorMessage(err),
        };
        failed.push(failure);
        progress?.done?.('failed', kernelName ?? label, failure);
        return 'failed';
      };
      let built: BuiltKernel | undefined;
      const emit = (): BuiltKernel => {
        const k = job.family.build(job.candidate, job.target, compiler.flavor);
        if (typeof k?.ir !== 'string' || typeof k.kernelName !== 'string' || !k.kernelName) {
          throw new TypeError(`${job.family.name}.build returned no IR text / kernel name`);
        }
        return k;
      };
      const toolchain = await compiler.fingerprint(job.target);
      const emitter = job.family.emitter ?? '';
      let previous: CacheEntry | undefined;
      let cause = 'new';
      try {
        previous = cache.getEntry(job.id);
      } catch {
        cause = 'unreadable record';
      }
      if (previous) {
        const codeStatus = cache.checkBlob(previous.code);
        if (previous.toolchain !== toolchain) cause = 'toolchain changed';
        else if (previous.emitter !== emitter) cause = 'emitter changed';
        else if (!codeStatus.ok) cause = codeStatus.kind;
        else {
          if (options.checkIr) {
            try {
              built = emit();
            } catch (err) {
              return fail('build', err, null);
            }
            if (sha256Hex(built.ir) !== previous.ir.digest || built.kernelName !== previous.kernelName) cause = 'IR changed';
          }
          if (cause !== 'IR changed') {
            let entry = previous;
            // An entry cached before a pruner was available gets its facts now (cheap, no compile).
            if (pruner && entry.facts === null) {
              try {
                const facts = pruner.facts(cache.readBlob(entry.code), entry.code.kind, entry.kernelName);
                if (facts !== null) {
                  entry = { ...entry, facts };
                  cache.putEntry(entry);
                }
              } catch (err) {
                return fail('facts', err, entry.kernelName);
              }
            }
            runEntries.set(job.id, entry);
            counts.cached++;
            progress?.done?.('cached', entry.kernelName);
            return 'cached';
          }
        }
      }
      if (!built) {
        try {
          built = emit();
        } catch (err) {
          return fail('build', err, null);
        }
      }
      let code;
      try {
        code = await compiler.compile(built.ir, job.target, options.signal ? { signal: options.signal } : {});
      } catch (err) {
        if (options.signal?.aborted) throw err;
        return fail('compile', err, built.kernelName);
      }
      let facts = null;
      if (pruner) {
        try {
          facts = pruner.facts(code.bytes, code.kind, built.kernelName);
        } catch (err) {
          return fail('facts', err, built.kernelName);
        }
      }
      const ir = cache.putBlob(built.ir);
      const codeRef = cache.putBlob(code.bytes);
      const entry: CacheEntry = {
        format: 1,
        id: job.id,
        identity: job.identity,
        kernelName: built.kernelName,
        ir,
        code: { ...codeRef, kind: code.kind },
        toolchain,
        emitter,
        facts,
        pruned: null,
      };
      cache.putEntry(entry);
      runEntries.set(job.id, entry);
      const status = cause === 'new' ? 'compiled' : 'rebuilt';
      if (status === 'rebuilt') rebuiltByCause[cause] = (rebuiltByCause[cause] ?? 0) + 1;
      counts[status]++;
      progress?.done?.(status, built.kernelName);
      return status;
    },
    options.signal,
  );
  let aborted = 0;
  for (const [i, r] of results.entries()) {
    if (!r.ok && options.signal?.aborted) {
      aborted++;
      continue;
    }
    // Otherwise runPool only reports a rejected task for a bug in the code above; keep it visible.
    if (!r.ok) {
      const job = queue[i] as Job;
      failed.push({ stage: 'compile', family: job.family.name, target: job.target, variant: job.candidate.variant, kernelName: null, id: job.id, message: errorMessage(r.error) });
    }
  }

  let pruned: PruneDecision[] = [];
  const ordered = [...runEntries.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // An aborted run saw only part of the entries: twins may be missing, so prune nothing.
  if (pruner && runEntries.size > 0 && aborted === 0) {
    try {
      pruned = [...pruner.prune(ordered.map(pruneInputOf))].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const byId = new Map(pruned.map((d) => [d.id, d]));
      for (const [i, entry] of ordered.entries()) {
        const d = byId.get(entry.id);
        const mark = d ? { reason: d.reason, detail: d.detail } : null;
        if (JSON.stringify(mark) !== JSON.stringify(entry.pruned)) {
          const marked = { ...entry, pruned: mark };
          cache.putEntry(marked);
          ordered[i] = marked;
        }
      }
      const unknown = pruned.filter((d) => !runEntries.has(d.id));
      if (unknown.length) throw new Error(`pruner dropped ${unknown.length} id(s) that are not entries of this run`);
    } catch (err) {
      failed.push({ stage: 'prune', family: '*', target: '*', variant: null, kernelName: null, id: null, message: errorMessage(err) });
    }
  }
  // Jobs finish in any order; sort so the report is deterministic.
  failed.sort((a, b) => cmpStr(failureKey(a), failureKey(b)));
  const prunedByReason: Record<string, number> = {};
  for (const d of [...pruned].sort((a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0))) {
    prunedByReason[d.reason] = (prunedByReason[d.reason] ?? 0) + 1;
  }
  return {
    total: queue.length,
    ...counts,
    aborted,
    failed,
    pruned,
    prunedByReason,
    pruneApplied: pruner !== null,
    rebuiltByCause,
    jobs,
    durationMs: performance.now() - started,
    ...(options.collectEntries ? { entries: ordered } : {}),
  };
}

function failureKey(f: CompileFailure): string {
  return [f.family, f.target, f.variant ?? '', f.kernelName ?? '', f.id ?? '', f.stage].join('\u0000');
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function dtypeAllowed(spec: unknown, dtypes: readonly string[]): boolean {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return true;
  const d = (spec as Record<string, unknown>)['dtype'];
  return typeof d !== 'string' || dtypes.includes(d);
}
