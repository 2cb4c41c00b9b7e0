import { mkdtempSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KernelCache } from './cache.js';
import { compileAll, type JobStatus } from './compile-all.js';
import { axpyFamily } from './families/axpy.js';
import type { Family } from './family.js';
import { LlvmToolchain, type CompiledCode, type KernelCompiler, type TargetName } from './llvm-toolchain.js';
import { digestTwinPruner } from './testing/digest-twin-pruner.js';

const toolchain = new LlvmToolchain();

/** Wraps a compiler to count calls and the most compiles in flight at once. */
function counting(inner: KernelCompiler) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const compiler: KernelCompiler = {
    flavor: inner.flavor,
    fingerprint: (t) => inner.fingerprint(t),
    async compile(ir, target, options) {
      stats.calls++;
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        return await inner.compile(ir, target, options);
      } finally {
        stats.inFlight--;
      }
    },
  };
  return { compiler, stats };
}

function tempCache(): KernelCache {
  return new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-ca-test-')));
}

describe('compileAll with the real LLVM toolchain', () => {
  it('compiles, isolates failures, prunes twins, then skips everything up to date', async () => {
    const cache = tempCache();
    const family = axpyFamily({ scales: [1, 2], brokenCount: 1 });
    const { compiler, stats } = counting(toolchain);
    const seen: JobStatus[] = [];
    let total = -1;
    const report = await compileAll({
      cache,
      families: [family],
      compiler,
      targets: ['gfx950', 'sm_90'],
      pruner: digestTwinPruner,
      jobs: 2,
      progress: { start: (n) => (total = n), done: (s) => seen.push(s) },
    });
    // gfx950: 2 scales x {None, 3} + scratch + broken = 6; sm_90: 2 + scratch + broken = 4.
    expect(total).toBe(10);
    expect(report.total).toBe(10);
    expect(report.compiled).toBe(8);
    expect(report.cached).toBe(0);
    expect(report.failed.map((f) => [f.target, f.stage, f.kernelName])).toEqual([
      ['gfx950', 'compile', 'axpy_broken_0'],
      ['sm_90', 'compile', 'axpy_broken_0'],
    ]);
    expect(report.failed[0]!.message).toMatch(/opt failed/);
    expect(seen.filter((s) => s === 'failed')).toHaveLength(2);
    expect(seen).toHaveLength(10);
    // Both waves_per_eu=3 builds on gfx950 link to the same bytes as their None twins.
    expect(report.prunedByReason).toEqual({ 'we3-twin': 2 });
    const { entries } = cache.listEntries();
    expect(entries).toHaveLength(8);
    const marked = entries.filter((e) => e.pruned);
    expect(marked.map((e) => [e.identity.target, (e.identity.spec as { wavesPerEu: number }).wavesPerEu])).toEqual([
      ['gfx950', 3],
      ['gfx950', 3],
    ]);
    expect(entries.filter((e) => e.identity.target === 'sm_90').every((e) => e.code.kind === 'cubin' || e.code.kind === 'ptx')).toBe(true);
    expect(stats.calls).toBe(10);

    const again = await compileAll({ cache, families: [family], compiler, targets: ['gfx950', 'sm_90'], pruner: digestTwinPruner, jobs: 2 });
    expect([again.compiled, again.rebuilt, again.cached, again.failed.length]).toEqual([0, 0, 8, 2]);
    expect(again.prunedByReason).toEqual({ 'we3-twin': 2 });
    // Only the two broken kernels were tried again.
    expect(stats.calls).toBe(12);
  });

  it('rebuilds an entry whose code blob was truncated, and one whose IR changed', async () => {
    const cache = tempCache();
    const family = axpyFamily({ scales: [3], targets: ['gfx942'] });
    await compileAll({ cache, families: [family], compiler: toolchain, jobs: 2 });
    const [first] = cache.listEntries().entries.filter((e) => e.identity.variant === 'plain');
    truncateSync(cache.blobPath(first!.code.digest), 10);
    const changed: Family = {
      ...family,
      build: (c, t, f) => {
        const k = family.build(c, t, f);
        return c.variant === 'scratch' ? { ...k, ir: `; emitter v2\n${k.ir}` } : k;
      },
    };
    const { compiler, stats } = counting(toolchain);
    const report = await compileAll({ cache, families: [changed], compiler, jobs: 2 });
    // The waves_per_eu twins share one content-addressed code blob, so both see it corrupt.
    expect(report.rebuiltByCause).toEqual({ 'corrupt-blob': 2, 'IR changed': 1 });
    expect([report.rebuilt, report.cached, stats.calls]).toEqual([3, 0, 3]);
    expect(cache.checkBlob(first!.code).ok).toBe(true);
    expect(report.pruneApplied).toBe(false);
    expect(report.pruned).toEqual([]);
  });
});

describe('compileAll engine', () => {
  const fakeCompiler = (delayMs: number): KernelCompiler => ({
    flavor: 'fake1',
    fingerprint: async () => 'fake toolchain 1',
    async compile(ir: string, target: TargetName): Promise<CompiledCode> {
      await new Promise((r) => setTimeout(r, delayMs));
      if (ir.includes('CRASH')) throw new Error('tool crashed (signal SIGSEGV)');
      return { kind: target === 'sm_90' ? 'cubin' : 'hsaco', bytes: new Uint8Array(Buffer.from(`obj:${ir}`)) };
    },
  });
  const listFamily = (n: number, opts: { throwAt?: number; crashAt?: number } = {}): Family => ({
    name: 'list',
    targets: ['gfx950', 'sm_90'],
    candidates: () => Array.from({ length: n }, (_, i) => ({ variant: 'v', spec: { i } })),
    build: (c) => {
      const i = (c.spec as { i: number }).i;
      if (i === opts.throwAt) throw new Error(`cannot build ${i}`);
      return { kernelName: `k${i}`, ir: `kernel ${i}${i === opts.crashAt ? ' CRASH' : ''}` };
    },
  });

  it('keeps at most `jobs` compiles in flight and uses them all', async () => {
    const { compiler, stats } = counting(fakeCompiler(15));
    const report = await compileAll({ cache: tempCache(), families: [listFamily(12)], compiler, targets: ['gfx950'], jobs: 4 });
    expect(report.compiled).toBe(12);
    expect(stats.maxInFlight).toBe(4);
  });

  it('reports a build error, a crashing compile and a failing enumeration, and finishes the rest', async () => {
    const bad: Family = { name: 'bad', targets: ['gfx950'], candidates: () => { throw new Error('no grid'); }, build: () => ({ kernelName: 'x', ir: '' }) };
    const report = await compileAll({ cache: tempCache(), families: [listFamily(6, { throwAt: 1, crashAt: 4 }), bad], compiler: fakeCompiler(1), jobs: 3 });
    expect(report.compiled).toBe(8); // 6 per target x 2 targets, minus 2 builds and 2 crashes
    expect(report.failed.map((f) => [f.family, f.target, f.stage, f.message])).toEqual([
      ['bad', 'gfx950', 'candidates', 'no grid'],
      ['list', 'gfx950', 'build', 'cannot build 1'],
      ['list', 'gfx950', 'compile', 'tool crashed (signal SIGSEGV)'],
      ['list', 'sm_90', 'build', 'cannot build 1'],
      ['list', 'sm_90', 'compile', 'tool crashed (signal SIGSEGV)'],
    ]);
  });

  it('de-duplicates candidates with the same identity', async () => {
    const dup: Family = { ...listFamily(3), candidates: () => [{ variant: 'v', spec: { i: 0 } }, { variant: 'v', spec: { i: 0 } }] };
    const report = await compileAll({ cache: tempCache(), families: [dup], compiler: fakeCompiler(0), targets: ['gfx950'], jobs: 1 });
    expect(report.total).toBe(1);
  });

  it('clears a prune mark when the pruner no longer drops the entry', async () => {
    const cache = tempCache();
    const fam = listFamily(2);
    const dropAll = { facts: () => null, prune: (es: readonly { id: string }[]) => es.map((e) => ({ id: e.id, reason: 'test', detail: '' })) };
    await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], pruner: dropAll, jobs: 1 });
    expect(cache.listEntries().entries.every((e) => e.pruned?.reason === 'test')).toBe(true);
    await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], pruner: { facts: () => null, prune: () => [] }, jobs: 1 });
    expect(cache.listEntries().entries.every((e) => e.pruned === null)).toBe(true);
  });

  it('rejects a bad job count', async () => {
    await expect(compileAll({ cache: tempCache(), families: [], compiler: fakeCompiler(0), jobs: 0 })).rejects.toThrow(/jobs/);
  });
});
