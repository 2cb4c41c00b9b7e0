import { describe, expect, it } from 'vitest';
import { chooseSplits, splitOptions } from './split-chooser.js';
import { estimateCost } from './cost-model.js';
import { PlanError } from './plan-error.js';
import { residency } from './residency.js';
import { gfx950Spec, problem3x3, sm90Spec } from './test-fixtures.js';

// gfx950 parity base as split_c: 2 resident workgroups per CU x 256 CUs = 512 slots; 2 waves = 1024.
const spec = gfx950Spec({ variant: 'split_c' });

describe('splitOptions', () => {
  it('lists split counts of whole ck chunks per slice, uneven ones included, the smallest count per longest slice', () => {
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 }); // 32 chunks of ck 32
    const opts = splitOptions(spec, p);
    // 9 and 10 slices leave a 4-chunk slice as 8 does; 12 to 15 three chunks as 11 does; 17 to 31 two as 16.
    expect(opts.map((o) => o.splits)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32]);
    expect(opts.map((o) => o.channelsPerSplit)).toEqual([32, 16, 11, 8, 7, 6, 5, 4, 3, 2, 1].map((chunks) => 32 * chunks));
    // 1 w tile x 2 h tiles x 16 k tiles = 32 workgroups per split
    expect(opts.map((o) => o.workgroups)).toEqual(opts.map((o) => 32 * o.splits));
    expect(opts.at(-1)!.workspaceBytes).toBe(4 * 32 * 14 * 14 * 1024);
  });

  it('leaves out counts whose workspace passes the buffer range', () => {
    const p = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 128 }); // 2^27 bytes of ws per split
    expect(splitOptions(spec, p).map((o) => o.splits)).toEqual([1, 2, 3, 4, 8]);
  });

  it('counts the splits of a channel-tail spec in c_tail runs, not whole ck chunks', () => {
    // C 72 with ck 32: no whole-chunk split exists, but 72 = 9 runs of 8: 2 slices of 5 and 4 runs, 3 of 3, 5 of 2 or 1, 9 of 1.
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 72, K: 64 });
    const opts = splitOptions(gfx950Spec({ variant: 'split_c', c_tail: 8 }), p);
    expect(opts.map((o) => o.splits)).toEqual([1, 2, 3, 5, 9]);
    expect(opts.map((o) => o.channelsPerSplit)).toEqual([72, 40, 24, 16, 8]);
  });

  it('is for split_c specs that can run the problem', () => {
    expect(() => splitOptions(gfx950Spec(), problem3x3())).toThrow(new PlanError('split counts apply to split_c specs, not dense'));
    expect(() => splitOptions(spec, problem3x3({ C: 48 }))).toThrow('spec cannot run this problem: C 48 is not a multiple of ck 32');
  });
});

describe('chooseSplits with a wave target', () => {
  it('takes the smallest count reaching the waves asked for', () => {
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });
    const c = chooseSplits(spec, p, 2);
    expect([c.splits, c.workgroups, c.waves]).toEqual([32, 1024, 2]);
    expect(c.explain[0]).toBe('residency: 2 workgroup(s) per CU (limited by shared; threads 8, shared 2, registers 3) x 256 = 512 slots');
    expect(c.explain).toContain('unsplit grid: 32 workgroups');
    expect(c.explain.at(-1)).toBe('chose splits 32: the smallest reaching 2 waves (1024 workgroups) (1024 workgroups, 2.00 waves, 32 channels in the longest split, workspace 25690112 bytes)');
    expect(chooseSplits(spec, p, 1).splits).toBe(16);
  });

  it('falls back to the largest feasible count when none reaches the target', () => {
    const p = problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 }); // 8 workgroups unsplit, at most 16 splits
    const c = chooseSplits(spec, p, 2);
    expect([c.splits, c.workgroups]).toEqual([16, 128]);
    expect(c.explain.at(-1)).toMatch(/^chose splits 16: no feasible count reaches 2 waves; the largest gives the most fill \(128 workgroups, 0\.25 waves/);
  });

  it('never picks a count whose workspace passes the range', () => {
    const p = problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 128 });
    expect(chooseSplits(spec, p, 1000).splits).toBe(8);
  });

  it('rejects a wave target that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => chooseSplits(spec, problem3x3(), bad)).toThrow(new PlanError(`minWaves must be a positive number, got ${bad}`));
    }
  });
});

describe('chooseSplits by the cost model (the default)', () => {
  const h200 = sm90Spec({ variant: 'split_c', tile_h: 16, tile_w: 16, tile_k: 32, ck: 64, waves_m: 1, waves_n: 4, double_buffer: true });
  const small = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });

  it('takes the feasible count with the lowest predicted time, and lists the nearest ones', () => {
    for (const [s, p] of [[h200, small], [spec, small], [spec, problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 })]] as const) {
      const c = chooseSplits(s, p);
      const times = c.options.map((o) => estimateCost(s, p, o.splits).us);
      expect(estimateCost(s, p, c.splits).us).toBe(Math.min(...times));
      expect(c.explain.at(-1)).toMatch(new RegExp(`^chose splits ${c.splits}: the lowest predicted time of the cost model, [\\d.]+ us \\(${c.splits}: `));
    }
  });

  it('splits a small map that leaves most of the machine idle, and keeps 1 when the unsplit grid fills it', () => {
    expect(chooseSplits(h200, small).splits).toBeGreaterThan(1);
    expect(chooseSplits(spec, problem3x3({ N: 64, H: 64, W: 64, C: 256, K: 256 })).splits).toBe(1);
  });

  it('does not slice a loop into one-chunk pieces when the workspace traffic outweighs the fill', () => {
    // 7x7, t8x8x32 ck16 on sm_90: 16 workgroups per split; the most slices (32) gives 16 channels each.
    const thin = sm90Spec({ variant: 'split_c', tile_h: 8, tile_w: 8, tile_k: 32, ck: 16, waves_m: 2, waves_n: 2, double_buffer: true });
    const c = chooseSplits(thin, problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 }));
    expect(c.splits).toBeLessThan(32);
  });
});
