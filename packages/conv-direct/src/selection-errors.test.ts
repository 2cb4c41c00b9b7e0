import { describe, expect, it, vi } from 'vitest';
import { PlanError } from './plan-error.js';
import { DEFAULT_PROBLEMS, selectProblemSpecs } from './selection.js';

// The ranking throws for split_c (as a chooser did for a channel-tail split_c spec): the
// selection must record that variant's reason and still select the others and the other shapes.
vi.mock('./ranking.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./ranking.js')>();
  return {
    ...real,
    orderCandidates: ((specs, problem, options) => {
      if (specs[0]?.variant === 'split_c') throw new PlanError(`no split count is feasible for C ${problem.C}, ck ${specs[0].ck}\nsecond line`);
      return real.orderCandidates(specs, problem, options);
    }) satisfies typeof real.orderCandidates,
  };
});

describe('selectProblemSpecs when selecting a variant throws', () => {
  it("records the variant's one-line reason, keeps its valid count and selects the rest", () => {
    const selected = selectProblemSpecs(DEFAULT_PROBLEMS, 'gfx950');
    expect(selected.map((s) => s.name)).toEqual(DEFAULT_PROBLEMS.map((p) => p.name));
    const small = selected[0]!;
    const split = small.variants.find((v) => v.variant === 'split_c')!;
    expect(split.error).toMatch(/^PlanError: no split count is feasible for C 1024, ck \d+$/);
    expect(split.specs).toEqual([]);
    expect(split.valid).toBeGreaterThan(0);
    const dense = small.variants.find((v) => v.variant === 'dense')!;
    expect(dense.error).toBeUndefined();
    expect(dense.specs.length).toBeGreaterThan(0);
    expect(selected[1]!.variants.every((v) => v.error === undefined && v.specs.length > 0)).toBe(true);
  });
});
