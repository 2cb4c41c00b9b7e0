import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isTempName } from '../atomic-file.js';
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
  kind: IntegrityKind;
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
export function verifyCache(cache: KernelCache, options: { repair?: boolean } = {}): VerifyReport {
  const repair = options.repair ?? false;
  const { entries, corrupt } = cache.listEntries();
  const problems: VerifyProblem[] = [];
  for (const err of corrupt) {
    let action: VerifyProblem['action'] = 'none';
    if (repair) {
      unlinkQuiet(err.path);
      action = 'removed-entry';
    }
    problems.push({ kind: err.kind, id: null, path: err.path, detail: err.detail, action });
  }
  const seen = new Map<string, ReturnType<KernelCache['checkBlob']>>();
  for (const entry of entries) {
    for (const ref of [entry.ir, entry.code]) {
      let status = seen.get(ref.digest);
      if (!status) {
        status = cache.checkBlob(ref);
        seen.set(ref.digest, status);
        if (!status.ok && status.kind === 'corrupt-blob' && repair) cache.removeBlob(ref.digest);
      }
      if (!status.ok) {
        problems.push({
          kind: status.kind,
          id: entry.id,
          path: cache.blobPath(ref.digest),
          detail: status.detail,
          action: repair && status.kind === 'corrupt-blob' ? 'removed-blob' : 'none',
        });
      }
    }
  }
  return { entries: entries.length, blobsChecked: seen.size, problems };
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

/** Result of {@link pruneCache}. */
export interface PruneCacheReport {
  removed: { id: string; why: string }[];
  kept: number;
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
  if (broken) {
    for (const err of corrupt) {
      if (!options.dryRun) unlinkQuiet(err.path);
      removed.push({ id: err.path, why: 'unreadable record' });
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
    if (why) {
      if (!options.dryRun) cache.removeEntry(entry.id);
      removed.push({ id: entry.id, why });
    } else kept++;
  }
  return { removed, kept };
}

/** Result of {@link gcCache}. */
export interface GcReport {
  removedBlobs: string[];
  freedBytes: number;
  keptBlobs: number;
  removedTemps: string[];
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
  const report: GcReport = { removedBlobs: [], freedBytes: 0, keptBlobs: 0, removedTemps: [] };
  for (const d of digests) {
    const st = cache.blobStat(d);
    if (!st) continue;
    if (referenced.has(d) || now - st.mtimeMs < graceMs) {
      report.keptBlobs++;
      continue;
    }
    if (!options.dryRun) cache.removeBlob(d);
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
      if (!options.dryRun) unlinkQuiet(path);
      report.removedTemps.push(path);
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

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
