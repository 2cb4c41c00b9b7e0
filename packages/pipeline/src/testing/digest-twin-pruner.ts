// Test pruner: stands in for @rocke/elf-prune in engine tests. Its only rule: an entry with
// spec.wavesPerEu === 3 whose whole code object has the same SHA-256 as the entry that differs only
// by wavesPerEu === null is dropped as 'we3-twin'.
import { canonicalJson, sha256Hex, type JsonValue } from '../hash.js';
import type { PruneDecision, PruneInput, Pruner } from '../family.js';

function twinKey(e: PruneInput): string | null {
  const spec = e.identity.spec;
  if (!spec || typeof spec !== 'object' || Array.isArray(spec) || !('wavesPerEu' in spec)) return null;
  const { wavesPerEu: _ignored, ...rest } = spec as Record<string, JsonValue>;
  return canonicalJson({ ...e.identity, spec: rest });
}

export const digestTwinPruner: Pruner = {
  facts: (code) => ({ codeDigest: sha256Hex(code) }),
  prune(entries: readonly PruneInput[]): PruneDecision[] {
    const none = new Map<string, PruneInput>();
    for (const e of entries) {
      const key = twinKey(e);
      if (key && (e.identity.spec as { wavesPerEu: unknown }).wavesPerEu === null) none.set(key, e);
    }
    const out: PruneDecision[] = [];
    for (const e of entries) {
      const key = twinKey(e);
      if (!key || (e.identity.spec as { wavesPerEu: unknown }).wavesPerEu !== 3) continue;
      const twin = none.get(key);
      const digestOf = (x: PruneInput) => (x.facts as { codeDigest?: string } | null)?.codeDigest;
      if (twin && digestOf(twin) !== undefined && digestOf(twin) === digestOf(e)) {
        out.push({ id: e.id, reason: 'we3-twin', detail: `same code as ${twin.kernelName} (waves_per_eu=None)` });
      }
    }
    return out;
  },
};
