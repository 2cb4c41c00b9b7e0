/**
 * An evenly spaced sample of each target's candidate list for one small problem, run in the
 * interpreter: whatever the tuner may pick computes the right thing, not just the hand-picked
 * configs of the other tests.
 */
import { describe, expect, it } from 'vitest';
import { problemCandidates } from '../candidates.js';
import { problemGeometry } from '../problem.js';
import { kernelName } from '../spec.js';
import { problem3x3 } from '../test-fixtures.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

const problem = problem3x3({ N: 1, H: 9, W: 32, C: 64, K: 64 });
const SAMPLE = 4;

// sm_90 is sampled per MMA atom (mma.sync and the sm_90a warpgroup MMA), so both always run.
describe.each([
  ['gfx950', null],
  ['gfx942', null],
  ['sm_90', 'm16n8k16'],
  ['sm_90', 'm64nNk16'],
] as const)('%s %s candidates (evenly spaced sample)', (target, atom) => {
  const all = problemCandidates(problem, target).valid.filter((s) => atom === null || s.atom === atom);
  const picks = Array.from({ length: SAMPLE }, (_, i) => all[Math.floor(((i + 0.5) * all.length) / SAMPLE)]!);
  it.each(picks.map((s) => [kernelName(s), s] as const))('%s', (_, spec) => {
    const g = problemGeometry(problem);
    const x = randomBits(g.xBytes / 2, problem.dtype, 51);
    const w = randomBits(g.wBytes / 2, problem.dtype, 52);
    const y = Array.from(interpretConv(buildConvKernel(spec), problem, x, w).y, fromBits(problem.dtype));
    expect(mismatches(y, naiveConv(problem, x, w), problem.dtype, 9 * problem.C)).toEqual({ count: 0, first: null });
  });
});
