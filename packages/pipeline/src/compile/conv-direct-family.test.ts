import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aotCandidates, canonicalSpecJson, convDirectFamily, kernelName, registerEstimate, type Spec, type Variant } from '@rocke/conv-direct';
import { parseKernelFacts } from '@rocke/elf-prune';
import { describe, expect, it } from 'vitest';
import { KernelCache, type CacheEntry } from '../cache/cache.js';
import { compileAll } from './compile-all.js';
import { elfPrunePruner } from './elf-prune-pruner.js';
import { LlvmToolchain } from './llvm-toolchain.js';

const noWpe = (s: Spec) => canonicalSpecJson({ ...s, waves_per_eu: null });

/**
 * A reduced grid: per target, the first dense and grouped specs (with their waves_per_eu=3 twins
 * on AMD), the first four split_c specs with their twins, and the split_c spec with the highest
 * register estimate, which conv-direct's own heuristic says will spill (the forced spilling entry).
 */
function reducedGrid(target: 'gfx950' | 'gfx942' | 'sm_90', variant: Variant): Spec[] {
  const valid = aotCandidates(target, 'bf16', variant).valid;
  const twins = new Map(valid.filter((s) => s.waves_per_eu === 3).map((s) => [noWpe(s), s]));
  const out: Spec[] = [];
  for (const s of valid.filter((x) => x.waves_per_eu === null).slice(0, variant === 'split_c' ? 4 : 1)) {
    out.push(s);
    const t = twins.get(noWpe(s));
    if (t) out.push(t);
  }
  if (variant === 'split_c') out.push([...valid].sort((a, b) => registerEstimate(b).live - registerEstimate(a).live)[0]!);
  return out;
}

describe('conv-direct family through compile-all', () => {
  it('compile-all of a reduced grid for gfx950 and sm_90: spills and waves_per_eu twins of split_c/grouped pruned, dense kept', async () => {
    const cache = new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-cd-')));
    const family = convDirectFamily({ dtypes: ['bf16'], grid: (t, _d, v) => reducedGrid(t, v) });
    const report = await compileAll({ cache, families: [family], compiler: new LlvmToolchain(), targets: ['gfx950', 'sm_90'], pruner: elfPrunePruner(), jobs: 2 });
    expect(report.failed).toEqual([]);
    const { entries } = cache.listEntries();
    expect(entries).toHaveLength(report.total);
    const facts = (e: CacheEntry) => parseKernelFacts(e.facts);
    const spec = (e: CacheEntry) => e.identity.spec as unknown as Spec;

    // Dense entries are never pruned, whatever their code.
    const dense = entries.filter((e) => e.identity.variant === 'dense');
    expect(dense.length).toBeGreaterThanOrEqual(3);
    expect(dense.every((e) => e.pruned === null)).toBe(true);

    // The forced spilling entry spills on both targets and is dropped for it.
    for (const target of ['gfx950', 'sm_90']) {
      const forced = reducedGrid(target as 'gfx950' | 'sm_90', 'split_c').at(-1)!;
      const e = entries.find((x) => x.kernelName === kernelName(forced))!;
      expect(facts(e).spills.any).toBe(true);
      expect(e.pruned?.reason).toBe('spills');
    }

    // Every split_c and grouped entry: spills -> 'spills'; else a waves_per_eu=3 build with its None
    // twin's code bytes -> 'waves_per_eu-twin'; else kept. At least one twin is byte-identical on gfx950.
    const split = entries.filter((e) => e.identity.variant === 'split_c' || e.identity.variant === 'grouped');
    expect(split.some((e) => e.identity.variant === 'grouped')).toBe(true);
    const byKey = new Map(split.filter((e) => spec(e).waves_per_eu === null).map((e) => [`${e.identity.target}|${e.identity.variant}|${noWpe(spec(e))}`, e]));
    let twinsDropped = 0;
    for (const e of split) {
      const none = spec(e).waves_per_eu === 3 ? byKey.get(`${e.identity.target}|${e.identity.variant}|${noWpe(spec(e))}`) : undefined;
      const expected = facts(e).spills.any ? 'spills' : none && facts(none).textDigest === facts(e).textDigest ? 'waves_per_eu-twin' : null;
      expect([e.kernelName, e.pruned?.reason ?? null]).toEqual([e.kernelName, expected]);
      if (expected === 'waves_per_eu-twin') twinsDropped++;
    }
    expect(twinsDropped).toBeGreaterThanOrEqual(1);
    expect(report.prunedByReason['waves_per_eu-twin']).toBe(twinsDropped);
  }, 180_000); // about twenty real LLVM compiles: past the default 60 s on a loaded 2-core machine
});
