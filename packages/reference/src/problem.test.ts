import { describe, expect, it } from 'vitest';
import { ConvReferenceError, convGeometry, makeProblem, problemName, validateProblem } from './problem.js';

describe('problem geometry', () => {
  it('derives output size, per-group channels, element counts and MACs', () => {
    // H=10, pad 2, dilation 3, R=3: extent 7, (10 + 4 - 7) / 2 + 1 = 4 rows.
    // W=9, pad 0, dilation 1, S=2: extent 2, (9 - 2) / 3 + 1 = 3 columns.
    const g = convGeometry(
      makeProblem({ N: 2, H: 10, W: 9, C: 6, K: 4, R: 3, S: 2, strideH: 2, strideW: 3, padH: 2, dilationH: 3, groups: 2, dtype: 'fp16' }),
    );
    expect(g).toMatchObject({
      N: 2,
      Ho: 4,
      Wo: 3,
      K: 4,
      Cg: 3,
      Kg: 2,
      reductionLength: 3 * 2 * 3,
      xElements: 2 * 10 * 9 * 6,
      wElements: 4 * 3 * 2 * 3,
      yElements: 2 * 4 * 3 * 4,
      xImageElements: 540,
      yImageElements: 48,
      macs: 2 * 48 * 18,
    });
  });

  it('fills the usual defaults explicitly and keeps given values', () => {
    expect(makeProblem({ N: 1, H: 2, W: 3, C: 4, K: 5, R: 1, S: 1, dtype: 'bf16', padW: 2 })).toEqual({
      N: 1,
      H: 2,
      W: 3,
      C: 4,
      K: 5,
      R: 1,
      S: 1,
      dtype: 'bf16',
      strideH: 1,
      strideW: 1,
      padH: 0,
      padW: 2,
      dilationH: 1,
      dilationW: 1,
      groups: 1,
    });
  });

  it('names problems compactly', () => {
    expect(problemName(makeProblem({ N: 4, H: 64, W: 64, C: 640, K: 640, R: 3, S: 3, padH: 1, padW: 1, dtype: 'bf16' }))).toBe('N4H64W64C640K640R3S3_p1x1_bf16');
    expect(problemName(makeProblem({ N: 1, H: 8, W: 8, C: 64, K: 64, R: 3, S: 3, strideH: 2, strideW: 2, dilationH: 2, dilationW: 1, groups: 8, dtype: 'fp16' }))).toBe(
      'N1H8W8C64K64R3S3_s2x2_d2x1_g8_fp16',
    );
  });
});

describe('validateProblem', () => {
  it('returns a reason instead of throwing, for anything', () => {
    expect(validateProblem(null)).toEqual({ ok: false, reason: 'problem must be an object' });
    expect(validateProblem(42)).toEqual({ ok: false, reason: 'problem must be an object' });
    expect(validateProblem({})).toEqual({ ok: false, reason: 'N must be a positive integer, got nothing (missing)' });
    const huge = makeProblem({ N: 2 ** 20, H: 2 ** 12, W: 2 ** 12, C: 2 ** 12, K: 1, R: 1, S: 1, dtype: 'bf16' });
    expect(validateProblem(huge)).toEqual({ ok: false, reason: expect.stringMatching(/^xElements \(\d+\) is past the safe integer range$/) });
  });

  it('accepts a valid problem and copies it', () => {
    const p = makeProblem({ N: 1, H: 3, W: 3, C: 2, K: 2, R: 3, S: 3, dtype: 'fp16' });
    const check = validateProblem(p);
    expect(check.ok).toBe(true);
    if (check.ok) {
      expect(check.geometry.problem).toEqual(p);
      expect(check.geometry.problem).not.toBe(p);
      expect([check.geometry.Ho, check.geometry.Wo]).toEqual([1, 1]);
    }
  });

  it('throws ConvReferenceError from convGeometry', () => {
    expect(() => convGeometry(makeProblem({ N: 1, H: 3, W: 3, C: 3, K: 2, R: 1, S: 1, groups: 2, dtype: 'fp16' }))).toThrow(ConvReferenceError);
    expect(() => convGeometry(makeProblem({ N: 1, H: 3, W: 3, C: 3, K: 2, R: 1, S: 1, groups: 2, dtype: 'fp16' }))).toThrow(
      'invalid conv problem: groups (2) must divide C (3)',
    );
  });
});
