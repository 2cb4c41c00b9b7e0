import { mkdtempSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KernelCache } from '../cache/cache.js';
import { compileAll, type JobStatus } from './compile-all.js';
import { axpyFamily } from './axpy-family.js';
import type { Family, KernelCandidate } from '@rocke/ir';
import type { Pruner } from './family.js';
import { z } from 'zod';
import { LlvmToolchain, type CompiledCode, type KernelCompiler, type TargetName } from './llvm-toolchain.js';
import { elfPrunePruner } from './elf-prune-pruner.js';
import { relabel } from '../testing/relabel.js';

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
  it('compiles, isolates failures, prunes spills and twins with elf-prune, then skips everything up to date', async () => {
    const cache = tempCache();
    // Plain kernels pose as split_c and the spilling one as grouped (prunable), the scratch kernel
    // as dense (never pruned), so elf-prune's real rules apply to real binaries.
    const family = relabel(axpyFamily({ scales: [1, 2], brokenCount: 1 }), { plain: 'split_c', pressure: 'grouped', scratch: 'dense' });
    const { compiler, stats } = counting(toolchain);
    const seen: JobStatus[] = [];
    let total = -1;
    const options = { cache, families: [family], compiler, targets: ['gfx950', 'sm_90'] as TargetName[], pruner: elfPrunePruner(), jobs: 2 };
    const report = await compileAll({ ...options, progress: { start: (n) => (total = n), done: (s) => seen.push(s) } });
    // gfx950: 2 scales x {None, 3} + scratch + pressure + broken = 7; sm_90: 2 + scratch + pressure + broken = 5.
    expect(total).toBe(12);
    expect(report.total).toBe(12);
    expect(report.compiled).toBe(10);
    expect(report.cached).toBe(0);
    expect(report.failed.map((f) => [f.target, f.stage, f.kernelName])).toEqual([
      ['gfx950', 'compile', 'axpy_broken_0'],
      ['sm_90', 'compile', 'axpy_broken_0'],
    ]);
    expect(report.failed[0]!.message).toMatch(/opt -O3 .* failed \(exit 1\):\n.*error: /);
    expect(seen.filter((s) => s === 'failed')).toHaveLength(2);
    expect(seen).toHaveLength(12);
    const { entries } = cache.listEntries();
    expect(entries).toHaveLength(10);
    const marks = entries
      .filter((e) => e.pruned)
      .map((e) => [e.identity.target, e.kernelName, e.pruned!.reason])
      .sort();
    const spillsOnNvidia = entries.some((e) => e.identity.target === 'sm_90' && e.code.kind === 'cubin');
    expect(marks).toEqual(
      [
        ['gfx950', 'axpy_s1_pressure', 'spills'],
        ['gfx950', 'axpy_s1_we3', 'waves_per_eu-twin'],
        ['gfx950', 'axpy_s2_we3', 'waves_per_eu-twin'],
        ...(spillsOnNvidia ? [['sm_90', 'axpy_s1_pressure', 'spills']] : []),
      ].sort(),
    );
    expect(report.prunedByReason).toEqual({ spills: spillsOnNvidia ? 2 : 1, 'waves_per_eu-twin': 2 });
    // The dense-labelled scratch kernel uses scratch memory but is never pruned.
    expect(entries.filter((e) => e.identity.variant === 'dense').every((e) => e.pruned === null)).toBe(true);
    expect(entries.every((e) => e.code.kind === 'ptx' || (e.facts as { textDigest?: string }).textDigest?.length === 64)).toBe(true);
    expect(stats.calls).toBe(12);

    const again = await compileAll(options);
    expect([again.compiled, again.rebuilt, again.cached, again.failed.length]).toEqual([0, 0, 10, 2]);
    expect(again.prunedByReason).toEqual(report.prunedByReason);
    // Only the two broken kernels were tried again.
    expect(stats.calls).toBe(14);
  });

  it('rebuilds every entry when the family\'s emitter label changes', async () => {
    const cache = tempCache();
    const family = axpyFamily({ scales: [5], targets: ['sm_90'] });
    const first = await compileAll({ cache, families: [family], compiler: toolchain, jobs: 2 });
    const again = await compileAll({ cache, families: [{ ...family, emitter: 'axpy/next' }], compiler: toolchain, jobs: 2 });
    expect(again.rebuiltByCause).toEqual({ 'emitter changed': first.compiled });
    expect(cache.listEntries().entries.every((e) => e.emitter === 'axpy/next')).toBe(true);
  });

  it('rebuilds an entry whose code blob was truncated, and (with checkIr) one whose IR changed', async () => {
    const cache = tempCache();
    const family = axpyFamily({ scales: [3], targets: ['gfx942'] });
    await compileAll({ cache, families: [family], compiler: toolchain, jobs: 2 });
    const [first] = cache.listEntries().entries.filter((e) => e.kernelName === 'axpy_s3');
    truncateSync(cache.blobPath(first!.code.digest), 10);
    const changed: typeof family = {
      ...family,
      build: (c, t, f) => {
        const k = family.build(c, t, f);
        return c.variant === 'scratch' ? { ...k, ir: `; emitter v2\n${k.ir}` } : k;
      },
    };
    const { compiler, stats } = counting(toolchain);
    // Without checkIr the IR change goes unseen (the emitter label is the same): only the corrupt blob is rebuilt.
    const quick = await compileAll({ cache, families: [changed], compiler, jobs: 2 });
    expect(quick.rebuiltByCause).toEqual({ 'corrupt-blob': 1 });
    expect(stats.calls).toBe(1);
    truncateSync(cache.blobPath(first!.code.digest), 10);
    stats.calls = 0;
    const report = await compileAll({ cache, families: [changed], compiler, jobs: 2, checkIr: true });
    expect(report.rebuiltByCause).toEqual({ 'corrupt-blob': 1, 'IR changed': 1 });
    // gfx942 has plain None + plain we3 + scratch + pressure: two rebuilt, two up to date.
    expect([report.rebuilt, report.cached, stats.calls]).toEqual([2, 2, 2]);
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
  const ListSpecSchema = z.object({ i: z.number().int(), dtype: z.string().optional() }).strict();
  type ListFamily = Family<z.infer<typeof ListSpecSchema>>;
  const listFamily = (n: number, opts: { throwAt?: number; crashAt?: number } = {}): ListFamily => ({
    name: 'list',
    targets: ['gfx950', 'sm_90'],
    schema: ListSpecSchema,
    candidates: () => Array.from({ length: n }, (_, i) => ({ variant: 'v', spec: { i } })),
    build: (c) => {
      const { i } = c.spec;
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
    const bad: Family<unknown> = { name: 'bad', targets: ['gfx950'], schema: z.unknown(), candidates: () => { throw new Error('no grid'); }, build: () => ({ kernelName: 'x', ir: '' }) };
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

  it('selects by variant and caps each family/target at --limit candidates in order', async () => {
    const fam: ListFamily = {
      ...listFamily(6),
      candidates: () => Array.from({ length: 6 }, (_, i) => ({ variant: i % 2 ? 'odd' : 'even', spec: { i } })),
    };
    const cache = tempCache();
    const r = await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), variants: ['odd'], limit: 2, jobs: 2 });
    expect(r.total).toBe(4); // two targets x first two odd candidates
    expect(cache.listEntries().entries.map((e) => `${e.identity.target}:${(e.identity.spec as { i: number }).i}`).sort()).toEqual(['gfx950:1', 'gfx950:3', 'sm_90:1', 'sm_90:3']);
    await expect(compileAll({ cache, families: [fam], compiler: fakeCompiler(0), limit: 0 })).rejects.toThrow(/limit/);
  });

  it('filters by spec dtype, passing specs without one', async () => {
    const fam: ListFamily = {
      ...listFamily(3),
      candidates: (): KernelCandidate<z.infer<typeof ListSpecSchema>>[] => [
        { variant: 'v', spec: { i: 0, dtype: 'fp16' } },
        { variant: 'v', spec: { i: 1, dtype: 'bf16' } },
        { variant: 'v', spec: { i: 2 } },
      ],
    };
    const cache = tempCache();
    const r = await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], dtypes: ['bf16'], jobs: 1 });
    expect(r.total).toBe(2);
    expect(cache.listEntries().entries.map((e) => (e.identity.spec as { i: number }).i).sort()).toEqual([1, 2]);
  });

  it('reads every candidate through its family schema: one the schema refuses fails at candidates, the rest build', async () => {
    const fam: ListFamily = { ...listFamily(3), candidates: () => [{ variant: 'v', spec: { i: 0 } }, { variant: 'v', spec: { i: 1, extra: true } as never }] };
    const report = await compileAll({ cache: tempCache(), families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], jobs: 1 });
    expect(report.compiled).toBe(1);
    expect(report.failed.map((f) => [f.stage, f.message])).toEqual([['candidates', expect.stringMatching(/^not a list spec: /)]]);
  });

  it('de-duplicates candidates with the same identity', async () => {
    const dup: ListFamily = { ...listFamily(3), candidates: () => [{ variant: 'v', spec: { i: 0 } }, { variant: 'v', spec: { i: 0 } }] };
    const report = await compileAll({ cache: tempCache(), families: [dup], compiler: fakeCompiler(0), targets: ['gfx950'], jobs: 1 });
    expect(report.total).toBe(1);
  });

  it('stores facts only through the pruner schema: facts it refuses fail the job at facts, and stored facts read back typed', async () => {
    const cache = tempCache();
    const seen: unknown[] = [];
    const pruner: Pruner<{ size: number }> = {
      factsSchema: z.object({ size: z.number().int().nonnegative() }).strict(),
      facts: (code) => (code[code.length - 1]! % 2 ? { size: code.length } : ({ size: code.length, extra: true } as never)),
      prune: (es) => (seen.push(...es.map((e) => e.facts)), []),
    };
    const report = await compileAll({ cache, families: [listFamily(4)], compiler: fakeCompiler(0), targets: ['gfx950'], pruner, jobs: 1 });
    const refused = report.failed.filter((f) => f.stage === 'facts');
    // The IR of candidate i ends in i: odd ones give facts the schema reads, even ones an extra field.
    expect([refused.length, report.compiled]).toEqual([2, 2]);
    expect(refused.every((f) => /extra/.test(f.message) || /Unrecognized/i.test(f.message))).toBe(true);
    for (const e of cache.listEntries().entries) expect(pruner.factsSchema.parse(e.facts)).toEqual({ size: expect.any(Number) });
    seen.length = 0;
    await compileAll({ cache, families: [listFamily(4)], compiler: fakeCompiler(0), targets: ['gfx950'], pruner, jobs: 1 });
    expect(seen).toHaveLength(report.compiled);
    for (const f of seen) expect(f).toEqual({ size: expect.any(Number) });
  });

  it('clears a prune mark when the pruner no longer drops the entry', async () => {
    const cache = tempCache();
    const fam = listFamily(2);
    const dropAll = { factsSchema: z.null(), facts: () => null, prune: (es: readonly { id: string }[]) => es.map((e) => ({ id: e.id, reason: 'test', detail: '' })) };
    await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], pruner: dropAll, jobs: 1 });
    expect(cache.listEntries().entries.every((e) => e.pruned?.reason === 'test')).toBe(true);
    await compileAll({ cache, families: [fam], compiler: fakeCompiler(0), targets: ['gfx950'], pruner: { factsSchema: z.null(), facts: () => null, prune: () => [] }, jobs: 1 });
    expect(cache.listEntries().entries.every((e) => e.pruned === null)).toBe(true);
  });

  it('stops on abort: finished entries stay, the rest count as aborted, nothing is pruned', async () => {
    const cache = tempCache();
    const controller = new AbortController();
    let done = 0;
    const dropAll = { factsSchema: z.null(), facts: () => null, prune: (es: readonly { id: string }[]) => es.map((e) => ({ id: e.id, reason: 'test', detail: '' })) };
    const report = await compileAll({
      cache,
      families: [listFamily(20)],
      compiler: fakeCompiler(5),
      targets: ['gfx950'],
      jobs: 2,
      pruner: dropAll,
      signal: controller.signal,
      progress: { done: () => ++done === 4 && controller.abort(new Error('stop')) },
    });
    expect(report.failed).toEqual([]);
    expect(report.compiled).toBeGreaterThanOrEqual(4);
    expect(report.compiled + report.aborted).toBe(20);
    expect(report.aborted).toBeGreaterThan(10);
    expect(cache.listIds()).toHaveLength(report.compiled);
    expect(report.pruned).toEqual([]);
  });

  it('kills running tool processes on abort', async () => {
    const controller = new AbortController();
    const slow = axpyFamily({ scales: [1], targets: ['sm_90'] });
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('stop')), 30);
    const report = await compileAll({ cache: tempCache(), families: [slow], compiler: toolchain, jobs: 3, signal: controller.signal });
    expect(report.failed).toEqual([]);
    expect(report.aborted + report.compiled).toBe(3);
    expect(report.aborted).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('rejects a bad job count', async () => {
    await expect(compileAll({ cache: tempCache(), families: [], compiler: fakeCompiler(0), jobs: 0 })).rejects.toThrow(/jobs/);
  });
});
