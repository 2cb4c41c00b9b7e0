import { parseFamilySpec } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { splitReduceFamily } from './family.js';
import { helperSpecs, kernelName } from './spec.js';

describe('splitReduceFamily', () => {
  const family = splitReduceFamily();

  it('offers every helper spec per target under the direct_fwd_helper namespace', () => {
    expect(family.name).toBe('direct_fwd_helper');
    for (const t of family.targets) expect(family.candidates(t).map((c) => c.spec)).toEqual(helperSpecs(t));
    const [c] = family.candidates('gfx950');
    expect(family.build(c!, 'gfx950', 'llvm22').kernelName).toBe(kernelName(c!.spec));
    expect(family.describe?.(c!.spec)).toBe('fp16 vec4 256t x4 s4');
  });

  it('refuses specs that are malformed (through its schema) or for another target', () => {
    const [c] = family.candidates('sm_90');
    const bad = parseFamilySpec(family, { ...c!.spec, extra: 1 });
    expect(!bad.ok && bad.reason).toMatch(/^not a direct_fwd_helper spec/);
    expect(() => family.build(c!, 'gfx950', 'llvm22')).toThrow(/for sm_90, not gfx950/);
    expect(() => family.build(c!, 'sm_90', 'llvm99')).toThrow(/expects llvm99/);
  });

  it('with an epilogue offers the same specs fused with it', () => {
    const epilogue = { act: 'silu', bias: 'fp32', residual: true } as const;
    expect(splitReduceFamily(epilogue).candidates('sm_90').map((c) => c.spec)).toEqual(helperSpecs('sm_90').map((s) => ({ ...s, epilogue })));
  });
});
