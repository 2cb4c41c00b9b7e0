import type { CacheEntry } from '../cache/cache.js';
import { canonicalJson, type JsonValue } from '../hash.js';
import type { AnyPruner } from './family.js';

/**
 * Why a cache record disagrees with its own code object, or null when it agrees. A record is
 * trusted for its identity (the id is its hash) but its other fields are claims: the kernel name
 * must name a kernel of the code, and the stored facts (which drive the prune step and the kept
 * table) must be the facts the pruner reads from the code now. A record without facts yet (stored
 * before a pruner was available) only has its kernel name checked.
 */
export function recordMismatch(entry: CacheEntry, code: Uint8Array, pruner: AnyPruner): string | null {
  let facts: JsonValue | null;
  try {
    facts = pruner.facts(code, entry.code.kind, entry.kernelName) as JsonValue | null;
  } catch (err) {
    return `kernel ${entry.kernelName} cannot be read from its code object: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (entry.facts === null || canonicalJson(facts) === canonicalJson(entry.facts)) return null;
  return `stored facts differ from the code object's${firstDifference(entry.facts, facts)}`;
}

/** `: at spills.any, stored true, code false` for the first differing leaf, or ''. */
function firstDifference(stored: JsonValue | null, actual: JsonValue | null, path = ''): string {
  if (stored !== null && actual !== null && typeof stored === 'object' && typeof actual === 'object' && Array.isArray(stored) === Array.isArray(actual)) {
    const keys = [...new Set([...Object.keys(stored), ...Object.keys(actual)])].sort();
    for (const k of keys) {
      const a = (stored as Record<string, JsonValue>)[k] ?? null;
      const b = (actual as Record<string, JsonValue>)[k] ?? null;
      if (canonicalJson(a) !== canonicalJson(b)) return firstDifference(a, b, path ? `${path}.${k}` : k);
    }
    return '';
  }
  return `: at ${path || '(root)'}, stored ${JSON.stringify(stored)?.slice(0, 60)}, code ${JSON.stringify(actual)?.slice(0, 60)}`;
}
