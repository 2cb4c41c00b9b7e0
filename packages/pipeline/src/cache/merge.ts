import { existsSync } from 'node:fs';
import { CacheIntegrityError, KernelCache, type CacheEntry } from './cache.js';
import { canonicalJson } from '../hash.js';
import { RecordStore } from './records.js';

/** What {@link mergeCaches} did, and what it could not read. */
export interface MergeReport {
  entries: { added: number; replaced: number; unchanged: number };
  blobs: number;
  records: { added: number; replaced: number; unchanged: number };
  problems: { source: string; detail: string }[];
}

/**
 * Of two cache entries with one id (one identity), the one whose canonical JSON sorts first: the
 * same choice whatever order the caches are merged in.
 */
function preferredEntry(a: CacheEntry, b: CacheEntry): CacheEntry {
  return canonicalJson(a) <= canonicalJson(b) ? a : b;
}

function mergeEntries(into: KernelCache, from: KernelCache, report: MergeReport): void {
  const { entries, corrupt } = from.listEntries();
  for (const c of corrupt) report.problems.push({ source: from.root, detail: c.message });
  for (const e of entries) {
    let current: CacheEntry | undefined;
    try {
      current = into.getEntry(e.id);
    } catch (err) {
      if (!(err instanceof CacheIntegrityError)) throw err;
    }
    if (current && canonicalJson(current) === canonicalJson(e)) {
      report.entries.unchanged++;
      continue;
    }
    if (current && preferredEntry(current, e) === current && into.checkBlob(current.code).ok) {
      report.entries.unchanged++;
      continue;
    }
    try {
      // Blobs first (read back through their digests), then the entry that names them.
      for (const ref of [e.ir, e.code]) {
        if (!into.checkBlob(ref).ok) {
          into.putBlob(from.readBlob(ref));
          report.blobs++;
        }
      }
    } catch (err) {
      if (!(err instanceof CacheIntegrityError)) throw err;
      report.problems.push({ source: from.root, detail: `entry ${e.id.slice(0, 12)} (${e.kernelName}) not merged: ${err.message}` });
      continue;
    }
    into.putEntry(e);
    if (current) report.entries.replaced++;
    else report.entries.added++;
  }
}

/**
 * Folds the kernel caches and tuning records of `sources` into the cache at `into` (`rocke cache
 * merge`). Entries: blobs are copied after their digests check out; for one id, the entry whose
 * canonical JSON sorts first is kept. Records: the faster verified record wins, ties broken by
 * canonical JSON. The result does not depend on the order of the sources, so shards merged equal
 * one unsharded run. Unreadable entries and records are reported and skipped.
 */
export function mergeCaches(into: string, sources: readonly string[]): MergeReport {
  const report: MergeReport = { entries: { added: 0, replaced: 0, unchanged: 0 }, blobs: 0, records: { added: 0, replaced: 0, unchanged: 0 }, problems: [] };
  const target = new KernelCache(into).ensure();
  const records = new RecordStore(into);
  for (const source of sources) {
    if (!existsSync(source)) {
      report.problems.push({ source, detail: 'no such directory' });
      continue;
    }
    mergeEntries(target, new KernelCache(source), report);
    const { records: incoming, corrupt } = new RecordStore(source).list();
    for (const c of corrupt) report.problems.push({ source, detail: c.message });
    for (const r of incoming) {
      const had = safeGet(records, r.key);
      const { replaced } = records.put(r);
      if (!replaced) report.records.unchanged++;
      else if (had) report.records.replaced++;
      else report.records.added++;
    }
  }
  return report;
}

function safeGet(store: RecordStore, key: string): boolean {
  try {
    return store.get(key) !== undefined;
  } catch {
    return true;
  }
}
