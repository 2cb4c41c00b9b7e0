import { afterAll, describe, expect, it } from 'vitest';
import { convForward, convForwardChunks } from './conv.js';
import { AUTO_THREADS_MIN_MACS, convForwardChunksParallel, convForwardParallel, resolveThreads, splitRows, stopReferenceWorkers } from './parallel.js';
import { makeProblem, type ConvProblemInit } from './problem.js';
import { randomTensor } from './random.js';

function data(init: ConvProblemInit, seed: number) {
  const p = makeProblem(init);
  const x = randomTensor(p.N * p.H * p.W * p.C, p.dtype, seed);
  const w = randomTensor(p.K * p.R * p.S * (p.C / p.groups), p.dtype, seed + 1);
  return { p, x, w };
}

describe('multi-threaded reference', () => {
  afterAll(() => stopReferenceWorkers());

  const cases: [string, ConvProblemInit][] = [
    ['dense 3x3, one image split over rows', { N: 1, H: 9, W: 8, C: 32, K: 20, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }],
    ['grouped, strided, dilated, several images', { N: 3, H: 11, W: 7, C: 12, K: 9, R: 3, S: 2, strideH: 2, dilationW: 2, padH: 2, groups: 3, dtype: 'fp16' }],
  ];
  for (const [name, init] of cases) {
    it(`threads=2 gives the same bits as threads=1: ${name}`, async () => {
      const { p, x, w } = data(init, 31);
      const one = convForward(p, x, w);
      const two = await convForwardParallel(p, x, w, { threads: 2 });
      const three = await convForwardParallel(p, x, w, { threads: 3 });
      expect(Array.from(two.y32)).toEqual(Array.from(one.y32));
      expect(Array.from(two.y)).toEqual(Array.from(one.y));
      expect(Array.from(three.y32)).toEqual(Array.from(one.y32));
    });
  }

  it('chunks under a budget with workers and streams the same chunks as the single-threaded generator', async () => {
    const { p, x, w } = data({ N: 5, H: 6, W: 5, C: 8, K: 8, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }, 41);
    const budget = 6 * 5 * 8 * 4 * 2; // two images per chunk
    const single = [...convForwardChunks(p, x, w, { budgetBytes: budget })];
    const parallel = [];
    for await (const chunk of convForwardChunksParallel(p, x, w, { budgetBytes: budget, threads: 2 })) parallel.push(chunk);
    expect(parallel.map((c) => [c.n0, c.count])).toEqual([
      [0, 2],
      [2, 2],
      [4, 1],
    ]);
    expect(parallel.map((c) => Array.from(c.y32))).toEqual(single.map((c) => Array.from(c.y32)));
    expect(parallel.map((c) => Array.from(c.y))).toEqual(single.map((c) => Array.from(c.y)));
    const whole = await convForwardParallel(p, x, w, { budgetBytes: budget, threads: 2 });
    expect(whole.chunks).toHaveLength(3);
    expect(Array.from(whole.y32)).toEqual(Array.from(convForward(p, x, w).y32));
  });

  it('serves concurrent calls from the shared pool, each with its own buffers', async () => {
    const a = data({ N: 2, H: 6, W: 6, C: 16, K: 8, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }, 81);
    const b = data({ N: 1, H: 9, W: 5, C: 8, K: 12, R: 1, S: 3, dtype: 'fp16' }, 82);
    const [ra, rb] = await Promise.all([convForwardParallel(a.p, a.x, a.w, { threads: 2 }), convForwardParallel(b.p, b.x, b.w, { threads: 3 })]);
    expect(Array.from(ra.y32)).toEqual(Array.from(convForward(a.p, a.x, a.w).y32));
    expect(Array.from(rb.y32)).toEqual(Array.from(convForward(b.p, b.x, b.w).y32));
  });

  it('returns its workers to the pool when the caller leaves the iteration early', async () => {
    const { p, x, w } = data({ N: 4, H: 4, W: 4, C: 4, K: 4, R: 1, S: 1, dtype: 'fp16' }, 51);
    let seen = 0;
    for await (const chunk of convForwardChunksParallel(p, x, w, { budgetBytes: 4 * 4 * 4 * 4, threads: 2 })) {
      seen += chunk.count;
      break;
    }
    expect(seen).toBe(1);
    // The pool is still usable afterwards.
    const again = await convForwardParallel(p, x, w, { threads: 2 });
    expect(Array.from(again.y)).toEqual(Array.from(convForward(p, x, w).y));
  });

  it('rejects a bad thread count and over-budget images before starting workers', async () => {
    const { p, x, w } = data({ N: 1, H: 4, W: 4, C: 4, K: 4, R: 1, S: 1, dtype: 'fp16' }, 61);
    await expect(convForwardParallel(p, x, w, { threads: 0 })).rejects.toThrow(/threads must be a positive integer or 'auto', got 0/);
    await expect(convForwardParallel(p, x, w, { threads: 2, budgetBytes: 100 })).rejects.toThrow(/one image does not fit/);
  });
});

describe('thread planning', () => {
  it('splits rows into balanced contiguous ranges and drops empty ones', () => {
    expect(splitRows(10, 3)).toEqual([
      [0, 4],
      [4, 7],
      [7, 10],
    ]);
    expect(splitRows(2, 4)).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it("resolves 'auto' by problem size and never asks for more threads than rows", () => {
    expect(resolveThreads('auto', AUTO_THREADS_MIN_MACS - 1, 100)).toBe(1);
    expect(resolveThreads('auto', AUTO_THREADS_MIN_MACS, 100)).toBeGreaterThanOrEqual(1);
    expect(resolveThreads(8, 1, 3)).toBe(3);
    expect(resolveThreads(2, 1, 100)).toBe(2);
    expect(() => resolveThreads(1.5, 1, 10)).toThrow(/threads must be a positive integer/);
  });
});
