import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helperSpecs } from '@rocke/split-reduce';
import { describe, expect, it } from 'vitest';
import { KernelCache } from '../../cache/cache.js';
import { compileAll } from '../compile-all.js';
import { elfPrunePruner } from '../elf-prune-pruner.js';
import { LlvmToolchain } from '../llvm-toolchain.js';
import { splitReduceFamily } from './split-reduce.js';

describe('split-reduce family', () => {
  const family = splitReduceFamily();

  it('offers every helper spec per target under the direct_fwd_helper namespace', () => {
    expect(family.name).toBe('direct_fwd_helper');
    for (const t of family.targets) expect(family.candidates(t).map((c) => c.spec)).toEqual(helperSpecs(t));
  });

  it('refuses specs that are malformed or for another target', () => {
    const [c] = family.candidates('sm_90');
    expect(() => family.build({ ...c!, spec: { ...(c!.spec as object), extra: 1 } }, 'sm_90', 'llvm22')).toThrow(/not a split-reduce spec/);
    expect(() => family.build(c!, 'gfx950', 'llvm22')).toThrow(/for sm_90, not gfx950/);
    expect(() => family.build(c!, 'sm_90', 'llvm99')).toThrow(/expects llvm99/);
  });

  it('compiles for gfx950 and sm_90 without spills, and the second run is all cached', async () => {
    const cache = new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-sr-')));
    const opts = { cache, families: [family], compiler: new LlvmToolchain(), targets: ['gfx950', 'sm_90'] as const, pruner: elfPrunePruner(), jobs: 2 };
    const first = await compileAll({ ...opts, targets: [...opts.targets] });
    const perTarget = helperSpecs('gfx950').length;
    expect(first.failed).toEqual([]);
    expect(first.compiled).toBe(2 * perTarget);
    const { entries } = cache.listEntries();
    for (const e of entries) {
      const facts = e.facts as { name: string; spills: { any: boolean } } | null;
      if (e.code.kind === 'ptx') continue;
      expect(facts?.name).toBe(e.kernelName);
      expect(facts?.spills.any).toBe(false);
    }
    expect(first.pruned).toEqual([]);
    const second = await compileAll({ ...opts, targets: [...opts.targets] });
    expect([second.compiled, second.cached]).toEqual([0, 2 * perTarget]);
  });
});
