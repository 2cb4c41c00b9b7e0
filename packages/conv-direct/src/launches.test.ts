import { helperSpecs } from '@rocke/split-reduce';
import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { chooseReduceHelper, launchSequence } from './launches.js';
import { parseProblem, type Problem } from './problem.js';

const small = (() => {
  const r = parseProblem({ N: 2, H: 7, W: 7, C: 512, K: 256, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' });
  if (!r.ok) throw new Error(r.reason);
  return r.problem;
})();

function firstSpec(problem: Problem, target: 'sm_90' | 'gfx950', variant: 'dense' | 'split_c') {
  const spec = problemCandidates(problem, target, { variant }).valid[0];
  if (!spec) throw new Error(`no ${variant} candidate for ${target}`);
  return spec;
}

describe('launchSequence', () => {
  it('follows each split_c conv launch with the split-reduce launches that fold its slices', () => {
    const spec = firstSpec(small, 'sm_90', 'split_c');
    const reduce = chooseReduceHelper(helperSpecs('sm_90').map((spec) => ({ spec })), 'bf16');
    expect(reduce?.spec.vectorWidth).toBe(Math.max(...helperSpecs('sm_90').filter((s) => s.dtype === 'bf16').map((s) => s.vectorWidth)));
    const seq = launchSequence(spec, small, { splits: 2, reduce: reduce!.spec });
    expect(seq.plan.splits).toBe(2);
    expect(seq.launches[0]!.role).toBe('conv');
    expect(seq.launches.slice(1).every((l) => l.role === 'reduce')).toBe(true);
    expect(seq.launches.length).toBeGreaterThan(1);
    // Every launch packs its values in its own kernel's argument order.
    for (const l of seq.launches) expect(l.kernargs).toHaveLength(l.signature.length);
    expect(() => launchSequence(spec, small, { splits: 2 })).toThrow(/needs a split-reduce helper kernel for bf16/);
  });

  it('marks launches programmatic exactly where the target has grid dependency control', () => {
    expect(launchSequence(firstSpec(small, 'sm_90', 'dense'), small).launches.every((l) => l.programmatic)).toBe(true);
    expect(launchSequence(firstSpec(small, 'gfx950', 'dense'), small).launches.some((l) => l.programmatic)).toBe(false);
  });

  it('takes a helper of the run\'s epilogue only: bare for a bare run, the same fused shape for a fused one', () => {
    const silu = { act: 'silu', bias: 'fp32', residual: true } as const;
    const bare = helperSpecs('sm_90').map((spec) => ({ spec }));
    const fused = helperSpecs('sm_90').map((spec) => ({ spec: { ...spec, epilogue: silu } }));
    expect(chooseReduceHelper([...fused, ...bare], 'bf16')?.spec.epilogue).toBeUndefined();
    expect(chooseReduceHelper([...bare, ...fused], 'bf16', silu)?.spec.epilogue).toEqual(silu);
    expect(chooseReduceHelper(fused, 'bf16')).toBeUndefined();
    expect(chooseReduceHelper(fused, 'bf16', { ...silu, act: 'relu' })).toBeUndefined();
  });

  it('finds no helper for a dtype none of the helpers has', () => {
    expect(chooseReduceHelper(helperSpecs('sm_90').filter((s) => s.dtype === 'fp16').map((spec) => ({ spec })), 'bf16')).toBeUndefined();
  });
});
