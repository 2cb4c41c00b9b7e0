import { availableParallelism } from 'node:os';
import { identityId, type CacheEntry, type KernelCache, type KernelIdentity } from '../cache/cache.js';
import { parseFamilySpec, type BuiltKernel, type KernelCandidate } from '@rocke/ir';
import type { AnyFamily, AnyPruner, PruneDecision, PruneInput } from './family.js';
import { recordMismatch } from './record-check.js';
import { canonicalJson, sha256Hex, type JsonValue } from '../hash.js';
import type { KernelCompiler, TargetName } from './llvm-toolchain.js';
import { runPool } from '../pool.js';
import { inShard, type Shard } from './shard.js';

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
  families: readonly AnyFamily[];
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
  pruner?: AnyPruner | null;
  /**
   * Only this shard of the jobs (sorted by cache id, every count-th from index). A sharded run does
   * not prune: twins may sit in other shards; after `rocke cache merge`, one unsharded run prunes.
   */
  shard?: Shard;
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
  /** False when no pruner was given, or the run was one shard of several. */
  pruneApplied: boolean;
  /** The shard this run compiled, when sharded. */
  shard?: Shard;
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
  family: AnyFamily;
  target: TargetName;
  /** The candidate with its spec as the family's schema read it (the identity's spec). */
  candidate: KernelCandidate<unknown>;
  identity: KernelIdentity;
  id: string;
}

/** An entry of this run with its job and its facts as the pruner's schema read them. */
interface RunEntry {
  entry: CacheEntry;
  job: Job;
  facts: unknown;
}

/** What every job of one run shares: the options, and the tallies it adds to. */
interface RunState {
  options: CompileAllOptions;
  pruner: AnyPruner | null;
  failed: CompileFailure[];
  counts: { compiled: number; rebuilt: number; cached: number };
  rebuiltByCause: Record<string, number>;
  runEntries: Map<string, RunEntry>;
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
  const jobs = options.jobs ?? availableParallelism();
  if (!Number.isInteger(jobs) || jobs < 1) throw new RangeError(`jobs must be a positive integer, got ${jobs}`);
  const limit = options.limit ?? Infinity;
  if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 1))) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  options.cache.ensure();

  const state: RunState = { options, pruner: options.pruner ?? null, failed: [], counts: { compiled: 0, rebuilt: 0, cached: 0 }, rebuiltByCause: {}, runEntries: new Map() };
  const sharded = options.shard !== undefined && options.shard.count > 1;
  const queue = inShard(enumerateJobs(options, limit, state.failed), (j) => j.id, options.shard);
  options.progress?.start?.(queue.length);
  const results = await runPool(queue, jobs, (job) => runJob(job, state), options.signal);
  let aborted = 0;
  for (const [i, r] of results.entries()) {
    if (!r.ok && options.signal?.aborted) {
      aborted++;
      continue;
    }
    // Otherwise runPool only reports a rejected task for a bug in the code above; keep it visible.
    if (!r.ok) {
      const job = queue[i] as Job;
      state.failed.push({ stage: 'compile', family: job.family.name, target: job.target, variant: job.candidate.variant, kernelName: null, id: job.id, message: errorMessage(r.error) });
    }
  }
  const ordered = [...state.runEntries.values()].sort((a, b) => cmpStr(a.entry.id, b.entry.id));
  // An aborted or sharded run saw only part of the entries: twins may be missing, so prune nothing.
  const pruned = state.pruner && !sharded && ordered.length > 0 && aborted === 0 ? applyPrune(state.pruner, options.cache, ordered, state.failed) : [];
  // Jobs finish in any order; sort so the report is deterministic.
  state.failed.sort((a, b) => cmpStr(failureKey(a), failureKey(b)));
  const prunedByReason: Record<string, number> = {};
  for (const d of [...pruned].sort((a, b) => cmpStr(a.reason, b.reason))) prunedByReason[d.reason] = (prunedByReason[d.reason] ?? 0) + 1;
  return {
    total: queue.length,
    ...state.counts,
    aborted,
    failed: state.failed,
    pruned,
    prunedByReason,
    pruneApplied: state.pruner !== null && !sharded,
    ...(sharded ? { shard: options.shard } : {}),
    rebuiltByCause: state.rebuiltByCause,
    jobs,
    durationMs: performance.now() - started,
    ...(options.collectEntries ? { entries: ordered.map((r) => r.entry) } : {}),
  };
}

/** The run's jobs: each family's candidates per requested target, filtered, limited and de-duplicated by id. */
function enumerateJobs(options: CompileAllOptions, limit: number, failed: CompileFailure[]): Job[] {
  const queue: Job[] = [];
  const seen = new Set<string>();
  for (const family of options.families) {
    for (const target of family.targets) {
      if (options.targets && !options.targets.includes(target)) continue;
      let candidates: readonly KernelCandidate<unknown>[];
      try {
        candidates = family.candidates(target);
      } catch (err) {
        failed.push({ stage: 'candidates', family: family.name, target, variant: null, kernelName: null, id: null, message: errorMessage(err) });
        continue;
      }
      let taken = 0;
      for (const offered of candidates) {
        if (options.variants && !options.variants.includes(offered.variant)) continue;
        if (options.dtypes && !dtypeAllowed(offered.spec, options.dtypes)) continue;
        if (taken >= limit) break;
        // The spec is read through the family's schema once, here: what the identity stores is
        // then exactly what reads back, and build gets the schema's typed value.
        const parsed = parseFamilySpec(family, offered.spec);
        let id: string;
        let identity: KernelIdentity;
        try {
          if (!parsed.ok) throw new TypeError(parsed.reason);
          identity = { family: family.name, variant: offered.variant, target, flavor: options.compiler.flavor, spec: parsed.spec as JsonValue };
          id = identityId(identity);
        } catch (err) {
          failed.push({ stage: 'candidates', family: family.name, target, variant: offered.variant, kernelName: null, id: null, message: errorMessage(err) });
          continue;
        }
        if (seen.has(id)) continue;
        seen.add(id);
        taken++;
        queue.push({ family, target, candidate: { variant: offered.variant, spec: parsed.spec }, identity, id });
      }
    }
  }
  return queue;
}

/** A job's failure: recorded, reported to progress, and the job ends. */
class JobFailure extends Error {
  constructor(
    readonly stage: FailureStage,
    error: unknown,
    readonly kernelName: string | null,
  ) {
    super(errorMessage(error));
  }
}

/** Runs `f`; a throw becomes a {@link JobFailure} of `stage`. */
function at<T>(stage: FailureStage, kernelName: string | null, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new JobFailure(stage, err, kernelName);
  }
}

/** One job: reuse the entry when it is up to date, else emit, compile, read facts and store it. */
async function runJob(job: Job, state: RunState): Promise<JobStatus> {
  const { options } = state;
  try {
    const toolchain = await options.compiler.fingerprint(job.target);
    const emitter = job.family.emitter ?? '';
    const check = checkPrevious(job, state, toolchain, emitter);
    if (check.entry) {
      const { entry, facts } = withFacts(check.entry, state);
      state.runEntries.set(job.id, { entry, job, facts });
      state.counts.cached++;
      options.progress?.done?.('cached', entry.kernelName);
      return 'cached';
    }
    const built = check.built ?? at('build', null, () => emit(job, options.compiler.flavor));
    let code;
    try {
      code = await options.compiler.compile(built.ir, job.target, options.signal ? { signal: options.signal } : {});
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new JobFailure('compile', err, built.kernelName);
    }
    const facts = state.pruner ? at('facts', built.kernelName, () => storableFacts(state.pruner!, state.pruner!.facts(code.bytes, code.kind, built.kernelName))) : null;
    const { cache } = options;
    const ir = cache.putBlob(built.ir);
    const codeRef = cache.putBlob(code.bytes);
    const entry: CacheEntry = { format: 1, id: job.id, identity: job.identity, kernelName: built.kernelName, ir, code: { ...codeRef, kind: code.kind }, toolchain, emitter, facts: facts as JsonValue | null, pruned: null };
    cache.putEntry(entry);
    state.runEntries.set(job.id, { entry, job, facts });
    const status = check.cause === 'new' ? 'compiled' : 'rebuilt';
    if (status === 'rebuilt') state.rebuiltByCause[check.cause] = (state.rebuiltByCause[check.cause] ?? 0) + 1;
    state.counts[status]++;
    options.progress?.done?.(status, built.kernelName);
    return status;
  } catch (err) {
    if (!(err instanceof JobFailure)) throw err;
    const failure: CompileFailure = { stage: err.stage, family: job.family.name, target: job.target, variant: job.candidate.variant, kernelName: err.kernelName, id: job.id, message: err.message };
    state.failed.push(failure);
    options.progress?.done?.('failed', err.kernelName ?? `${job.family.name}/${job.target}/${job.candidate.variant}`, failure);
    return 'failed';
  }
}

/**
 * The job's cached entry when it is up to date (`entry`), else why it must be (re)built (`cause`),
 * with the IR already emitted when `checkIr` emitted it to compare.
 */
function checkPrevious(job: Job, state: RunState, toolchain: string, emitter: string): { entry?: CacheEntry; cause: string; built?: BuiltKernel } {
  const { cache, checkIr, compiler } = state.options;
  let previous: CacheEntry | undefined;
  try {
    previous = cache.getEntry(job.id);
  } catch {
    return { cause: 'unreadable record' };
  }
  if (!previous) return { cause: 'new' };
  const codeStatus = cache.checkBlob(previous.code);
  if (previous.toolchain !== toolchain) return { cause: 'toolchain changed' };
  if (previous.emitter !== emitter) return { cause: 'emitter changed' };
  if (!codeStatus.ok) return { cause: codeStatus.kind };
  // The record's claims beyond its identity are checked against its code (cheap, no compile): a
  // record whose kernel name or facts disagree with the code is rebuilt, not trusted.
  const { pruner } = state;
  if (pruner && recordMismatch(previous, cache.readBlob(previous.code), pruner)) return { cause: 'record disagrees with its code' };
  if (!checkIr) return { entry: previous, cause: 'up to date' };
  const built = at('build', null, () => emit(job, compiler.flavor));
  if (sha256Hex(built.ir) !== previous.ir.digest || built.kernelName !== previous.kernelName) return { cause: 'IR changed', built };
  return { entry: previous, cause: 'up to date' };
}

/**
 * An up-to-date entry with its facts read through the pruner's schema; one cached before a pruner
 * was available gets its facts now (cheap, no compile).
 */
function withFacts(entry: CacheEntry, state: RunState): { entry: CacheEntry; facts: unknown } {
  const { pruner } = state;
  if (!pruner) return { entry, facts: null };
  if (entry.facts !== null) return { entry, facts: at('facts', entry.kernelName, () => pruner.factsSchema.parse(entry.facts)) };
  const facts = at('facts', entry.kernelName, () => storableFacts(pruner, pruner.facts(state.options.cache.readBlob(entry.code), entry.code.kind, entry.kernelName)));
  if (facts === null) return { entry, facts };
  const withNew = { ...entry, facts: facts as JsonValue };
  state.options.cache.putEntry(withNew);
  return { entry: withNew, facts };
}

/** Facts as they are stored: checked against the pruner's schema, so they read back the same. */
function storableFacts(pruner: AnyPruner, facts: unknown): unknown {
  return facts === null ? null : pruner.factsSchema.parse(facts);
}

/** What the pruner sees of an entry: its facts, and its family's waves_per_eu hint with the twin key. */
function pruneInputOf({ entry, job, facts }: RunEntry): PruneInput<unknown> {
  const hint = job.family.wavesPerEu?.(job.candidate.spec);
  return {
    id: entry.id,
    identity: entry.identity,
    kernelName: entry.kernelName,
    codeKind: entry.code.kind,
    codeDigest: entry.code.digest,
    facts,
    wavesPerEu: hint?.wavesPerEu ?? null,
    twinKey: canonicalJson({ ...entry.identity, spec: (hint ? hint.rest : entry.identity.spec) as JsonValue }),
  };
}

function emit(job: Job, flavor: string): BuiltKernel {
  const k = job.family.build(job.candidate, job.target, flavor);
  if (typeof k?.ir !== 'string' || typeof k.kernelName !== 'string' || !k.kernelName) {
    throw new TypeError(`${job.family.name}.build returned no IR text / kernel name`);
  }
  return k;
}

/** Runs the pruner over the run's entries (sorted by id) and writes each changed prune mark; returns the decisions by id. */
function applyPrune(pruner: AnyPruner, cache: KernelCache, ordered: RunEntry[], failed: CompileFailure[]): PruneDecision[] {
  let pruned: PruneDecision[] = [];
  try {
    pruned = [...pruner.prune(ordered.map(pruneInputOf))].sort((a, b) => cmpStr(a.id, b.id));
    const byId = new Map(pruned.map((d) => [d.id, d]));
    for (const [i, run] of ordered.entries()) {
      const d = byId.get(run.entry.id);
      const mark = d ? { reason: d.reason, detail: d.detail } : null;
      if (JSON.stringify(mark) !== JSON.stringify(run.entry.pruned)) {
        const marked = { ...run.entry, pruned: mark };
        cache.putEntry(marked);
        ordered[i] = { ...run, entry: marked };
      }
    }
    const known = new Set(ordered.map((r) => r.entry.id));
    const unknown = pruned.filter((d) => !known.has(d.id));
    if (unknown.length) throw new Error(`pruner dropped ${unknown.length} id(s) that are not entries of this run`);
    return pruned;
  } catch (err) {
    failed.push({ stage: 'prune', family: '*', target: '*', variant: null, kernelName: null, id: null, message: errorMessage(err) });
    return pruned;
  }
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
