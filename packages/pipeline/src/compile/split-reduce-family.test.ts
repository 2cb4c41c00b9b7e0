import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helperSpecs, splitReduceFamily } from '@rocke/split-reduce';
import { parseKernelFacts } from '@rocke/elf-prune';
import { describe, expect, it } from 'vitest';
import { KernelCache } from '../cache/cache.js';
import { compileAll } from './compile-all.js';
import { elfPrunePruner } from './elf-prune-pruner.js';
import { LlvmToolchain } from './llvm-toolchain.js';

describe('split-reduce family through compile-all', () => {
  const family = splitReduceFamily();

  it('compiles for gfx950 and sm_90 without spills, and the second run is all cached', async () => {
    const cache = new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-sr-')));
    const opts = { cache, families: [family], compiler: new LlvmToolchain(), targets: ['gfx950', 'sm_90'] as const, pruner: elfPrunePruner(), jobs: 2 };
    const first = await compileAll({ ...opts, targets: [...opts.targets] });
    const perTarget = helperSpecs('gfx950').length;
    expect(first.failed).toEqual([]);
    expect(first.compiled).toBe(2 * perTarget);
    const { entries } = cache.listEntries();
    for (const e of entries) {
      const facts = e.facts === null ? null : parseKernelFacts(e.facts);
      if (e.code.kind === 'ptx') continue;
      expect(facts?.name).toBe(e.kernelName);
      expect(facts?.spills.any).toBe(false);
    }
    expect(first.pruned).toEqual([]);
    const second = await compileAll({ ...opts, targets: [...opts.targets] });
    expect([second.compiled, second.cached]).toEqual([0, 2 * perTarget]);
  });
});
