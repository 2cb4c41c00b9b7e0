import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errnoText, isTempName } from '../atomic-file.js';
import type { CacheEntry, IntegrityKind, KernelCache } from './cache.js';

/** Selects entries by family / target / variant; an unset field matches everything. */
export interface EntryFilter {
  family?: string | undefined;
  target?: string | undefined;
  variant?: string | undefined;
}

function matches(entry: CacheEntry, filter: EntryFilter): boolean {
  const { family, target, variant } = entry.identity;
  return (
    (filter.family === undefined || filter.family === family) &&
    (filter.target === undefined || filter.target === target) &&
    (filter.variant === undefined || filter.variant === variant)
  );
}

/** One line of `cache ls`. */
export interface CacheListRow {
  id: string;
  family: string;
  variant: string;
  target: string;
  flavor: string;
  kernelName: string;
  codeKind: string;
  codeBytes: number;
  pruned: string | null;
}

/** Lists entries (sorted by family, target, variant, kernel name, id) matching a filter. */
export function listCache(cache: KernelCache, filter: EntryFilter = {}): { rows: CacheListRow[]; corrupt: string[] } {
  const { entries, corrupt } = cache.listEntries();
  const rows = entries
    .filter((e) => matches(e, filter))
    .map((e) => ({
      id: e.id,
      family: e.identity.family,
      variant: e.identity.variant,
      target: e.identity.target,
      flavor: e.identity.flavor,
      kernelName: e.kernelName,
      codeKind: e.code.kind,
      codeBytes: e.code.size,
      pruned: e.pruned ? e.pruned.reason : null,
    }))
    .sort(
      (a, b) =>
        cmp(a.family, b.family) || cmp(a.target, b.target) || cmp(a.variant, b.variant) || cmp(a.kernelName, b.kernelName) || cmp(a.id, b.id),
    );
  return { rows, corrupt: corrupt.map((c) => c.path) };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A problem `cache verify` found. */
export interface VerifyProblem {
  /** An integrity failure, or a sound record that disagrees with its code object. */
  kind: IntegrityKind | 'record-mismatch';
  /** Entry id, or null for a record that could not be read at all. */
  id: string | null;
  path: string;
  detail: string;
  /** What `repair` did about it. */
  action: 'none' | 'removed-blob' | 'removed-entry';
}

/** Result of {@link verifyCache}. */
export interface VerifyReport {
  entries: number;
  blobsChecked: number;
  problems: VerifyProblem[];
}

/**
 * Re-hashes every blob referenced by every entry and checks every entry record.
 * With `repair`, corrupt blobs are deleted (the next compile-all sees them missing and rebuilds
 * them) and unreadable records are deleted; missing blobs need no action beyond a rebuild.
 */
export function verifyCache(cache: KernelCache, options: VerifyOptions = {}): VerifyReport {
  const repair = options.repair ?? false;
  const { entries, corrupt } = cache.listEntries();
  const problems: VerifyProblem[] = [];
  /** Removes a file for `repair`; a failure is told in the problem's detail, never hidden. */
  const remove = (path: string, done: VerifyProblem['action'], problem: Omit<VerifyProblem, 'action'>): void => {
    const error = repair ? tryUnlink(path) : null;
    problems.push(!repair ? { ...problem, action: 'none' } : error ? { ...problem, detail: `${problem.detail} (could not remove: ${error})`, action: 'none' } : { ...problem, action: done });
  };
  for (const err of corrupt) remove(err.path, 'removed-entry', { kind: err.kind, id: null, path: err.path, detail: err.detail });
  const seen = new Map<string, ReturnType<KernelCache['checkBlob']>>();
  for (const entry of entries) {
    let blobsOk = true;
    for (const ref of [entry.ir, entry.code]) {
      const known = seen.get(ref.digest);
      const status = known ?? cache.checkBlob(ref);
      seen.set(ref.digest, status);
      if (status.ok) continue;
      blobsOk = false;
      const problem = { kind: status.kind, id: entry.id, path: cache.blobPath(ref.digest), detail: status.detail };
      // A corrupt blob is removed once, however many entries share it.
      if (status.kind === 'corrupt-blob' && !known) remove(problem.path, 'removed-blob', problem);
      else problems.push({ ...problem, action: 'none' });
    }
    // A record whose blobs are sound must also agree with its code (facts, kernel name).
    const mismatch = blobsOk && options.checkRecord ? options.checkRecord(entry, cache.readBlob(entry.code)) : null;
    if (mismatch) remove(cache.entryPath(entry.id), 'removed-entry', { kind: 'record-mismatch', id: entry.id, path: cache.entryPath(entry.id), detail: mismatch });
  }
  return { entries: entries.length, blobsChecked: seen.size, problems };
}

/** Options of {@link verifyCache}. */
export interface VerifyOptions {
  /** Delete corrupt blobs and unreadable or mismatching records, so the next compile-all rebuilds them. */
  repair?: boolean;
  /**
   * Checks a record against its (verified) code object; returns why they disagree, or null. The
   * compile layer passes one that recomputes the facts and finds the kernel in the code.
   */
  checkRecord?: (entry: CacheEntry, code: Uint8Array) => string | null;
}

/** What {@link pruneCache} removes. */
export interface PruneCacheOptions extends EntryFilter {
  /** Remove entries that compile-all's prune step marked (default true when nothing else is asked). */
  marked?: boolean;
  /** Remove entries whose blobs are missing or corrupt, and unreadable records. */
  broken?: boolean;
  /** Remove every entry matching the filter. */
  all?: boolean;
  /** Report only. */
  dryRun?: boolean;
}

/** A file maintenance meant to delete and could not (permissions, a read-only filesystem). */
export interface RemoveFailure {
  path: string;
  error: string;
}

/** Result of {@link pruneCache}. */
export interface PruneCacheReport {
  removed: { id: string; why: string }[];
  kept: number;
  /** Records that could not be removed: they are still there. */
  failed: RemoveFailure[];
}

/**
 * Removes entry records: those marked by compile-all's prune step (`marked`), those with broken
 * blobs or records (`broken`), or every entry matching the filter (`all`). Blobs are left for `gc`.
 * Note that a removed entry is rebuilt by the next compile-all that selects it.
 */
export function pruneCache(cache: KernelCache, options: PruneCacheOptions = {}): PruneCacheReport {
  const all = options.all ?? false;
  const broken = options.broken ?? false;
  const marked = options.marked ?? (!all && !broken);
  const { entries, corrupt } = cache.listEntries();
  const removed: PruneCacheReport['removed'] = [];
  const failed: RemoveFailure[] = [];
  if (broken) {
    for (const err of corrupt) {
      const error = options.dryRun ? null : tryUnlink(err.path);
      if (error) failed.push({ path: err.path, error });
      else removed.push({ id: err.path, why: 'unreadable record' });
    }
  }
  let kept = 0;
  for (const entry of entries) {
    let why: string | undefined;
    if (matches(entry, options)) {
      if (all) why = 'selected';
      else if (marked && entry.pruned) why = `pruned: ${entry.pruned.reason}`;
      else if (broken) {
        const bad = [entry.ir, entry.code].map((r) => cache.checkBlob(r)).find((s) => !s.ok);
        if (bad && !bad.ok) why = bad.kind;
      }
    }
    if (!why) {
      kept++;
      continue;
    }
    const error = options.dryRun ? null : tryUnlink(cache.entryPath(entry.id));
    if (error) failed.push({ path: cache.entryPath(entry.id), error });
    else removed.push({ id: entry.id, why });
  }
  return { removed, kept, failed };
}

/** Result of {@link gcCache}. */
export interface GcReport {
  removedBlobs: string[];
  freedBytes: number;
  keptBlobs: number;
  removedTemps: string[];
  /** Files gc meant to delete and could not: they are still there, and not counted as removed. */
  failed: RemoveFailure[];
}

/**
 * Deletes blobs no entry references and temp files left by writers that died. Only files older
 * than `graceMs` (default one hour) are touched, so a concurrent compile-all that has written a
 * blob but not yet its entry (or is mid-write of a temp file) loses nothing.
 */
export function gcCache(cache: KernelCache, options: { graceMs?: number; now?: number; dryRun?: boolean } = {}): GcReport {
  const graceMs = options.graceMs ?? 3_600_000;
  const now = options.now ?? Date.now();
  // Blobs are listed before entries are read: a blob written after the listing is simply not
  // considered, and one written before it is either referenced or younger than the grace period.
  const digests = cache.listBlobDigests();
  const { entries } = cache.listEntries();
  const referenced = new Set<string>();
  for (const e of entries) {
    referenced.add(e.ir.digest);
    referenced.add(e.code.digest);
  }
  const report: GcReport = { removedBlobs: [], freedBytes: 0, keptBlobs: 0, removedTemps: [], failed: [] };
  const remove = (path: string): boolean => {
    const error = options.dryRun ? null : tryUnlink(path);
    if (error) report.failed.push({ path, error });
    return error === null;
  };
  for (const d of digests) {
    const st = cache.blobStat(d);
    if (!st) continue;
    if (referenced.has(d) || now - st.mtimeMs < graceMs) {
      report.keptBlobs++;
      continue;
    }
    if (!remove(cache.blobPath(d))) continue;
    report.removedBlobs.push(d);
    report.freedBytes += st.size;
  }
  for (const dir of [cache.indexDir, ...shardDirs(cache.blobDir)]) {
    for (const name of safeReaddir(dir)) {
      if (!isTempName(name)) continue;
      const path = join(dir, name);
      try {
        if (now - statSync(path).mtimeMs < graceMs) continue;
      } catch {
        continue;
      }
      if (remove(path)) report.removedTemps.push(path);
    }
  }
  return report;
}

function shardDirs(blobDir: string): string[] {
  return safeReaddir(blobDir)
    .filter((n) => /^[0-9a-f]{2}$/.test(n))
    .map((n) => join(blobDir, n));
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Deletes a file; null when it is gone (removed now, or already), else the error, e.g. `EACCES: permission denied`. */
function tryUnlink(path: string): string | null {
  try {
    unlinkSync(path);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : errnoText(err);
  }
}
