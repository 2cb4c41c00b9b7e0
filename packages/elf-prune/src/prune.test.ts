import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kernelFacts, sha256Hex } from './facts.js';
import type { KernelFacts } from './facts.js';
import { prune, PruneError } from './prune.js';
import type { PruneEntry, PruneFacts } from './prune.js';
import { compileAmd, fixture, scratch, withAttribute } from './testing/toolchain.js';

const digest = (s: string): string => sha256Hex(new TextEncoder().encode(s));
const facts = (code: string, spills = false): PruneFacts => ({
  textDigest: digest(code),
  spills: { sgpr: 0, vgpr: spills ? 12 : 0, any: spills },
  scratchBytes: spills ? 48 : 0,
});
const entry = (id: string, family: string, wavesPerEu: number | null, twinKey: string, f: PruneFacts): PruneEntry => ({
  id,
  family,
  wavesPerEu,
  twinKey,
  facts: f,
});
const ids = (list: { id: string }[]): string[] => list.map((e) => e.id);

describe('prune rules', () => {
  it('drops spilling grouped and split_c entries and never touches dense ones', () => {
    const result = prune([
      entry('g-spill', 'grouped', null, 'g1', facts('a', true)),
      entry('s-spill', 'split_c', null, 's1', facts('b', true)),
      entry('d-spill', 'dense', null, 'd1', facts('c', true)),
      entry('g-clean', 'grouped', null, 'g2', facts('d')),
    ]);
    expect(ids(result.kept)).toEqual(['d-spill', 'g-clean']);
    expect(result.dropped.map((d) => [d.entry.id, d.reason])).toEqual([
      ['g-spill', 'spills'],
      ['s-spill', 'spills'],
    ]);
    expect(result.dropped[0]?.detail).toBe('binary spills (sgpr 0, vgpr 12; scratch 48 B)');
  });

  it('drops a waves_per_eu=3 build whose code equals its None twin, and only that', () => {
    const result = prune([
      entry('g-none', 'grouped', null, 'g', facts('same')),
      entry('g-we3', 'grouped', 3, 'g', facts('same')),
      entry('s-none', 'split_c', null, 's', facts('x')),
      entry('s-we3', 'split_c', 3, 's', facts('y')),
      entry('lonely-we3', 'grouped', 3, 'no-twin', facts('same')),
      entry('d-none', 'dense', null, 'd', facts('same')),
      entry('d-we3', 'dense', 3, 'd', facts('same')),
      entry('g-we2', 'grouped', 2, 'g', facts('same')),
    ]);
    expect(ids(result.kept)).toEqual(['g-none', 's-none', 's-we3', 'lonely-we3', 'd-none', 'd-we3', 'g-we2']);
    expect(result.dropped).toHaveLength(1);
    expect(result.dropped[0]?.entry.id).toBe('g-we3');
    expect(result.dropped[0]?.reason).toBe('waves_per_eu-twin');
    expect(result.dropped[0]?.detail).toContain('g-none');
  });

  it('pairs twins within one family only', () => {
    const result = prune([entry('s-none', 'split_c', null, 'k', facts('same')), entry('g-we3', 'grouped', 3, 'k', facts('same'))]);
    expect(ids(result.kept)).toEqual(['s-none', 'g-we3']);
  });

  it('reports a spilling twin as spilling', () => {
    const result = prune([entry('none', 'grouped', null, 'k', facts('same', true)), entry('we3', 'grouped', 3, 'k', facts('same', true))]);
    expect(result.kept).toEqual([]);
    expect(result.dropped.map((d) => d.reason)).toEqual(['spills', 'spills']);
  });

  it('hands back the caller’s own entry objects', () => {
    interface CacheEntry extends PruneEntry {
      blob: string;
    }
    const mine: CacheEntry[] = [
      { ...entry('a', 'grouped', null, 'k', facts('1')), blob: 'blobs/a.hsaco' },
      { ...entry('b', 'grouped', 3, 'k', facts('1')), blob: 'blobs/b.hsaco' },
    ];
    const result = prune(mine);
    expect(result.kept[0]).toBe(mine[0]);
    expect(result.dropped[0]?.entry.blob).toBe('blobs/b.hsaco');
  });

  it('rejects malformed input with a PruneError that says why', () => {
    const ok = entry('a', 'grouped', null, 'k', facts('1'));
    expect(() => prune([ok, { ...ok }])).toThrow(/duplicate id a/);
    expect(() => prune([ok, { ...ok, id: 'b' }])).toThrow(/share twinKey k/);
    expect(() => prune([{ ...ok, wavesPerEu: 0 }])).toThrow(/wavesPerEu must be null or a positive integer/);
    expect(() => prune([{ ...ok, facts: {} as PruneFacts }])).toThrow(/textDigest and spills.any/);
    expect(() => prune([{ ...ok, id: '' }])).toThrow(PruneError);
  });

  it('keeps input order, loses nothing, and decides independently of order (property)', () => {
    const arbEntry = fc.record({
      family: fc.constantFrom('dense', 'grouped', 'split_c', 'helper'),
      wavesPerEu: fc.constantFrom(null, 3, 2),
      key: fc.integer({ min: 0, max: 4 }),
      code: fc.integer({ min: 0, max: 2 }),
      spills: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(arbEntry, { maxLength: 30 }), fc.integer(), (raw, seed) => {
        // Keep one None build per (family, key) so the input is valid.
        const seen = new Set<string>();
        const list = raw
          .filter((r) => r.wavesPerEu !== null || (!seen.has(`${r.family}/${r.key}`) && (seen.add(`${r.family}/${r.key}`), true)))
          .map((r, i) => entry(`e${i}`, r.family, r.wavesPerEu, `k${r.key}`, facts(`c${r.code}`, r.spills)));
        const result = prune(list);
        const all = [...ids(result.kept), ...result.dropped.map((d) => d.entry.id)];
        expect(all.sort()).toEqual(ids(list).sort());
        const order = new Map(list.map((e, i) => [e.id, i]));
        const increasing = (xs: string[]): boolean => xs.every((x, i) => i === 0 || (order.get(x) ?? 0) > (order.get(xs[i - 1] ?? '') ?? 0));
        expect(increasing(ids(result.kept))).toBe(true);
        expect(increasing(result.dropped.map((d) => d.entry.id))).toBe(true);
        for (const d of result.dropped) expect(['grouped', 'split_c']).toContain(d.entry.family);
        // A rotation of the input drops the same entries for the same reasons.
        const shift = list.length ? Math.abs(seed) % list.length : 0;
        const rotated = prune([...list.slice(shift), ...list.slice(0, shift)]);
        const reasons = (r: typeof result): string[] => r.dropped.map((d) => `${d.entry.id}:${d.reason}`).sort();
        expect(reasons(rotated)).toEqual(reasons(result));
        expect(prune(list)).toEqual(result);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });
});

describe('prune on facts of real gfx950 binaries (LLVM 22)', () => {
  const tmp = scratch();
  const f: Record<string, KernelFacts> = {};
  const get = (k: string): KernelFacts => {
    const v = f[k];
    if (!v) throw new Error(`no facts for ${k}`);
    return v;
  };
  beforeAll(() => {
    const we3 = '"amdgpu-waves-per-eu"="3,3"';
    f['spill'] = kernelFacts(compileAmd(tmp.dir, 'spill', fixture('amd-spill.ll')).hsaco);
    f['smallNone'] = kernelFacts(compileAmd(tmp.dir, 'small-none', fixture('twin-small.ll')).hsaco);
    f['smallWe3'] = kernelFacts(compileAmd(tmp.dir, 'small-we3', withAttribute(fixture('twin-small.ll'), we3)).hsaco);
    f['wideNone'] = kernelFacts(compileAmd(tmp.dir, 'wide-none', fixture('twin-wide.ll')).hsaco);
    f['wideWe3'] = kernelFacts(compileAmd(tmp.dir, 'wide-we3', withAttribute(fixture('twin-wide.ll'), we3)).hsaco);
  });
  afterAll(() => tmp.dispose());

  it('drops the spilling binary and the identical waves_per_eu twin, keeps the rest', () => {
    const entries: PruneEntry[] = [
      entry('grouped/spill', 'grouped', null, 'spill', get('spill')),
      entry('grouped/small', 'grouped', null, 'small', get('smallNone')),
      entry('grouped/small+we3', 'grouped', 3, 'small', get('smallWe3')),
      entry('split_c/wide', 'split_c', null, 'wide', get('wideNone')),
      entry('split_c/wide+we3', 'split_c', 3, 'wide', get('wideWe3')),
      entry('dense/spill', 'dense', null, 'spill', get('spill')),
      entry('dense/small', 'dense', null, 'small', get('smallNone')),
      entry('dense/small+we3', 'dense', 3, 'small', get('smallWe3')),
    ];
    const result = prune(entries);
    expect(result.dropped.map((d) => [d.entry.id, d.reason])).toEqual([
      ['grouped/spill', 'spills'],
      ['grouped/small+we3', 'waves_per_eu-twin'],
    ]);
    expect(ids(result.kept)).toEqual(['grouped/small', 'split_c/wide', 'split_c/wide+we3', 'dense/spill', 'dense/small', 'dense/small+we3']);
    expect(result.dropped[0]?.detail).toMatch(/^binary spills \(sgpr \d+, vgpr [1-9]\d*; scratch [1-9]\d* B\)$/);
  });
});
