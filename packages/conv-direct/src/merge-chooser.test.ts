import { describe, expect, it } from 'vitest';
import { chooseGroupMerge, mergeRow, rankGroupedSpecs } from './merge-chooser.js';
import { PlanError } from './plan-error.js';
import { residency } from './residency.js';
import { launchGrid } from './grid.js';
import { problem3x3, sm90Spec } from './test-fixtures.js';

const grouped = sm90Spec({ variant: 'grouped', tile_k: 32, waves_m: 2, ck: 16, group_merge: 1 });

describe('chooseGroupMerge', () => {
  it('cpg = kpg = 4 (ResNeXt-like): the smallest merge that fills ck and tile_k', () => {
    const p = problem3x3({ N: 16, H: 56, W: 56, C: 128, K: 128, groups: 32 });
    const c = chooseGroupMerge(grouped, p);
    expect(c.groupMerge).toBe(8);
    expect(c.spec.group_merge).toBe(8);
    const reasons = Object.fromEntries(c.rows.map((r) => [r.groupMerge, r.reason]));
    expect(reasons[1]).toBe('group_merge 1 x cpg 4 = 4 merged input channels is not a multiple of ck 16');
    expect(reasons[2]).toBe('group_merge 2 x cpg 4 = 8 merged input channels is not a multiple of ck 16');
    expect(reasons[4]).toBe('group_merge 4 x kpg 4 = 16 merged output channels do not fill tile_k 32');
    // Only the degrees that divide the groups are offered by default; a given one that does not is explained.
    expect(reasons[64]).toBeUndefined();
    expect(chooseGroupMerge(grouped, p, [8, 64]).rows.find((r) => r.groupMerge === 64)!.reason).toBe('group_merge 64 does not divide groups 32');
    const r8 = c.rows.find((r) => r.groupMerge === 8)!;
    const r16 = c.rows.find((r) => r.groupMerge === 16)!;
    expect([r8.kUtilisation, r8.nUtilisation, r8.diagonalShare]).toEqual([1, 1, 0.125]);
    // Same grid at every feasible degree (K/tile_k channel tiles), so the zero blocks decide: 16 costs twice 8.
    expect(r16.workgroups).toBe(r8.workgroups);
    expect(r16.cost).toBeCloseTo(2 * r8.cost, 12);
    const slots = residency({ ...grouped, group_merge: 8 }).slots;
    const wgs = launchGrid({ ...grouped, group_merge: 8 }, p).workgroups;
    expect(r8.workgroups).toBe(wgs);
    expect(r8.cost).toBeCloseTo(8 / (wgs / (Math.ceil(wgs / slots) * slots)), 12);
    // The choice is the cost model's: 8 has the lowest predicted time of the feasible degrees.
    expect(r16.predictedUs).toBeGreaterThan(r8.predictedUs);
    expect(c.explain.at(-1)).toBe(`chose group_merge 8 (lowest predicted time ${r8.predictedUs.toFixed(2)} us; ties go to the smaller degree)`);
  });

  it('cpg = kpg = 16 with a 16-row tile runs unmerged', () => {
    const p = problem3x3({ N: 8, H: 28, W: 28, C: 512, K: 512, groups: 32 });
    expect(chooseGroupMerge({ ...grouped, tile_k: 16, waves_m: 1 }, p).groupMerge).toBe(1);
  });

  it('charges partial channel tiles through n utilisation', () => {
    const p = problem3x3({ N: 1, H: 8, W: 32, C: 192, K: 192, groups: 4 }); // cpg = kpg = 48
    const r1 = mergeRow(grouped, p, 1);
    expect(r1.reason).toBeNull();
    expect(r1.nUtilisation).toBe(48 / 64);
    expect(mergeRow(grouped, p, 2).nUtilisation).toBe(1);
    expect(r1.workgroups).toBe(1 * 1 * 1 * 4 * 2);
  });

  it('depthwise-like cpg = 1 needs a 32-way merge with this tile', () => {
    const p = problem3x3({ N: 4, H: 32, W: 32, C: 64, K: 64, groups: 64 });
    const c = chooseGroupMerge(grouped, p);
    expect(c.groupMerge).toBe(32);
    expect(c.rows.find((r) => r.groupMerge === 16)!.reason).toBe('group_merge 16 x kpg 1 = 16 merged output channels do not fill tile_k 32');
  });

  it('explains every degree when none fits, and refuses non-grouped specs and bad groups', () => {
    const p = problem3x3({ N: 1, H: 8, W: 8, C: 6, K: 6, groups: 3 });
    expect(() => chooseGroupMerge(grouped, p)).toThrow(PlanError);
    expect(() => chooseGroupMerge(grouped, p)).toThrow(/no merge degree fits groups 3 with this tile:\ngm 1: infeasible \(group_merge 1 x cpg 2 = 2 merged input channels is not a multiple of ck 16\)/);
    expect(() => chooseGroupMerge(sm90Spec(), p)).toThrow('merge degrees apply to grouped specs, not dense');
    expect(() => chooseGroupMerge(grouped, problem3x3({ groups: 0 }))).toThrow('cannot plan a merge degree: problem.groups must be >= 1 (got 0)');
    expect(() => chooseGroupMerge(grouped, problem3x3({ groups: -4 }))).toThrow('cannot plan a merge degree: problem.groups must be >= 1 (got -4)');
  });

  it('only offers the degrees it is given', () => {
    const p = problem3x3({ N: 16, H: 56, W: 56, C: 128, K: 128, groups: 32 });
    expect(chooseGroupMerge(grouped, p, [16, 32]).groupMerge).toBe(16);
  });
});

describe('rankGroupedSpecs', () => {
  it('orders baked-degree specs by cost and drops infeasible and non-grouped ones', () => {
    const p = problem3x3({ N: 16, H: 56, W: 56, C: 128, K: 128, groups: 32 });
    const specs = [16, 2, 8, 32].map((gm) => ({ ...grouped, group_merge: gm }));
    const ranked = rankGroupedSpecs([...specs, sm90Spec()], p);
    expect(ranked.map((r) => r.spec.group_merge)).toEqual([8, 16, 32]);
    expect(ranked[0]!.row).toEqual(mergeRow(grouped, p, 8));
    expect(rankGroupedSpecs(specs, problem3x3({ groups: 0 }))).toEqual([]);
  });
});
