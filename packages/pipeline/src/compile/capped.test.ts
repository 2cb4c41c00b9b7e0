import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Family, KernelCandidate } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KernelCache } from '../cache/cache.js';
import { compileCapped } from './capped.js';
import type { Pruner } from './family.js';
import type { KernelCompiler } from './llvm-toolchain.js';

/** A family of numbered kernels: `k<n>` is built from the spec `{ n }`. */
const numbered: Family<{ n: number }> = {
  name: 'numbered',
  targets: ['sm_90'],
  schema: z.strictObject({ n: z.number().int() }),
  candidates: () => [],
  build: ({ spec }) => ({ kernelName: `k${spec.n}`, ir: `define void @k${spec.n}() { ret void }\n` }),
};

/** A compiler whose compile of `k<n>` for n in `broken` throws; every call is counted by name. */
function fakeCompiler(broken: readonly number[]): KernelCompiler & { calls: string[] } {
  const calls: string[] = [];
  return {
    flavor: 'llvm22',
    calls,
    fingerprint: async () => 'fake toolchain',
    compile: async (ir) => {
      const name = /@(\w+)/.exec(ir)![1]!;
      calls.push(name);
      if (broken.includes(Number(name.slice(1)))) throw new Error(`ptxas died on ${name}`);
      return { kind: 'cubin', bytes: new TextEncoder().encode(`cubin ${name}`) };
    },
  };
}

/** A pruner that drops the named kernels as spilling. */
function spilling(names: readonly string[]): Pruner<null> {
  return {
    factsSchema: z.null(),
    facts: () => null,
    prune: (entries) => entries.filter((e) => names.includes(e.kernelName)).map((e) => ({ id: e.id, reason: 'spills', detail: 'scratch bytes' })),
  };
}

const ranked = (ns: readonly number[]): KernelCandidate<unknown>[] => ns.map((n) => ({ variant: 'v', spec: { n } }));
const cache = () => new KernelCache(mkdtempSync(join(tmpdir(), 'rocke-capped-')));

describe('compileCapped', () => {
  it('back-fills each list from its ranking until the cap counts usable kernels', async () => {
    const compiler = fakeCompiler([2]);
    const r = await compileCapped({
      cache: cache(),
      family: numbered,
      compiler,
      pruner: spilling(['k1', 'k4', 'k5']),
      jobs: 1,
      // k2 also heads the second list: compiled once, failed once, never retried.
      lists: [
        { target: 'sm_90', cap: 3, ranked: ranked([1, 2, 3, 4, 5, 6, 7, 8]) },
        { target: 'sm_90', cap: 2, ranked: ranked([2, 9, 10]) },
      ],
    });
    // List 0: k1 spills, k2 fails -> k4, k5 (both spill) -> k6, k7: usable k3, k6, k7.
    expect(r.built[0]!.map((c) => (c.spec as { n: number }).n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(r.usable).toEqual([3, 2]);
    expect(r.backfilled).toEqual([4, 1]);
    expect(r.built[1]!.map((c) => (c.spec as { n: number }).n)).toEqual([2, 9, 10]);
    expect(r.passes).toBe(3);
    expect([...compiler.calls].sort()).toEqual(['k1', 'k10', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k9']);
    // One report over the passes: each entry counted once.
    expect(r.report).toMatchObject({ total: 9, compiled: 8, rebuilt: 0, cached: 0 });
    expect(r.report.failed.map((f) => f.kernelName)).toEqual(['k2']);
    expect(r.report.pruned.map((d) => d.reason)).toEqual(['spills', 'spills', 'spills']);
  });

  it('stops when the ranking is spent or after maxPasses, and compiles nothing more when nothing is lost', async () => {
    const spent = await compileCapped({ cache: cache(), family: numbered, compiler: fakeCompiler([]), pruner: spilling(['k1', 'k2']), jobs: 1, lists: [{ target: 'sm_90', cap: 2, ranked: ranked([1, 2, 3]) }] });
    expect(spent).toMatchObject({ usable: [1], backfilled: [1], passes: 2 });
    const bounded = await compileCapped({ cache: cache(), family: numbered, compiler: fakeCompiler([]), pruner: spilling(['k1', 'k2', 'k3']), jobs: 1, maxPasses: 2, lists: [{ target: 'sm_90', cap: 1, ranked: ranked([1, 2, 3, 4]) }] });
    expect(bounded).toMatchObject({ usable: [0], backfilled: [1], passes: 2 });
    const clean = fakeCompiler([]);
    const whole = await compileCapped({ cache: cache(), family: numbered, compiler: clean, pruner: null, jobs: 1, lists: [{ target: 'sm_90', cap: 2, ranked: ranked([1, 2, 3]) }] });
    expect(whole).toMatchObject({ usable: [2], backfilled: [0], passes: 1 });
    expect(clean.calls).toEqual(['k1', 'k2']);
  });
});
