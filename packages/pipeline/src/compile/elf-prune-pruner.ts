import { kernelFacts, prune, type PruneEntry, type PruneFacts } from '@rocke/elf-prune';
import type { PruneDecision, PruneInput, Pruner } from './family.js';
import { canonicalJson, type JsonValue } from '../hash.js';

/**
 * The `waves_per_eu` of a spec: the `waves_per_eu` field (conv-direct's name), null when absent.
 * Throws for a value that is neither null nor a positive integer.
 */
export function specWavesPerEu(spec: JsonValue): number | null {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec) || !('waves_per_eu' in spec)) return null;
  const v = spec['waves_per_eu'];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new TypeError(`spec.waves_per_eu must be null or a positive integer, got ${JSON.stringify(v)}`);
  return v;
}

/** The identity of an entry without its `waves_per_eu`: equal for an entry and its twin. */
export function twinKeyOf(input: PruneInput): string {
  const spec = input.identity.spec;
  let rest: JsonValue = spec;
  if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
    const { waves_per_eu: _dropped, ...others } = spec;
    rest = others;
  }
  return canonicalJson({ ...input.identity, spec: rest });
}

/**
 * The {@link Pruner} backed by @rocke/elf-prune: facts come from `kernelFacts(code, kernelName)`
 * (AMD code objects and cubins; PTX has none), and decisions from its `prune()` rules, with the
 * entry's variant as elf-prune's `family` (`grouped` / `split_c` are prunable; `dense` and
 * anything else is never touched).
 */
export function elfPrunePruner(): Pruner {
  return {
    facts(code, kind, kernelName) {
      if (kind === 'ptx') return null;
      return kernelFacts(code, kernelName) as unknown as JsonValue;
    },
    prune(entries: readonly PruneInput[]): PruneDecision[] {
      const mapped: (PruneEntry & { input: PruneInput })[] = [];
      for (const e of entries) {
        // Entries without facts (PTX) cannot be judged by their binary: keep them.
        if (e.facts === null) continue;
        mapped.push({
          id: e.id,
          family: e.identity.variant,
          wavesPerEu: specWavesPerEu(e.identity.spec),
          twinKey: twinKeyOf(e),
          facts: e.facts as unknown as PruneFacts,
          input: e,
        });
      }
      return prune(mapped).dropped.map((d) => ({ id: d.entry.id, reason: d.reason, detail: d.detail }));
    },
  };
}
