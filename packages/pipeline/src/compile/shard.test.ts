import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KernelCache } from '../cache/cache.js';
import { mergeCaches } from '../cache/merge.js';
import { canonicalJson, sha256Hex } from '../hash.js';
import { compileAll } from './compile-all.js';
import { axpyFamily } from './axpy-family.js';
import type { Pruner } from './family.js';
import { z } from 'zod';
import type { KernelCompiler } from './llvm-toolchain.js';

/** "Compiles" IR to bytes that depend only on the IR length modulo 3, so many kernels are twins. */
const compiler: KernelCompiler = {
  flavor: 'llvm22',
  fingerprint: async () => 'fake toolchain',
  compile: async (ir) => ({ kind: 'ptx', bytes: Buffer.from(`code ${ir.length % 3}`) }),
};

/** Drops every twin (same code digest) but the one with the smallest id. */
const pruner: Pruner<{ digest: string }> = {
  factsSchema: z.object({ digest: z.string() }).strict(),
  facts: (code) => ({ digest: sha256Hex(code) }),
  prune(entries) {
    const first = new Map<string, string>();
    for (const e of [...entries].sort((a, b) => (a.id < b.id ? -1 : 1))) if (!first.has(e.codeDigest)) first.set(e.codeDigest, e.id);
    return entries.filter((e) => first.get(e.codeDigest) !== e.id).map((e) => ({ id: e.id, reason: 'twin', detail: first.get(e.codeDigest)! }));
  },
};

const dir = () => mkdtempSync(join(tmpdir(), 'rocke-shard-'));
const families = [axpyFamily({ scales: [1, 2, 3, 4, 5] })];
const run = (root: string, shard?: { index: number; count: number }) =>
  compileAll({ cache: new KernelCache(root), families, compiler, pruner, targets: ['gfx950', 'sm_90'], jobs: 2, ...(shard ? { shard } : {}) });
const snapshot = (root: string) => {
  const cache = new KernelCache(root);
  return { entries: cache.listEntries().entries.map((e) => canonicalJson(e)), blobs: cache.listBlobDigests() };
};

describe('compile-all --shard', () => {
  it('three shards merged, then one unsharded pass (which only prunes), equal one unsharded run', async () => {
    const whole = dir();
    const full = await run(whole);
    expect(full.pruned.length).toBeGreaterThan(0);
    const shards = [dir(), dir(), dir()];
    const reports = await Promise.all(shards.map((d, index) => run(d, { index, count: 3 })));
    expect(reports.map((r) => r.total).reduce((a, b) => a + b, 0)).toBe(full.total);
    expect(reports.every((r) => !r.pruneApplied && r.pruned.length === 0)).toBe(true);
    const merged = dir();
    expect(mergeCaches(merged, shards).problems).toEqual([]);
    const finish = await run(merged);
    expect([finish.compiled, finish.rebuilt, finish.cached]).toEqual([0, 0, full.total]);
    expect(snapshot(merged)).toEqual(snapshot(whole));
    // Merged in another order: the same cache.
    const other = dir();
    mergeCaches(other, [...shards].reverse());
    await run(other);
    expect(snapshot(other)).toEqual(snapshot(whole));
  });
});
