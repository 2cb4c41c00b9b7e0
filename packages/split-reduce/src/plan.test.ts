import { describe, expect, it } from 'vitest';
import { MAX_VIEW_BYTES, SplitReduceError, defaultSpec, planReduce, type ReducePlan } from './index.js';

/** Launch ranges must tile [0, count) in order, each aligned and within the view limit. */
function expectCovers(plan: ReducePlan, count: number, maxView = MAX_VIEW_BYTES): void {
  let next = 0;
  for (const l of plan.launches) {
    expect(l.start).toBe(next);
    expect(l.start % 8).toBe(0);
    expect(l.count).toBeGreaterThan(0);
    expect(l.count * 4).toBeLessThanOrEqual(maxView);
    expect(l.wsOffsetBytes % 16).toBe(0);
    expect(l.yOffsetBytes % 16).toBe(0);
    next += l.count;
  }
  expect(next).toBe(count);
}

describe('planReduce', () => {
  it('one launch over a small-map output (7x7x512), its tail in the last workgroup', () => {
    const p = planReduce({ count: 7 * 7 * 512, splits: 8, dtype: 'bf16', target: 'sm_90' });
    expect(p.spec).toEqual(defaultSpec('sm_90', 'bf16', 8));
    expect(p.kernelName).toBe('rocke_split_reduce_sm_90_bf16_v8_t256_o8_u4');
    expect(p.identity).toEqual({ namespace: 'direct_fwd_helper', name: p.kernelName, dtype: 'bf16', vectorWidth: 8, target: 'sm_90' });
    expect(p.launches).toHaveLength(1);
    const l = p.launches[0]!;
    // 25088 elements / 2048 per workgroup = 12.25 -> 13 workgroups.
    expect(l.grid).toEqual([13, 1, 1]);
    expect(l.block).toEqual([256, 1, 1]);
    expect(l.kernargs).toEqual([{ buffer: 'ws', offsetBytes: 0 }, { buffer: 'y', offsetBytes: 0 }, 25088 * 4, 25088 * 2, 25088, 8, 25088]);
    expect(p.wsBytes).toBe(8 * 25088 * 4);
    expect(p.yBytes).toBe(25088 * 2);
    expect(p.explain[0]).toBe('fold 8 fp32 slices of 25088 elements (802816 bytes) into bf16 in the order s = 0..7');
    expect(p.explain).toContain('tail: the last workgroup of a launch whose count is not a multiple of 2048 takes the scalar path');
  });

  it('a count that fills whole workgroups has no tail; one below the vector width still gets a workgroup', () => {
    expect(planReduce({ count: 4096, splits: 2, dtype: 'fp16', target: 'gfx950' }).explain).toContain('no tail: every workgroup takes the vector path');
    const tiny = planReduce({ count: 3, splits: 7, dtype: 'fp16', target: 'gfx942', vectorWidth: 4 });
    expect(tiny.launches.map((l) => [l.grid[0], l.count])).toEqual([[1, 3]]);
    expect(tiny.explain).toContain('slices start at unaligned addresses (count 3 is not a multiple of 4): every workgroup takes the scalar path');
  });

  it('view offsets are added to every launch; offsets not aligned for vectors are allowed and explained', () => {
    const p = planReduce({ count: 100, splits: 3, dtype: 'fp16', target: 'gfx950', wsOffsetBytes: 4096, yOffsetBytes: 256 });
    expect(p.launches[0]!.kernargs.slice(0, 2)).toEqual([{ buffer: 'ws', offsetBytes: 4096 }, { buffer: 'y', offsetBytes: 256 }]);
    const odd = planReduce({ count: 100, splits: 3, dtype: 'fp16', target: 'gfx950', vectorWidth: 4, wsOffsetBytes: 4100, yOffsetBytes: 2 });
    expect(odd.launches[0]!.kernargs.slice(0, 2)).toEqual([{ buffer: 'ws', offsetBytes: 4100 }, { buffer: 'y', offsetBytes: 2 }]);
    expect(odd.explain).toContain('views are not aligned for vectors (wsOffsetBytes 4100 needs 16, yOffsetBytes 2 needs 8): every workgroup takes the scalar path');
  });

  it('a count at the view limit is one launch; one element more is two balanced launches', () => {
    const max = MAX_VIEW_BYTES / 4; // 0x1FC00000 elements
    expect(planReduce({ count: max, splits: 2, dtype: 'bf16', target: 'gfx950' }).launches).toHaveLength(1);
    const p = planReduce({ count: max + 1, splits: 2, dtype: 'bf16', target: 'gfx950' });
    expect(p.launches.map((l) => l.count)).toEqual([max / 2 + 8, max / 2 - 7]);
    expectCovers(p, max + 1);
    expect(p.explain).toContain(`2 launches of <= ${max / 2 + 8} elements: one slice view of all ${max + 1} would be ${(max + 1) * 4} bytes, over 0x7F000000`);
  });

  it('huge outputs (2^31 elements, a 32 GiB workspace) run as balanced launches over views', () => {
    const count = 2 ** 31;
    const p = planReduce({ count, splits: 4, dtype: 'fp16', target: 'sm_90' });
    expect(p.launches).toHaveLength(5);
    expectCovers(p, count);
    const sizes = p.launches.map((l) => l.count);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(32);
    expect(p.wsBytes).toBe(4 * count * 4);
    for (const l of p.launches) {
      expect(l.wsOffsetBytes).toBe(l.start * 4);
      expect(l.yOffsetBytes).toBe(l.start * 2);
      // slice_stride stays the whole tensor: slice s of this launch is at ws + s*count*4 + start*4.
      expect(l.kernargs.slice(2)).toEqual([l.count * 4, l.count * 2, l.count, 4, count]);
      expect(l.grid[0]).toBe(Math.ceil(l.count / 2048));
    }
  });

  it('a smaller maxViewBytes splits small problems too (how the interpreter tests exercise several launches)', () => {
    const p = planReduce({ count: 1000, splits: 2, dtype: 'fp16', target: 'gfx950', maxViewBytes: 1024 });
    expect(p.launches.map((l) => [l.start, l.count])).toEqual([[0, 256], [256, 256], [512, 256], [768, 232]]);
    expectCovers(p, 1000, 1024);
  });

  it('rejects bad problems with a reason', () => {
    const ok = { count: 1000, splits: 2, dtype: 'fp16', target: 'gfx950' } as const;
    const err = (patch: object) => {
      try {
        planReduce({ ...ok, ...patch } as never);
      } catch (e) {
        expect(e).toBeInstanceOf(SplitReduceError);
        return (e as Error).message;
      }
      throw new Error('expected a SplitReduceError');
    };
    expect(err({ count: 0 })).toBe('cannot plan split-reduce: count must be a positive integer (got 0)');
    expect(err({ count: 2.5 })).toBe('cannot plan split-reduce: count must be a positive integer (got 2.5)');
    expect(err({ splits: 0 })).toBe('cannot plan split-reduce: splits must be a positive integer (got 0)');
    expect(err({ splits: 2 ** 31 })).toBe('cannot plan split-reduce: splits 2147483648 does not fit the i32 kernarg');
    expect(err({ target: 'sm_80' })).toMatch(/unknown target "sm_80" \(known: gfx950, gfx942, sm_90\)/);
    expect(err({ dtype: 'fp32' })).toMatch(/unknown dtype "fp32"/);
    expect(err({ wsOffsetBytes: 6 })).toBe('cannot plan split-reduce: wsOffsetBytes 6 is not a multiple of the 4-byte element');
    expect(err({ yOffsetBytes: 3 })).toBe('cannot plan split-reduce: yOffsetBytes 3 is not a multiple of the 2-byte element');
    expect(err({ yOffsetBytes: -16 })).toBe('cannot plan split-reduce: yOffsetBytes must be a non-negative integer (got -16)');
    expect(err({ maxViewBytes: MAX_VIEW_BYTES + 1 })).toMatch(/maxViewBytes must be an integer in 1\.\.0x7F000000/);
    expect(err({ maxViewBytes: 16 })).toBe('cannot plan split-reduce: maxViewBytes 16 cannot hold 8 fp32 elements');
    expect(err({ spec: { ...defaultSpec('gfx950', 'fp16', 4), threads: 100 } })).toMatch(/invalid spec: threads 100 is not a multiple of gfx950's wave size 64/);
    expect(err({ spec: defaultSpec('sm_90', 'fp16', 4) })).toBe('cannot plan split-reduce: the spec is for sm_90/fp16 but the problem is gfx950/fp16');
    expect(err({ spec: defaultSpec('gfx950', 'fp16', 4), vectorWidth: 8 })).toBe("cannot plan split-reduce: vectorWidth 8 contradicts the spec's 4");
    expect(err({ count: 2 ** 52, splits: 4 })).toMatch(/workspace of 4 x 4503599627370496 fp32 is too large to address/);
  });

  it('is deterministic', () => {
    const a = planReduce({ count: 123457, splits: 5, dtype: 'bf16', target: 'gfx942' });
    expect(planReduce({ count: 123457, splits: 5, dtype: 'bf16', target: 'gfx942' })).toEqual(a);
  });
});
