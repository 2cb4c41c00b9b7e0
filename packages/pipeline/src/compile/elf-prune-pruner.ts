import { KernelFactsSchema, kernelFacts, prune, type KernelFacts } from '@rocke/elf-prune';
import type { PruneDecision, PruneInput, Pruner } from './family.js';

/**
 * The {@link Pruner} backed by @rocke/elf-prune: facts come from `kernelFacts(code, kernelName)`
 * (AMD code objects and cubins; PTX has none) and read back through its `KernelFactsSchema`, and
 * decisions from its `prune()` rules, with the entry's variant as elf-prune's `family`
 * (`grouped` / `split_c` are prunable; `dense` and anything else is never touched).
 */
export function elfPrunePruner(): Pruner<KernelFacts> {
  return {
    factsSchema: KernelFactsSchema,
    facts(code, kind, kernelName) {
      return kind === 'ptx' ? null : kernelFacts(code, kernelName);
    },
    prune(entries: readonly PruneInput<KernelFacts>[]): PruneDecision[] {
      const mapped = [];
      for (const e of entries) {
        // Entries without facts (PTX) cannot be judged by their binary: keep them.
        if (e.facts === null) continue;
        mapped.push({ id: e.id, family: e.identity.variant, wavesPerEu: e.wavesPerEu, twinKey: e.twinKey, facts: e.facts });
      }
      return prune(mapped).dropped.map((d) => ({ id: d.entry.id, reason: d.reason, detail: d.detail }));
    },
  };
}
