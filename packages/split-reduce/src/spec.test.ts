import { describe, expect, it } from 'vitest';
import {
  CACHE_NAMESPACE, DTYPES, SplitReduceSpecSchema, TARGET_NAMES, VECTOR_WIDTHS, cacheIdentity, defaultSpec, helperSpecs, kernelName, tileElements,
  type SplitReduceSpec,
} from './index.js';
import { validate } from './validate.js';

const base: SplitReduceSpec = { target: 'gfx950', dtype: 'bf16', vectorWidth: 4, threads: 256, outputsPerThread: 8, slicesPerStep: 4 };

describe('spec', () => {
  it('names spell every field, so no two different specs share a kernel symbol', () => {
    expect(kernelName(base)).toBe('rocke_split_reduce_gfx950_bf16_v4_t256_o8_u4');
    const names = new Set<string>();
    let n = 0;
    for (const target of TARGET_NAMES) for (const dtype of DTYPES) for (const vectorWidth of VECTOR_WIDTHS) {
      for (const threads of [64, 128, 256]) for (const outputsPerThread of [8, 16]) for (const slicesPerStep of [1, 2, 4, 8] as const) {
        names.add(kernelName({ target, dtype, vectorWidth, threads, outputsPerThread, slicesPerStep }));
        n++;
      }
    }
    expect(names.size).toBe(n);
    for (const name of names) expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/); // a valid symbol on both vendors
  });

  it('cache identity is the direct_fwd_helper namespace keyed by dtype and vector width, never a conv shape', () => {
    const id = cacheIdentity(defaultSpec('sm_90', 'fp16', 8));
    expect(id).toEqual({ namespace: 'direct_fwd_helper', name: 'rocke_split_reduce_sm_90_fp16_v8_t256_o8_u4', dtype: 'fp16', vectorWidth: 8, target: 'sm_90' });
    expect(CACHE_NAMESPACE).toBe('direct_fwd_helper');
    // Every field is a spec field; nothing about N, H, W, C, K or splits can reach it.
    expect(Object.keys(id).sort()).toEqual(['dtype', 'name', 'namespace', 'target', 'vectorWidth']);
    expect(cacheIdentity(defaultSpec('sm_90', 'bf16', 8))).not.toEqual(id);
    expect(cacheIdentity(defaultSpec('sm_90', 'fp16', 4))).not.toEqual(id);
  });

  it('compile-all builds one valid default spec per dtype x vector width per target', () => {
    for (const target of TARGET_NAMES) {
      const specs = helperSpecs(target);
      expect(specs.map((s) => `${s.dtype}/v${s.vectorWidth}`)).toEqual(['fp16/v4', 'fp16/v8', 'bf16/v4', 'bf16/v8']);
      for (const s of specs) {
        expect(validate(s)).toEqual({ ok: true, spec: s });
        expect(s.target).toBe(target);
        expect(tileElements(s)).toBe(256 * s.vectorWidth);
      }
    }
  });

  it('the schema is strict: unknown and missing fields are errors', () => {
    expect(SplitReduceSpecSchema.safeParse(base).success).toBe(true);
    expect(SplitReduceSpecSchema.safeParse({ ...base, N: 1 }).success).toBe(false);
    const { slicesPerStep: _, ...missing } = base;
    expect(SplitReduceSpecSchema.safeParse(missing).success).toBe(false);
  });
});
