import { parseFamilySpec, type KernelCandidate } from '@rocke/ir';
import { identityId } from '../cache/cache.js';
import type { JsonValue } from '../hash.js';
import { compileAll, type CompileAllOptions, type CompileAllReport, type CompileFailure } from './compile-all.js';
import type { AnyFamily } from './family.js';
import type { TargetName } from './llvm-toolchain.js';

/** A ranked list of candidates of which `cap` usable ones are wanted (one shape's on one target, say). */
export interface CappedList {
  target: TargetName;
  cap: number;
  /** Candidates in preference order: the first `cap` are built, the ones after them back-fill. */
  ranked: readonly KernelCandidate<unknown>[];
}

/**
 * Compile passes {@link compileCapped} makes at most: the first builds every list's first `cap`,
 * each later one only the next candidates of lists still short. A list whose candidates keep
 * failing or being pruned stops there rather than walking its whole ranking.
 */
export const MAX_CAPPED_PASSES = 4;

/** Options of {@link compileCapped}: compile-all's, with the ranked lists of one family. */
export interface CompileCappedOptions extends Omit<CompileAllOptions, 'families' | 'shard' | 'limit' | 'collectEntries'> {
  /** The family of every ranked candidate. */
  family: AnyFamily;
  lists: readonly CappedList[];
  /** Families compiled whole alongside, on every pass (e.g. helper kernels). */
  alongside?: readonly AnyFamily[];
  /** Compile passes at most (default {@link MAX_CAPPED_PASSES}). */
  maxPasses?: number;
}

/** What {@link compileCapped} did. */
export interface CompileCappedResult {
  /** The passes folded into one report: each entry counted once, by its first status; the last pass's prune marks. */
  report: CompileAllReport;
  /** Per list: the candidates it built, in ranked order (usable or not). */
  built: KernelCandidate<unknown>[][];
  /** Per list: how many of `built` are back-fill (after the first `cap` of its ranking). */
  backfilled: number[];
  /** Per list: how many of `built` are compiled and not pruned. */
  usable: number[];
  passes: number;
}

/**
 * Compiles each list's first `cap` candidates, then, for a list some of whose kernels failed to
 * compile or were pruned (a spilling binary, a code-identical twin), the next candidates of its
 * ranking, one pass per round, until every list has `cap` usable kernels, its ranking is spent, or
 * `maxPasses` passes ran. Every pass compiles the union of what is chosen so far (up-to-date entries
 * are skipped), so the prune step always sees the whole set, as one compile-all over it would.
 * Candidates that failed are not retried. Deterministic: same lists, same cache, same result.
 */
export async function compileCapped(options: CompileCappedOptions): Promise<CompileCappedResult> {
  const { family, lists, alongside = [], maxPasses = MAX_CAPPED_PASSES, ...compileOptions } = options;
  const idOf = candidateIds(family, options.compiler.flavor);
  const targets = options.targets ?? [...new Set(lists.map((l) => l.target))];
  let chosen = lists.map((l) => Math.min(l.cap, l.ranked.length));
  const failedIds = new Set<string>();
  const reports: CompileAllReport[] = [];
  for (;;) {
    const union = unionOf(lists, chosen, idOf, failedIds);
    const fixed: AnyFamily = { ...family, candidates: (t) => union.filter((u) => u.target === t).map((u) => u.candidate) };
    const report = await compileAll({ ...compileOptions, families: [fixed, ...alongside], targets, collectEntries: true });
    reports.push(report);
    for (const f of report.failed) if (f.id) failedIds.add(f.id);
    const ok = new Set((report.entries ?? []).filter((e) => e.pruned === null).map((e) => e.id));
    const usable = lists.map((l, i) => l.ranked.slice(0, chosen[i]).filter((c) => ok.has(idOf(l.target, c) ?? '')).length);
    const next = lists.map((l, i) => Math.min(l.ranked.length, chosen[i]! + Math.max(0, l.cap - usable[i]!)));
    if (next.every((n, i) => n === chosen[i]) || reports.length >= maxPasses || report.aborted > 0) {
      const built = lists.map((l, i) => l.ranked.slice(0, chosen[i]));
      return { report: foldReports(reports), built, backfilled: built.map((b, i) => Math.max(0, b.length - lists[i]!.cap)), usable, passes: reports.length };
    }
    chosen = next;
  }
}

type IdOf = (target: TargetName, c: KernelCandidate<unknown>) => string | null;

/** The cache id of a candidate of `family` (null when its spec does not read: compile-all then reports it). */
function candidateIds(family: AnyFamily, flavor: string): IdOf {
  const memo = new Map<string, Map<KernelCandidate<unknown>, string | null>>();
  return (target, c) => {
    const mine = memo.get(target) ?? new Map<KernelCandidate<unknown>, string | null>();
    memo.set(target, mine);
    let id = mine.get(c);
    if (id === undefined) {
      const parsed = parseFamilySpec(family, c.spec);
      id = parsed.ok ? identityId({ family: family.name, variant: c.variant, target, flavor, spec: parsed.spec as JsonValue }) : null;
      mine.set(c, id);
    }
    return id;
  };
}

/** The chosen candidates of every list, each id once, without those that failed in an earlier pass. */
function unionOf(lists: readonly CappedList[], chosen: readonly number[], idOf: IdOf, failed: ReadonlySet<string>): { target: TargetName; candidate: KernelCandidate<unknown> }[] {
  const seen = new Set<string>();
  const union: { target: TargetName; candidate: KernelCandidate<unknown> }[] = [];
  lists.forEach((l, i) => {
    for (const candidate of l.ranked.slice(0, chosen[i])) {
      const id = idOf(l.target, candidate);
      if (id !== null && (failed.has(id) || seen.has(id))) continue;
      if (id !== null) seen.add(id);
      union.push({ target: l.target, candidate });
    }
  });
  return union;
}

/**
 * The passes as one run's report. Every pass re-lists the entries of the passes before it (found up
 * to date), so those are counted once, by the status of their first pass; failures add up (a failed
 * candidate is not retried); the prune marks and entries are the last pass's, which saw every entry.
 */
function foldReports(reports: readonly CompileAllReport[]): CompileAllReport {
  const last = reports[reports.length - 1]!;
  const earlier = reports.slice(0, -1);
  const sum = (f: (r: CompileAllReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  const rebuiltByCause: Record<string, number> = {};
  for (const r of reports) for (const [cause, n] of Object.entries(r.rebuiltByCause)) rebuiltByCause[cause] = (rebuiltByCause[cause] ?? 0) + n;
  // A job that fails is left out of later passes, unless it is of an `alongside` family (those
  // run whole each pass): count each failure once, the last pass's where it repeats.
  const failures = new Map<string, CompileFailure>();
  for (const r of reports) for (const f of r.failed) failures.set(JSON.stringify([f.family, f.target, f.variant, f.kernelName, f.id, f.stage]), f);
  const failed = [...failures.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, f]) => f);
  const lastIds = new Set(last.failed.map((f) => f.id));
  const earlierOnly = new Set(earlier.flatMap((r) => r.failed.filter((f) => f.id && !lastIds.has(f.id)).map((f) => f.id)));
  return {
    ...last,
    total: last.total + earlierOnly.size,
    compiled: sum((r) => r.compiled),
    rebuilt: sum((r) => r.rebuilt),
    cached: last.cached - earlier.reduce((n, r) => n + r.compiled + r.rebuilt, 0),
    failed,
    rebuiltByCause,
    durationMs: sum((r) => r.durationMs),
  };
}
