import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PROBLEMS, kernelName, type Spec } from '@rocke/conv-direct';
import { describe, expect, it } from 'vitest';
import { readSuite } from '../../cli/problem-input.js';
import { problemSetFamily } from './conv-direct.js';

const publicSuite = readSuite(readFileSync(join(import.meta.dirname, '..', '..', '..', 'device', 'public.json'), 'utf8'));

describe('built-in problem set', () => {
  it('is one small-map, one grouped and one dense shape of the public suite, same names and problems', () => {
    expect(DEFAULT_PROBLEMS.map((p) => [p.name, p.cls])).toEqual([
      ['sm_14x14_1024', 'small-map'],
      ['g_28_c512_g32', 'grouped'],
      ['d_14_c256', 'dense'],
    ]);
    for (const p of DEFAULT_PROBLEMS) expect(publicSuite.find((s) => s.name === p.name)).toEqual(p);
  });
});

describe('problemSetFamily', () => {
  it('is the direct_fwd family over the union of the shapes selections, each spec once', () => {
    const set = problemSetFamily(DEFAULT_PROBLEMS, { cap: 8 });
    expect(set.family.name).toBe('direct_fwd');
    const cands = set.family.candidates('gfx950');
    const union = new Map<string, Spec>();
    for (const s of set.selections('gfx950')) for (const v of s.variants) for (const spec of v.specs) union.set(kernelName(spec), spec);
    const names = cands.map((c) => kernelName(c.spec as unknown as Spec));
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(names)).toEqual(new Set(union.keys()));
    // At most the three shapes' caps (a spec two shapes share is one entry).
    expect(names.length).toBeLessThanOrEqual(3 * 8);
    expect(set.selections('gfx950')).toBe(set.selections('gfx950'));
    const k = set.family.build(cands[0]!, 'gfx950', 'llvm22');
    expect(k.kernelName).toBe(names[0]);
    expect(set.family.describe?.(cands[0]!.spec)).toMatch(/^\d+x\d+x\d+ ck\d+ w\dx\d/);
  });
});

