import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { naiveConv } from '../test-support/naive-conv.js';
import { planChunks } from './chunks.js';
import { convForward, convForwardChunks } from './conv.js';
import { decodeDtype, encodeDtype } from './dtype.js';
import { makeProblem, type ConvProblem, type ConvProblemInit } from './problem.js';
import { randomTensor } from './random.js';

/** Bits of small integers (exact in both dtypes). */
function bits(values: number[], dtype: 'fp16' | 'bf16' = 'bf16'): Uint16Array {
  return encodeDtype(values, dtype);
}
function run(init: ConvProblemInit, x: number[], w: number[]): number[] {
  const p = makeProblem(init);
  return Array.from(convForward(p, bits(x, p.dtype), bits(w, p.dtype)).y32);
}
const iota = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => i + from);

describe('convForward on hand-computed convolutions', () => {
  it('2x2 box filter over a 3x3 image, no padding', () => {
    // x = 1..9 row-major; each output is the sum of a 2x2 window.
    expect(run({ N: 1, H: 3, W: 3, C: 1, K: 1, R: 2, S: 2, dtype: 'bf16' }, iota(9), [1, 1, 1, 1])).toEqual([12, 16, 24, 28]);
  });

  it('3x3 box filter with padding 1: corners see four pixels, the centre all nine', () => {
    const y = run({ N: 1, H: 3, W: 3, C: 1, K: 1, R: 3, S: 3, padH: 1, padW: 1, dtype: 'fp16' }, iota(9), Array(9).fill(1));
    expect(y).toEqual([12, 21, 16, 27, 45, 33, 24, 39, 28]);
  });

  it('stride 2 and dilation 2 on a 5x5 image', () => {
    // x[h][w] = 5h + w; a dilated 2x2 ones filter sums x at (h,w), (h,w+2), (h+2,w), (h+2,w+2).
    const y = run({ N: 1, H: 5, W: 5, C: 1, K: 1, R: 2, S: 2, strideH: 2, strideW: 2, dilationH: 2, dilationW: 2, dtype: 'bf16' }, iota(25, 0), [1, 1, 1, 1]);
    expect(y).toEqual([24, 32, 64, 72]);
  });

  it('weights a filter tap by tap (KRSC order)', () => {
    // One pixel row, W=3, 1x3 filter [1, 10, 100], pad 1: y[w] = x[w-1] + 10 x[w] + 100 x[w+1].
    const y = run({ N: 1, H: 1, W: 3, C: 1, K: 1, R: 1, S: 3, padW: 1, dtype: 'bf16' }, [1, 2, 3], [1, 10, 100]);
    expect(y).toEqual([10 + 200, 1 + 20 + 300, 2 + 30]);
  });

  it('mixes channels: C=2, K=3, 1x1 filter', () => {
    // One pixel with x = (2, 3); y_k = w_k0 * 2 + w_k1 * 3.
    const y = run({ N: 1, H: 1, W: 1, C: 2, K: 3, R: 1, S: 1, dtype: 'fp16' }, [2, 3], [1, 0, 0, 1, 4, -1]);
    expect(y).toEqual([2, 3, 5]);
  });

  it('keeps groups apart: C=4, K=2, groups=2 sees channels 0-1 for k=0 and 2-3 for k=1', () => {
    const y = run({ N: 1, H: 1, W: 1, C: 4, K: 2, R: 1, S: 1, groups: 2, dtype: 'bf16' }, [1, 2, 3, 4], [1, 1, 10, 100]);
    expect(y).toEqual([1 + 2, 30 + 400]);
  });

  it('convolves each image of a batch with the same filter', () => {
    const y = run({ N: 2, H: 1, W: 2, C: 1, K: 1, R: 1, S: 2, dtype: 'bf16' }, [1, 2, 3, 4], [1, -1]);
    expect(y).toEqual([-1, -1]);
  });

  it('rounds the fp32 sum to the dtype in y', () => {
    // 1 + 2^-9 is exact in fp32 but a tie in bf16 (8 bits): RNE goes to 1. In fp16 it is exact.
    const p = makeProblem({ N: 1, H: 1, W: 1, C: 2, K: 1, R: 1, S: 1, dtype: 'bf16' });
    const out = convForward(p, bits([1, 2 ** -9]), bits([1, 1]));
    expect(out.y32[0]).toBe(1 + 2 ** -9);
    expect(decodeDtype(out.y, 'bf16')[0]).toBe(1);
    const p16 = { ...p, dtype: 'fp16' as const };
    expect(decodeDtype(convForward(p16, bits([1, 2 ** -9], 'fp16'), bits([1, 1], 'fp16')).y, 'fp16')[0]).toBe(1 + 2 ** -9);
  });
});

const smallProblem = fc
  .record({
    N: fc.integer({ min: 1, max: 3 }),
    H: fc.integer({ min: 1, max: 9 }),
    W: fc.integer({ min: 1, max: 9 }),
    groups: fc.integer({ min: 1, max: 3 }),
    cpg: fc.integer({ min: 1, max: 7 }),
    kpg: fc.integer({ min: 1, max: 6 }),
    R: fc.integer({ min: 1, max: 4 }),
    S: fc.integer({ min: 1, max: 4 }),
    strideH: fc.integer({ min: 1, max: 3 }),
    strideW: fc.integer({ min: 1, max: 3 }),
    padH: fc.integer({ min: 0, max: 3 }),
    padW: fc.integer({ min: 0, max: 3 }),
    dilationH: fc.integer({ min: 1, max: 3 }),
    dilationW: fc.integer({ min: 1, max: 3 }),
    dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
    seed: fc.integer(),
  })
  .filter((r) => r.H + 2 * r.padH >= r.dilationH * (r.R - 1) + 1 && r.W + 2 * r.padW >= r.dilationW * (r.S - 1) + 1);

function toProblem(r: { groups: number; cpg: number; kpg: number } & Omit<ConvProblem, 'C' | 'K'>): ConvProblem {
  const { cpg, kpg, ...rest } = r;
  return { ...rest, C: cpg * r.groups, K: kpg * r.groups };
}

describe('convForward against an independent naive loop', () => {
  it('matches bit for bit over random shapes, groups, strides, padding and dilation', () => {
    fc.assert(
      fc.property(smallProblem, ({ seed, ...shape }) => {
        const p = toProblem(shape);
        const x = randomTensor(p.N * p.H * p.W * p.C, p.dtype, seed);
        const w = randomTensor(p.K * p.R * p.S * (p.C / p.groups), p.dtype, seed + 1);
        const out = convForward(p, x, w);
        const naive = naiveConv(p, decodeDtype(x, p.dtype), decodeDtype(w, p.dtype));
        expect([out.geometry.Ho, out.geometry.Wo]).toEqual([naive.Ho, naive.Wo]);
        expect(Array.from(out.y32)).toEqual(Array.from(Float32Array.from(naive.y)));
        expect(Array.from(out.y)).toEqual(Array.from(encodeDtype(Float32Array.from(naive.y), p.dtype)));
      }),
      { numRuns: 150, seed: 4 },
    );
  });

  it('matches on a deep-channel 3x3 problem (C=K=64) with 4-wide and leftover output channels', () => {
    const p = makeProblem({ N: 2, H: 6, W: 5, C: 64, K: 67, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' });
    const x = randomTensor(2 * 6 * 5 * 64, 'bf16', 7);
    const w = randomTensor(67 * 9 * 64, 'bf16', 8);
    const naive = naiveConv(p, decodeDtype(x, 'bf16'), decodeDtype(w, 'bf16'));
    expect(Array.from(convForward(p, x, w).y32)).toEqual(Array.from(Float32Array.from(naive.y)));
  });

  it('rounds fp32 operands to the dtype first, so they give the same result as their dtype bits', () => {
    const p = makeProblem({ N: 1, H: 4, W: 4, C: 3, K: 2, R: 3, S: 3, padH: 1, padW: 1, dtype: 'fp16' });
    const xf = Float32Array.from({ length: 48 }, (_, i) => Math.sin(i) / 3);
    const wf = Float32Array.from({ length: 54 }, (_, i) => Math.cos(i) / 7);
    const fromFloats = convForward(p, xf, wf);
    const fromBits = convForward(p, encodeDtype(xf, 'fp16'), encodeDtype(wf, 'fp16'));
    expect(Array.from(fromFloats.y32)).toEqual(Array.from(fromBits.y32));
    // And the rounding matters: the unrounded inputs give a different fp64 sum.
    const unrounded = naiveConv(p, xf, wf);
    expect(Array.from(fromFloats.y32)).not.toEqual(Array.from(Float32Array.from(unrounded.y)));
  });
});

describe('batch chunking', () => {
  const p = makeProblem({ N: 5, H: 4, W: 3, C: 8, K: 6, R: 3, S: 2, padH: 1, strideW: 2, dtype: 'bf16' });
  const x = randomTensor(5 * 4 * 3 * 8, 'bf16', 21);
  const w = randomTensor(6 * 3 * 2 * 8, 'bf16', 22);
  // Per image: x 4*3*8*4 = 384 bytes, y 4*1*6*4 = 96 bytes.

  it('plans balanced chunks from the budget', () => {
    const g = convForward(p, x, w).geometry;
    expect(planChunks(g, 384 * 2)).toEqual([
      { n0: 0, count: 2 },
      { n0: 2, count: 2 },
      { n0: 4, count: 1 },
    ]);
    expect(planChunks(g, 384 * 4)).toEqual([
      { n0: 0, count: 3 },
      { n0: 3, count: 2 },
    ]);
    expect(planChunks(g, 384)).toHaveLength(5);
    expect(planChunks(g)).toEqual([{ n0: 0, count: 5 }]);
  });

  it('gives the same bits chunked as unchunked', () => {
    const whole = convForward(p, x, w);
    expect(whole.chunks).toHaveLength(1);
    for (const budget of [384, 384 * 2, 384 * 3 + 17]) {
      const chunked = convForward(p, x, w, { budgetBytes: budget });
      expect(chunked.chunks.length).toBeGreaterThan(1);
      expect(Array.from(chunked.y32)).toEqual(Array.from(whole.y32));
      expect(Array.from(chunked.y)).toEqual(Array.from(whole.y));
    }
  });

  it('streams the same chunks through the generator', () => {
    const whole = convForward(p, x, w);
    const per = whole.geometry.yImageElements;
    const seen: number[] = [];
    for (const chunk of convForwardChunks(p, x, w, { budgetBytes: 384 * 2 })) {
      seen.push(chunk.count);
      expect(Array.from(chunk.y32)).toEqual(Array.from(whole.y32.subarray(chunk.n0 * per, (chunk.n0 + chunk.count) * per)));
      expect(Array.from(chunk.y)).toEqual(Array.from(whole.y.subarray(chunk.n0 * per, (chunk.n0 + chunk.count) * per)));
    }
    expect(seen).toEqual([2, 2, 1]);
  });

  it('rejects one image over the budget, naming the sizes, instead of clamping', () => {
    expect(() => convForward(p, x, w, { budgetBytes: 383 })).toThrow(
      /one image does not fit the reference budget of 383 bytes per fp32 operand: x needs H\*W\*C\*4 = 4\*3\*8\*4 = 384 bytes, y needs Ho\*Wo\*K\*4 = 4\*1\*6\*4 = 96 bytes/,
    );
    // The y side alone can also be the one that does not fit.
    const wide = makeProblem({ N: 2, H: 2, W: 2, C: 1, K: 64, R: 1, S: 1, dtype: 'fp16' });
    expect(() => convForward(wide, new Uint16Array(8), new Uint16Array(64), { budgetBytes: 1000 })).toThrow(/y needs Ho\*Wo\*K\*4 = 2\*2\*64\*4 = 1024 bytes/);
    // The generator checks before it computes anything.
    expect(() => convForwardChunks(p, x, w, { budgetBytes: 100 })).toThrow(/over|does not fit/);
  });

  it('rejects a budget that is not a positive integer', () => {
    expect(() => convForward(p, x, w, { budgetBytes: 0 })).toThrow(/budgetBytes must be a positive integer, got 0/);
    expect(() => convForward(p, x, w, { budgetBytes: 1.5 })).toThrow(/budgetBytes must be a positive integer/);
  });
});

describe('bad input', () => {
  const base = makeProblem({ N: 1, H: 4, W: 4, C: 4, K: 4, R: 3, S: 3, dtype: 'bf16' });
  const x = new Uint16Array(64);
  const w = new Uint16Array(144);
  const cases: [string, Partial<ConvProblem> | Record<string, unknown>, RegExp][] = [
    ['non-integer size', { H: 4.5 }, /H must be a positive integer, got 4.5/],
    ['zero size', { C: 0 }, /C must be a positive integer, got 0/],
    ['negative size', { N: -1 }, /N must be a positive integer, got -1/],
    ['missing field', { K: undefined }, /K must be a positive integer, got nothing \(missing\)/],
    ['string size', { W: '4' }, /W must be a positive integer, got "4"/],
    ['zero stride', { strideW: 0 }, /strideW must be a positive integer, got 0/],
    ['zero dilation', { dilationH: 0 }, /dilationH must be a positive integer, got 0/],
    ['negative padding', { padH: -1 }, /padH must be a non-negative integer, got -1/],
    ['groups not dividing C', { groups: 3, C: 4, K: 6 }, /groups \(3\) must divide C \(4\)/],
    ['groups not dividing K', { groups: 2, K: 5 }, /groups \(2\) must divide K \(5\)/],
    ['bad dtype', { dtype: 'fp32' }, /dtype must be one of fp16, bf16, got "fp32"/],
    ['empty output (height)', { H: 2 }, /empty output: padded height H \+ 2\*padH = 2 is smaller than the dilated filter height 3/],
    ['empty output (dilated width)', { dilationW: 2, W: 4 }, /empty output: padded width W \+ 2\*padW = 4 is smaller than the dilated filter width 5/],
  ];
  for (const [name, change, message] of cases) {
    it(`rejects ${name}`, () => {
      expect(() => convForward({ ...base, ...change } as ConvProblem, x, w)).toThrow(message);
    });
  }

  it('rejects operand buffers whose length does not match the problem', () => {
    expect(() => convForward(base, new Uint16Array(63), w)).toThrow(/x holds 63 elements but the problem needs N\*H\*W\*C = 1\*4\*4\*4 = 64/);
    expect(() => convForward(base, x, new Uint16Array(145))).toThrow(/w holds 145 elements but the problem needs K\*R\*S\*\(C\/groups\) = 4\*3\*3\*4 = 144/);
    const grouped = { ...base, groups: 2 };
    expect(() => convForward(grouped, x, w)).toThrow(/w holds 144 elements but the problem needs K\*R\*S\*\(C\/groups\) = 4\*3\*3\*2 = 72/);
  });

  it('rejects operands of the wrong type', () => {
    expect(() => convForward(base, new Float64Array(64) as unknown as Uint16Array, w)).toThrow(/x must be a Uint16Array \(dtype bits\) or a Float32Array, got Float64Array/);
    expect(() => convForward(base, x, null as unknown as Uint16Array)).toThrow(/w must be .* got null/);
  });

  it('throws a ConvReferenceError with a code', () => {
    try {
      convForward({ ...base, groups: 3 }, x, w);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ name: 'ConvReferenceError', code: 'invalid-problem' });
    }
  });
});
