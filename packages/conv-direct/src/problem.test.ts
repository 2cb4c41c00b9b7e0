import { describe, expect, it } from 'vitest';
import { checkProblem, outputExtent, parseProblem, parseProblemFlags, problemGeometry, problemLabel } from './problem.js';
import { problem3x3 } from './test-fixtures.js';

describe('problem schema', () => {
  it('accepts a full problem and rejects unknown or missing fields', () => {
    expect(parseProblem(problem3x3())).toEqual({ ok: true, problem: problem3x3() });
    const extra = parseProblem({ ...problem3x3(), layout: 'NHWC' });
    expect(extra.ok).toBe(false);
    if (!extra.ok) expect(extra.reason).toMatch(/layout|Unrecognized/i);
    const { groups: _g, ...missing } = problem3x3();
    const r = parseProblem(missing);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^groups:/);
  });

  it('rejects non-integer sizes and unknown dtypes', () => {
    expect(parseProblem({ ...problem3x3(), H: 16.5 }).ok).toBe(false);
    const r = parseProblem({ ...problem3x3(), dtype: 'fp32' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^dtype:/);
  });

  it('reports groups that are not positive or do not divide the channels', () => {
    expect(checkProblem(problem3x3({ groups: 0 }))).toBe('problem.groups must be >= 1 (got 0)');
    expect(checkProblem(problem3x3({ groups: -4 }))).toBe('problem.groups must be >= 1 (got -4)');
    expect(checkProblem(problem3x3({ groups: 3 }))).toBe('groups 3 does not divide C 64');
    expect(checkProblem(problem3x3({ C: 64, K: 96, groups: 64 }))).toBe('groups 64 does not divide K 96');
    expect(checkProblem(problem3x3({ groups: 2 }))).toBeNull();
    expect(checkProblem(problem3x3({ N: 0 }))).toBe('problem.N must be >= 1 (got 0)');
    expect(checkProblem(problem3x3({ padH: -1 }))).toMatch(/padding must be >= 0/);
    expect(checkProblem(problem3x3({ H: 1, R: 5, padH: 0 }))).toMatch(/output is empty: Ho -3/);
  });
});

describe('derived geometry', () => {
  it('computes output extents with stride, padding and dilation', () => {
    expect(outputExtent(56, 3, 1, 1, 1)).toBe(56);
    expect(outputExtent(56, 3, 2, 1, 1)).toBe(28);
    expect(outputExtent(7, 3, 2, 1, 1)).toBe(4);
    expect(outputExtent(64, 1, 1, 0, 1)).toBe(64);
    expect(outputExtent(32, 3, 1, 2, 2)).toBe(32);
    expect(outputExtent(20, 5, 1, 2, 1)).toBe(20);
  });

  it('counts flops and bytes of a grouped stride-2 problem', () => {
    const p = problem3x3({ N: 2, H: 15, W: 9, C: 32, K: 48, strideH: 2, strideW: 2, groups: 4 });
    const g = problemGeometry(p);
    expect([g.Ho, g.Wo, g.cpg, g.kpg]).toEqual([8, 5, 8, 12]);
    expect(g.flops).toBe(2 * 2 * 8 * 5 * 48 * 9 * 8);
    expect(g.xBytes).toBe(2 * 2 * 15 * 9 * 32);
    expect(g.wBytes).toBe(2 * 48 * 9 * 8);
    expect(g.yBytes).toBe(2 * 2 * 8 * 5 * 48);
    expect(g.bytes).toBe(g.xBytes + g.wBytes + g.yBytes);
    expect(g.xImageBytes * 2).toBe(g.xBytes);
    expect(() => problemGeometry(problem3x3({ groups: 0 }))).toThrow(/groups must be >= 1/);
  });

  it('labels problems deterministically', () => {
    expect(problemLabel(problem3x3())).toBe('n2h16w32c64k128_r3s3_u1v1_p1q1_g1_bf16');
    expect(problemLabel(problem3x3({ dilationH: 2 }))).toBe('n2h16w32c64k128_r3s3_u1v1_p1q1_l2j1_g1_bf16');
  });
});

describe('parseProblemFlags', () => {
  it('reads long, short and = forms and applies same-padding defaults', () => {
    const r = parseProblemFlags(['--N', '4', '--H=64', '--Wi', '64', '--C', '640', '--K', '640', '--dtype', 'bf16']);
    expect(r).toEqual({
      ok: true,
      problem: { N: 4, H: 64, W: 64, C: 640, K: 640, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' },
    });
    const s2 = parseProblemFlags(['--N', '1', '--H', '56', '--W', '56', '--C', '8', '--K', '8', '--R', '5', '--S', '1', '--stride', '2', '--groups', '2', '--dtype', 'fp16']);
    expect(s2.ok && s2.problem).toMatchObject({ R: 5, S: 1, padH: 2, padW: 0, strideH: 2, strideW: 2, groups: 2, dtype: 'fp16' });
  });

  it('gives reasons for missing, unknown, repeated and malformed flags', () => {
    const base = ['--N', '1', '--H', '8', '--W', '8', '--C', '8', '--K', '8'];
    expect(parseProblemFlags(base)).toEqual({ ok: false, reason: 'missing --dtype' });
    expect(parseProblemFlags([...base, '--dtype', 'bf16', '--bogus', '1'])).toMatchObject({ ok: false, reason: expect.stringMatching(/^unknown flag --bogus/) });
    expect(parseProblemFlags([...base, '--dtype', 'bf16', '--n', '2'])).toEqual({ ok: false, reason: 'flag --n sets N, which is already set' });
    expect(parseProblemFlags([...base, '--dtype', 'bf16', '--stride', '1', '--sH', '2'])).toEqual({ ok: false, reason: 'flag --sH sets strideH, which is already set' });
    expect(parseProblemFlags([...base, '--dtype', 'bf16', '--pad', 'x'])).toEqual({ ok: false, reason: "padH must be an integer (got 'x')" });
    expect(parseProblemFlags([...base, '--dtype'])).toEqual({ ok: false, reason: 'flag --dtype needs a value' });
    expect(parseProblemFlags(['4'])).toMatchObject({ ok: false, reason: expect.stringMatching(/unexpected argument '4'/) });
    expect(parseProblemFlags([...base, '--dtype', 'bf16', '--groups', '0'])).toEqual({ ok: false, reason: 'problem.groups must be >= 1 (got 0)' });
  });
});
