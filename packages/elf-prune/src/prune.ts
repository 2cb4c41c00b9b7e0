/**
 * Cache pruning after compile-all (DESIGN.md §1): for the grouped and split_c families, drop
 * binaries that spill, and `waves_per_eu = 3` builds whose code is byte-identical to their
 * `waves_per_eu = None` twin. Dense (unsplit) entries and any other family are never touched.
 */

/** Families whose entries may be pruned. */
export const PRUNABLE_FAMILIES: readonly string[] = ['grouped', 'split_c'];

/** The `waves_per_eu` value whose builds are compared against their unconstrained twin. */
export const TWIN_WAVES_PER_EU = 3;

/** The part of {@link KernelFacts} pruning reads; any `KernelFacts` value fits. */
export interface PruneFacts {
  textDigest: string;
  spills: { any: boolean } & Record<string, number | boolean>;
  scratchBytes?: number;
}

/**
 * One compiled cache entry as pruning sees it. The pipeline passes its own entry objects
 * (extra fields are kept and handed back untouched) with these fields filled in:
 * - `id`: unique per entry (e.g. the identity hash);
 * - `family`: `'dense' | 'split_c' | 'grouped' | ...` (the spec's variant);
 * - `wavesPerEu`: the spec's `waves_per_eu` (null for None);
 * - `twinKey`: the entry's identity with `waves_per_eu` removed (family, target and flavor
 *   included), e.g. a hash of the canonical spec JSON without that field, so the 3-build and
 *   the None-build of one spec share it;
 * - `facts`: the kernel's facts from {@link kernelFacts} on the entry's binary.
 */
export interface PruneEntry {
  id: string;
  family: string;
  wavesPerEu: number | null;
  twinKey: string;
  facts: PruneFacts;
}

/** Why an entry was dropped. */
export type PruneReason = 'spills' | 'waves_per_eu-twin';

/** A dropped entry with its reason and a human-readable detail. */
export interface DroppedEntry<E extends PruneEntry = PruneEntry> {
  entry: E;
  reason: PruneReason;
  detail: string;
}

/** Kept and dropped entries, each in input order. */
export interface PruneResult<E extends PruneEntry = PruneEntry> {
  kept: E[];
  dropped: DroppedEntry<E>[];
}

/** Bad input to {@link prune} (duplicate ids, ambiguous twins, malformed fields). */
export class PruneError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.name = 'PruneError';
    this.reason = reason;
  }
}

/**
 * Applies the prune rules. Spilling is checked first, so a spilling 3-build is reported as
 * `spills` even when it also equals its twin. Pure and deterministic: the result depends only
 * on the entries and their order.
 */
export function prune<E extends PruneEntry>(entries: readonly E[]): PruneResult<E> {
  validate(entries);
  const unconstrained = new Map<string, E>();
  for (const e of entries) {
    if (e.wavesPerEu !== null || !PRUNABLE_FAMILIES.includes(e.family)) continue;
    const key = twinLookupKey(e);
    const other = unconstrained.get(key);
    if (other) throw new PruneError(`entries ${other.id} and ${e.id} share twinKey ${e.twinKey} with wavesPerEu=null`);
    unconstrained.set(key, e);
  }
  const kept: E[] = [];
  const dropped: DroppedEntry<E>[] = [];
  for (const entry of entries) {
    if (!PRUNABLE_FAMILIES.includes(entry.family)) {
      kept.push(entry);
      continue;
    }
    if (entry.facts.spills.any) {
      dropped.push({ entry, reason: 'spills', detail: spillDetail(entry.facts) });
      continue;
    }
    const twin = entry.wavesPerEu === TWIN_WAVES_PER_EU ? unconstrained.get(twinLookupKey(entry)) : undefined;
    if (twin && twin.facts.textDigest === entry.facts.textDigest) {
      dropped.push({
        entry,
        reason: 'waves_per_eu-twin',
        detail: `code identical to waves_per_eu=None twin ${twin.id} (sha256 ${entry.facts.textDigest.slice(0, 16)}…)`,
      });
      continue;
    }
    kept.push(entry);
  }
  return { kept, dropped };
}

function twinLookupKey(e: PruneEntry): string {
  return `${e.family}\u0000${e.twinKey}`;
}

function spillDetail(facts: PruneFacts): string {
  const counts = Object.entries(facts.spills)
    .filter(([k, v]) => k !== 'any' && typeof v === 'number')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
  const scratch = facts.scratchBytes === undefined ? '' : `; scratch ${facts.scratchBytes} B`;
  return `binary spills (${counts || 'count unknown'}${scratch})`;
}

function validate(entries: readonly PruneEntry[]): void {
  if (!Array.isArray(entries)) throw new PruneError('entries must be an array');
  const ids = new Set<string>();
  entries.forEach((e, i) => {
    const at = `entries[${i}]`;
    if (typeof e !== 'object' || e === null) throw new PruneError(`${at} is not an object`);
    if (typeof e.id !== 'string' || e.id === '') throw new PruneError(`${at}.id must be a non-empty string`);
    if (ids.has(e.id)) throw new PruneError(`${at}: duplicate id ${e.id}`);
    ids.add(e.id);
    if (typeof e.family !== 'string') throw new PruneError(`${at} (${e.id}).family must be a string`);
    if (typeof e.twinKey !== 'string') throw new PruneError(`${at} (${e.id}).twinKey must be a string`);
    if (e.wavesPerEu !== null && !(Number.isInteger(e.wavesPerEu) && e.wavesPerEu > 0)) {
      throw new PruneError(`${at} (${e.id}).wavesPerEu must be null or a positive integer, got ${String(e.wavesPerEu)}`);
    }
    const f = e.facts as PruneFacts | undefined;
    if (typeof f !== 'object' || f === null || typeof f.textDigest !== 'string' || typeof f.spills?.any !== 'boolean') {
      throw new PruneError(`${at} (${e.id}).facts must hold textDigest and spills.any`);
    }
  });
}
