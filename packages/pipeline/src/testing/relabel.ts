// Test helper: presents a family's candidates under other variant names (e.g. to run
// elf-prune's grouped/split_c rules over the hand-written axpy kernels).
import type { Family } from '@rocke/ir';

export function relabel<S>(family: Family<S>, names: Record<string, string>): Family<S> {
  const back = new Map(Object.entries(names).map(([from, to]) => [to, from]));
  return {
    name: family.name,
    targets: family.targets,
    ...(family.emitter !== undefined ? { emitter: family.emitter } : {}),
    schema: family.schema,
    ...(family.wavesPerEu ? { wavesPerEu: (s: S) => family.wavesPerEu!(s) } : {}),
    candidates: (t) => family.candidates(t).map((c) => ({ ...c, variant: names[c.variant] ?? c.variant })),
    build: (c, t, f) => family.build({ ...c, variant: back.get(c.variant) ?? c.variant }, t, f),
  };
}
