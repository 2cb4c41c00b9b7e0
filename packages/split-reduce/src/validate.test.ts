import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validate, type SplitReduceSpec } from './index.js';

const good: SplitReduceSpec = { target: 'gfx950', dtype: 'fp16', vectorWidth: 8, threads: 256, outputsPerThread: 8, slicesPerStep: 4 };
const reason = (spec: unknown): string => {
  const v = validate(spec);
  if (v.ok) throw new Error(`expected ${JSON.stringify(spec)} to be rejected`);
  return v.reason;
};

describe('validate', () => {
  it('accepts a good spec and returns it typed', () => {
    expect(validate(good)).toEqual({ ok: true, spec: good });
  });

  it('rejects malformed input with the offending field named', () => {
    expect(reason(null)).toMatch(/^spec: /);
    expect(reason('fp16')).toMatch(/^spec: /);
    expect(reason({ ...good, extra: 1 })).toMatch(/^spec: .*extra/);
    const { threads: _, ...noThreads } = good;
    expect(reason(noThreads)).toMatch(/^threads: /);
    expect(reason({ ...good, dtype: 'fp32' })).toMatch(/^dtype: /);
    expect(reason({ ...good, target: 'gfx90a' })).toMatch(/^target: /);
    expect(reason({ ...good, vectorWidth: 2 })).toMatch(/^vectorWidth: /);
    expect(reason({ ...good, slicesPerStep: 3 })).toMatch(/^slicesPerStep: /);
    expect(reason({ ...good, threads: 64.5 })).toMatch(/^threads: /);
  });

  it('checks positivity before anything divides', () => {
    expect(reason({ ...good, threads: 0 })).toBe('threads must be >= 1 (got 0)');
    expect(reason({ ...good, threads: -64 })).toBe('threads must be >= 1 (got -64)');
    expect(reason({ ...good, outputsPerThread: 0 })).toBe('outputsPerThread must be >= 1 (got 0)');
  });

  it('workgroups are whole waves of the target, within its thread limit', () => {
    expect(reason({ ...good, threads: 96 })).toBe("threads 96 is not a multiple of gfx950's wave size 64 (partial waves waste lanes)");
    expect(reason({ ...good, target: 'gfx942', threads: 32 })).toMatch(/not a multiple of gfx942's wave size 64/);
    expect(validate({ ...good, target: 'sm_90', threads: 96 }).ok).toBe(true); // warp 32
    expect(reason({ ...good, target: 'sm_90', threads: 48 })).toMatch(/not a multiple of sm_90's wave size 32/);
    expect(reason({ ...good, threads: 2048 })).toBe("threads 2048 exceeds gfx950's 1024 threads per workgroup");
  });

  it('threads fold whole vector groups, within a register budget', () => {
    expect(reason({ ...good, outputsPerThread: 12 })).toBe('outputsPerThread 12 is not a multiple of vectorWidth 8 (a thread folds whole vector groups)');
    expect(validate({ ...good, vectorWidth: 4, outputsPerThread: 12, slicesPerStep: 2 }).ok).toBe(true);
    expect(reason({ ...good, outputsPerThread: 40, slicesPerStep: 1 })).toMatch(/^outputsPerThread 40 exceeds 32 \(10 16-byte loads/);
    expect(reason({ ...good, outputsPerThread: 16, slicesPerStep: 8 })).toBe('outputsPerThread 16 × slicesPerStep 8 = 128 loaded values per thread exceed 64 (registers)');
    expect(validate({ ...good, outputsPerThread: 16, slicesPerStep: 4 }).ok).toBe(true);
  });

  it('never throws, whatever it is given', () => {
    fc.assert(fc.property(fc.anything(), (x) => typeof validate(x).ok === 'boolean'));
    fc.assert(
      fc.property(
        fc.record({
          target: fc.constantFrom('gfx950', 'gfx942', 'sm_90'), dtype: fc.constantFrom('fp16', 'bf16'), vectorWidth: fc.constantFrom(4, 8),
          threads: fc.integer({ min: -2000, max: 4000 }), outputsPerThread: fc.integer({ min: -40, max: 80 }), slicesPerStep: fc.constantFrom(1, 2, 4, 8),
        }),
        (s) => {
          const v = validate(s);
          return v.ok || v.reason.length > 0;
        },
      ),
    );
  });
});
