import { describe, expect, it } from 'vitest';
import { chooseSplits, defaultSplitWaves, MEASURED_SPLIT_RULES, splitOptions, TARGET_WAVES } from './split-chooser.js';
import { PlanError } from './plan-error.js';
import { residency } from './residency.js';
import { gfx950Spec, problem3x3, sm90Spec } from './test-fixtures.js';

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

  it('counts the splits of a channel-tail spec in c_tail runs, not whole ck chunks', () => {
    // C 72 with ck 32: no whole-chunk split exists, but 72 = 9 runs of 8, so 1 and 3 (24 = 3 runs) and 9 do.
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 72, K: 64 });
    const opts = splitOptions(gfx950Spec({ variant: 'split_c', c_tail: 8 }), p);
    expect(opts.map((o) => o.splits)).toEqual([1, 3, 9]);
    expect(opts.map((o) => o.channelsPerSplit)).toEqual([72, 24, 8]);
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

describe('chooseSplits on sm_90 (measured wave target)', () => {
  // The H200 winner on sm_14x14_1024: 1 block per SM (shared memory) x 132 SMs, 32 workgroups per split.
  const h200 = sm90Spec({ variant: 'split_c', tile_h: 16, tile_w: 16, tile_k: 32, ck: 64, waves_m: 1, waves_n: 4, double_buffer: true });
  const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });

  it('aims for half a wave of resident slots by default, and only on sm_90', () => {
    expect(defaultSplitWaves('sm_90')).toBe(0.5);
    expect(MEASURED_SPLIT_RULES.sm_90).toEqual({ waves: 0.5, minChannelsPerSplit: 32 });
    expect(defaultSplitWaves('gfx950')).toBe(TARGET_WAVES);
    expect(defaultSplitWaves('gfx942')).toBe(TARGET_WAVES);
  });

  it('picks the count the H200 sweep measured fastest (4 there, where 2 waves gives 16)', () => {
    expect(residency(h200).slots).toBe(132);
    const c = chooseSplits(h200, p);
    expect([c.splits, c.workgroups]).toEqual([4, 128]);
    expect(c.explain[0]).toMatch(/x 132 = 132 slots; 0\.5 waves need 66 workgroups \(sm_90's measured split target\)$/);
    expect(c.explain.at(-1)).toMatch(/^chose splits 4: the smallest reaching 0\.5 waves \(128 workgroups, 0\.97 waves\)/);
    // The two-wave rule is still there when asked for.
    expect(chooseSplits(h200, p, 2).splits).toBe(16);
  });

  it('keeps at least 32 channels per split where fill alone would slice thinner (7x7, ck16)', () => {
    // t8x8x32 ck16: 8 per SM by shared memory = 1056 slots, 16 workgroups per split; half a wave
    // would take 32 slices of 16 channels, the floor stops at 16 slices of 32.
    const thin = sm90Spec({ variant: 'split_c', tile_h: 8, tile_w: 8, tile_k: 32, ck: 16, waves_m: 2, waves_n: 2, double_buffer: true });
    const small = problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 });
    expect(residency(thin).slots).toBe(1056);
    const c = chooseSplits(thin, small);
    expect([c.splits, c.channelsPerSplit, c.workgroups]).toEqual([16, 32, 256]);
    expect(c.explain.at(-1)).toBe(
      "chose splits 16: 32 would give the most fill but leave 16 channels per split, under sm_90's measured floor of 32; " +
        '16 gives 256 workgroups (0.24 waves), 32 channels per split, workspace 1605632 bytes',
    );
    // gfx950 has no measured rule: no floor, the 16-channel slices stay.
    const amd = gfx950Spec({ variant: 'split_c', ck: 16 });
    expect(chooseSplits(amd, small).channelsPerSplit).toBe(16);
  });

  it('rejects a wave target that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => chooseSplits(h200, p, bad)).toThrow(new PlanError(`minWaves must be a positive number, got ${bad}`));
    }
  });
});
