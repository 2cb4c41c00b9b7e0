import { describe, expect, it } from 'vitest';
import { operandShapes, problemFromFlags, problemFromOperands, problemFromSuiteRow, readMiopenLog } from './problem-input.js';
import { isUncovered, planReport, uncoveredReason } from './plan-report.js';

const SMALL = { n: '1', c: '64', h: '8', w: '8', k: '64', dtype: 'bf16' };

describe('problems from a command line', () => {
  it('reads flags in lower case, with conv-direct defaults, and names bad flags in lower case', () => {
    const r = problemFromFlags(SMALL);
    expect(r).toMatchObject({ ok: true, problem: { N: 1, C: 64, H: 8, W: 8, K: 64, R: 3, S: 3, padH: 1, padW: 1, groups: 1, dtype: 'bf16' } });
    expect(problemFromFlags({})).toBeUndefined();
    expect(problemFromFlags({ n: '1', c: '64', h: '8', w: '8', dtype: 'bf16' })).toEqual({ ok: false, reason: 'bad problem: missing --k' });
    expect(problemFromFlags({ ...SMALL, miopen: 'convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64' })).toEqual({
      ok: false,
      reason: 'give the problem either by --miopen or by flags, not both (also got --n --c --h --w --k --dtype)',
    });
    expect(problemFromFlags({ miopen: 'convfp32 -n 1' })).toMatchObject({ ok: false, reason: expect.stringMatching(/^bad MIOpenDriver command: /) });
  });

  it('reads a suite row with one stride, pad and dilation for both axes', () => {
    const r = problemFromSuiteRow({ N: 2, C: 32, H: 9, W: 9, K: 16, R: 3, S: 3, stride: 2, pad: 1, dtype: 'fp16' });
    expect(r).toMatchObject({ ok: true, problem: { strideH: 2, strideW: 2, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1 } });
    expect(problemFromSuiteRow({ N: 2, C: 32, H: 9, W: 9, K: 16, R: 3, S: 3, dtype: 'fp16' })).toMatchObject({ ok: true, problem: { padH: 0, strideW: 1 } });
    expect(problemFromSuiteRow({ N: 2, C: 32, H: 9, W: 9, K: 16, R: 3, S: 3, dtype: 'fp16', bogus: 1 }).ok).toBe(false);
  });

  it('reads a MIOpen log: prefixed and bare commands, repeats once, unsupported by reason, a cap', () => {
    const line = 'convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -p 1 -q 1';
    const log = [`MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver ${line}`, 'hello', line, 'conv -n 1 -c 3 -H 8 -W 8 -k 8', 'convbfp16 -n 2 -c 64 -H 8 -W 8 -k 64'].join('\n');
    const r = readMiopenLog(log, 10);
    if ('reason' in r) throw new Error(r.reason);
    expect(r.problems.map((p) => p.name)).toEqual(['line1', 'line5']);
    expect([r.lines, r.otherLines, r.repeats, r.unsupported.length]).toEqual([5, 1, 1, 1]);
    expect(readMiopenLog(log, 1)).toEqual({ reason: 'more than 1 distinct problems' });
    expect(readMiopenLog('hello\n', 10)).toEqual({ reason: 'no supported MIOpenDriver conv command in 1 lines (1 other lines)' });
  });

  it("reads rocke run's operands: groups from w, dtype from the data unless given", () => {
    const g = problemFromOperands({}, [1, 8, 8, 64], [64, 3, 3, 2], 'fp16');
    expect(g).toMatchObject({ ok: true, problem: { groups: 32, K: 64, dtype: 'fp16' } });
    if (g.ok) expect(operandShapes(g.problem)).toEqual({ x: [1, 8, 8, 64], w: [64, 3, 3, 2] });
    expect(problemFromOperands({}, [1, 8, 8, 64], [64, 3, 3, 64], undefined)).toEqual({ ok: false, reason: 'x and w are float32: say which dtype to run with --dtype fp16|bf16' });
    expect(problemFromOperands({}, [1, 8, 8, 64], [64, 3, 3, 3], 'bf16')).toEqual({ ok: false, reason: "w's last dimension 3 does not divide x's channels 64" });
    expect(problemFromOperands({ miopen: 'convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64', pad: '1' }, [], [], undefined)).toEqual({ ok: false, reason: 'with --miopen the problem is fully given; drop --pad' });
  });
});

describe('the plan report and coverage', () => {
  const problem = (problemFromFlags(SMALL) as { ok: true; problem: Parameters<typeof planReport>[0] }).problem;

  it("chooses by the ranker with no cache, and names a kernel that is not a candidate as a usage reason", () => {
    const r = planReport(problem, 'sm_90');
    if ('usage' in r) throw new Error(r.usage);
    expect(r.chosen?.chosenBy).toBe('ranker');
    expect(r.validKernels).toContain(r.chosen?.kernelName);
    expect(r.chosen?.plan.launches.length).toBeGreaterThan(0);
    expect(planReport(problem, 'sm_90', { kernel: 'nope' })).toEqual({ usage: 'kernel nope is not a valid dense/split_c candidate for n1h8w8c64k64_r3s3_u1v1_p1q1_g1_bf16 on sm_90' });
  });

  it('says why a problem has no kernel', () => {
    // A 101x101 filter: no tile's halo fits in shared memory.
    const huge = problemFromFlags({ miopen: 'convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 101 -x 101 -p 50 -q 50' });
    if (!huge?.ok) throw new Error('bad fixture');
    expect(isUncovered(problem, 'sm_90')).toBe(false);
    expect(isUncovered(huge.problem, 'sm_90')).toBe(true);
    expect(uncoveredReason(huge.problem, 'sm_90')).toMatch(/^no valid dense candidate on sm_90: LDS \d+ bytes exceed/);
  });
});
