import { parseFamilySpec } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { aotCandidates } from './candidates.js';
import { convDirectFamily, describeConvSpec, problemSetFamily } from './family.js';
import { DEFAULT_PROBLEMS } from './selection.js';
import { kernelName, specGeometry, VARIANTS, type Spec } from './spec.js';

describe('convDirectFamily', () => {
  it('lists the AOT grid of every dtype and variant, and builds a spec to IR', () => {
    const fam = convDirectFamily({ dtypes: ['bf16'] });
    const cands = fam.candidates('sm_90');
    const expected = VARIANTS.flatMap((v) => aotCandidates('sm_90', 'bf16', v).valid);
    expect(cands.map((c) => c.spec)).toEqual(expected);
    // Every variant with an AOT grid (all of them: pointwise has its 1x1 rows).
    expect(new Set(cands.map((c) => c.variant))).toEqual(new Set(VARIANTS.filter((v) => aotCandidates('sm_90', 'bf16', v).valid.length > 0)));
    const k = fam.build(cands[0]!, 'sm_90', 'llvm22');
    expect(k.kernelName).toBe(kernelName(expected[0]!));
    expect(k.ir).toContain(`define ptx_kernel void @${k.kernelName}(`);
    expect(() => fam.build(cands[0]!, 'gfx950', 'llvm22')).toThrow(/for sm_90, not gfx950/);
    expect(() => fam.build(cands[0]!, 'sm_90', 'llvm99')).toThrow(/expects llvm99/);
  });

  it('reads a stored spec through its strict schema once: a bad field is refused with its path', () => {
    const fam = convDirectFamily();
    const spec = fam.candidates('gfx950')[0]!.spec;
    expect(parseFamilySpec(fam, JSON.parse(JSON.stringify(spec)))).toEqual({ ok: true, spec });
    const bad = parseFamilySpec(fam, { ...spec, tile_h: 'eight' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/^not a direct_fwd spec: tile_h: /);
    expect(parseFamilySpec(fam, { ...spec, extra: 1 }).ok).toBe(false);
  });

  it('describes, sizes and splits off the waves_per_eu hint of a typed spec', () => {
    const fam = convDirectFamily({ dtypes: ['bf16'], variants: ['grouped'] });
    const spec: Spec = { ...fam.candidates('gfx950')[0]!.spec, waves_per_eu: 3 };
    expect(fam.describe?.(spec)).toBe(describeConvSpec(spec));
    expect(describeConvSpec(spec)).toMatch(/^\d+x\d+x\d+ ck\d+ w\dx\d we3 gm\d+/);
    expect(fam.launchLdsBytes?.(spec)).toBe(specGeometry(spec).ldsBytes);
    const hint = fam.wavesPerEu?.(spec);
    expect(hint?.wavesPerEu).toBe(3);
    expect(hint?.rest).not.toHaveProperty('waves_per_eu');
    expect(fam.wavesPerEu?.({ ...spec, waves_per_eu: null }).rest).toEqual(hint?.rest);
  });

  it('builds the first AOT spec of every variant on every target', () => {
    const fam = convDirectFamily({ dtypes: ['fp16'], grid: (t, d, v) => aotCandidates(t, d, v).valid.slice(0, 1) });
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const) {
      const cands = fam.candidates(target);
      expect(cands.map((c) => c.variant)).toEqual(VARIANTS.filter((v) => aotCandidates(target, 'fp16', v).valid.length > 0));
      for (const c of cands) expect(fam.build(c, target, 'llvm22').ir).toContain(`@${kernelName(c.spec)}(`);
    }
  });
});

describe('problemSetFamily', () => {
  it('is the direct_fwd family over the union of the shapes selections, each spec once', () => {
    const set = problemSetFamily(DEFAULT_PROBLEMS, { cap: 8 });
    expect(set.family.name).toBe('direct_fwd');
    const cands = set.family.candidates('gfx950');
    const union = new Map<string, Spec>();
    for (const s of set.selections('gfx950')) for (const v of s.variants) for (const spec of v.specs) union.set(kernelName(spec), spec);
    const names = cands.map((c) => kernelName(c.spec));
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(names)).toEqual(new Set(union.keys()));
    // At most the three shapes' caps (a spec two shapes share is one entry).
    expect(names.length).toBeLessThanOrEqual(3 * 8);
    expect(set.selections('gfx950')).toBe(set.selections('gfx950'));
    const k = set.family.build(cands[0]!, 'gfx950', 'llvm22');
    expect(k.kernelName).toBe(names[0]);
  });
});
