import { describe, expect, it } from 'vitest';
import { decodeDtype, roundToDtype } from './dtype.js';
import { createRng, randomTensor } from './random.js';

describe('createRng', () => {
  it('reproduces the stream of a uint32 C implementation (test-support/xoshiro128ss.c)', () => {
    const known: [number, number[]][] = [
      [0, [3809008728, 1133695204, 53579671, 2891528803, 139681546, 2203266335]],
      [42, [2837322924, 544945897, 479756282, 3500138142, 339756180, 113173290]],
      [-7, [225556871, 1658637708, 1499479109, 4022105103, 1678753079, 3989087399]],
      [123456789012, [3801155205, 3095466046, 62943825, 2217477723, 4020314321, 1346634942]],
    ];
    for (const [seed, stream] of known) {
      const rng = createRng(seed);
      expect(stream.map(() => rng.nextUint32()), `seed ${seed}`).toEqual(stream);
    }
  });

  it('gives floats in [0, 1) with the right mean and integers below their bound', () => {
    const rng = createRng(3);
    let sum = 0;
    let min = 1;
    let max = 0;
    for (let i = 0; i < 100000; i++) {
      const f = rng.nextFloat();
      sum += f;
      min = Math.min(min, f);
      max = Math.max(max, f);
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    // Mean of 1e5 uniforms: standard error 0.0009; 0.005 is over 5 standard errors.
    expect(Math.abs(sum / 100000 - 0.5)).toBeLessThan(0.005);
    const counts = [0, 0, 0];
    for (let i = 0; i < 30000; i++) {
      const bucket = rng.nextInt(3);
      counts[bucket] = (counts[bucket] ?? 0) + 1;
    }
    for (const c of counts) expect(Math.abs(c - 10000)).toBeLessThan(500);
    const big = 2 ** 40 + 3;
    for (let i = 0; i < 1000; i++) {
      const v = rng.nextInt(big);
      expect(Number.isInteger(v) && v >= 0 && v < big).toBe(true);
    }
  });

  it('rejects seeds and bounds that are not safe integers', () => {
    expect(() => createRng(1.5)).toThrow(/seed must be a safe integer, got 1.5/);
    expect(() => createRng(2 ** 60)).toThrow(/seed must be a safe integer/);
    expect(() => createRng(1).nextInt(0)).toThrow(/bound must be a positive safe integer, got 0/);
  });
});

describe('randomTensor', () => {
  it('is deterministic per seed, dtype-rounded and within [min, max]', () => {
    const a = randomTensor(5000, 'bf16', 9);
    expect(Array.from(randomTensor(5000, 'bf16', 9))).toEqual(Array.from(a));
    expect(Array.from(randomTensor(5000, 'bf16', 10))).not.toEqual(Array.from(a));
    const values = decodeDtype(a, 'bf16');
    expect(Math.min(...values)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...values)).toBeLessThanOrEqual(1);
    expect(Math.min(...values)).toBeLessThan(-0.99);
    expect(Math.max(...values)).toBeGreaterThan(0.99);
    const positive = decodeDtype(randomTensor(1000, 'fp16', 1, 2, 3), 'fp16');
    for (const v of positive) {
      expect(v >= 2 && v <= 3).toBe(true);
      expect(roundToDtype(v, 'fp16')).toBe(v);
    }
  });

  it('rejects a bad length or range', () => {
    expect(() => randomTensor(-1, 'fp16', 1)).toThrow(/length must be a non-negative safe integer, got -1/);
    expect(() => randomTensor(4, 'fp16', 1, 1, 1)).toThrow(/need finite min < max, got \[1, 1\)/);
    expect(() => randomTensor(4, 'fp16', 1, 0, Infinity)).toThrow(/need finite min < max/);
  });
});
