import { describe, expect, it } from 'vitest';
import { chooseSplits, splitOptions } from './split-plan.js';
import { PlanError } from './plan-error.js';
import { gfx950Spec, problem3x3 } from './test-fixtures.js';

// gfx950 parity base as split_c: 2 resident workgroups per CU x 256 CUs = 512 slots; 2 waves = 1024.
const spec = gfx950Spec({ variant: 'split_c' });

describe('splitOptions', () => {
  it('lists split counts with whole ck chunks per split', () => {
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });
    const opts = splitOptions(spec, p);
    expect(opts.map((o) => o.splits)).toEqual([1, 2, 4, 8, 16, 32]);
    expect(opts.map((o) => o.channelsPerSplit)).toEqual([1024, 512, 256, 128, 64, 32]);
    // 1 w tile x 2 h tiles x 16 k tiles = 32 workgroups per split
    expect(opts.map((o) => o.workgroups)).toEqual([32, 64, 128, 256, 512, 1024]);
    expect(opts[5]!.workspaceBytes).toBe(4 * 32 * 14 * 14 * 1024);
  });

  it('leaves out counts whose workspace passes the buffer range', () => {
    const p = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 128 }); // 2^27 bytes of ws per split
    expect(splitOptions(spec, p).map((o) => o.splits)).toEqual([1, 2, 4, 8]);
  });

  it('is for split_c specs that can run the problem', () => {
    expect(() => splitOptions(gfx950Spec(), problem3x3())).toThrow(new PlanError('split counts apply to split_c specs, not dense'));
    expect(() => splitOptions(spec, problem3x3({ C: 48 }))).toThrow('spec cannot run this problem: C 48 is not a multiple of ck 32');
  });
});

describe('chooseSplits', () => {
  it('takes the smallest count reaching 2 waves', () => {
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });
    const c = chooseSplits(spec, p);
    expect([c.splits, c.workgroups, c.waves]).toEqual([32, 1024, 2]);
    expect(c.explain[0]).toBe(
      'residency: 2 workgroup(s) per CU (limited by shared; threads 8, shared 2, registers 3) x 256 = 512 slots; 2 waves need 1024 workgroups',
    );
    expect(c.explain).toContain('unsplit grid: 32 workgroups');
    expect(c.explain.at(-1)).toBe('chose splits 32: the smallest reaching 2 waves (1024 workgroups, 2.00 waves), 32 channels per split, workspace 25690112 bytes');
    expect(chooseSplits(spec, p, 1).splits).toBe(16);
  });

  it('keeps 1 when the unsplit grid already fills the machine', () => {
    const p = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 256 });
    expect(chooseSplits(spec, p).splits).toBe(1);
  });

  it('falls back to the largest feasible count when none reaches the target', () => {
    const p = problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 }); // 8 workgroups unsplit, at most 16 splits
    const c = chooseSplits(spec, p);
    expect([c.splits, c.workgroups]).toEqual([16, 128]);
    expect(c.explain.at(-1)).toMatch(/^chose splits 16: no feasible count reaches 2 waves; the largest gives 128 workgroups \(0\.25 waves\)/);
  });

  it('never picks a count whose workspace passes the range', () => {
    const p = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 128 });
    expect(chooseSplits(spec, p, 1000).splits).toBe(8);
  });
});
