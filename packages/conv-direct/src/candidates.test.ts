import { describe, expect, it } from 'vitest';
import {
  GridMemo,
  aotCandidates,
  aotProbe,
  candidateGrid,
  filterCandidates,
  fittedHeights,
  fittedWidths,
  problemCandidates,
  tileWidthCandidates,
  AOT_CAPABILITIES,
  WGMMA_CK_CHOICES,
  WGMMA_LAYOUTS,
  WGMMA_TILE_CHOICES,
  WGMMA_TILE_K_CHOICES,
} from './candidates.js';
import { kernelName, type Spec } from './spec.js';
import { registerEstimate, spillFilter, spillReason } from './spill.js';
import { validate } from './validate.js';
import { gfx950Spec, problem3x3 } from './test-fixtures.js';
import { WGMMA_MAX_N } from './targets.js';

describe('tileWidthCandidates', () => {
  it('keeps exact divisors, else the least padded width (ties to the smaller)', () => {
    expect(tileWidthCandidates(64, 32)).toEqual([32, 64]);
    expect(tileWidthCandidates(64, 16)).toEqual([16, 32, 64]);
    expect(tileWidthCandidates(48, 16)).toEqual([16, 48]);
    expect(tileWidthCandidates(48, 32)).toEqual([32]);
    expect(tileWidthCandidates(56, 32)).toEqual([32]);
    expect(tileWidthCandidates(56, 16)).toEqual([16]);
    expect(tileWidthCandidates(40, 32)).toEqual([32]);
    expect(tileWidthCandidates(96, 32)).toEqual([32, 96]);
    expect(tileWidthCandidates(160, 32)).toEqual([32, 160]);
    expect(tileWidthCandidates(112, 16)).toEqual([16]);
    expect(tileWidthCandidates(208, 16)).toEqual([16]);
    expect(tileWidthCandidates(7, 16)).toEqual([16]);
    expect(tileWidthCandidates(100, 32)).toEqual([32]);
    expect(tileWidthCandidates(90, 16)).toEqual([16]);
    expect(tileWidthCandidates(90, 32)).toEqual([32]);
    expect(tileWidthCandidates(100, 16)).toEqual([16]);
  });
});

describe('gfx950 AOT grid (upstream test vector)', () => {
  const set = aotCandidates('gfx950', 'bf16');
  const kept = spillFilter(set.valid);

  it('reproduces 5760 raw -> 924 valid -> 658 kept', () => {
    expect(set.raw).toBe(5760);
    expect(set.valid).toHaveLength(924);
    expect(set.duplicates).toBe(0);
    expect(kept.kept).toHaveLength(658);
    expect(kept.dropped).toHaveLength(266);
  });

  it('splits evenly over both strides and both waves_per_eu settings', () => {
    // The stride-2 halo is twice as wide, so fewer stride-2 tiles fit the LDS.
    const s1 = set.valid.filter((s) => s.stride_h === 1).length;
    expect(s1 + set.valid.filter((s) => s.stride_h === 2).length).toBe(924);
    expect(s1).toBeGreaterThan(462);
    expect(set.valid.filter((s) => s.waves_per_eu === 3)).toHaveLength(462);
    expect(new Set(set.valid.map(kernelName)).size).toBe(924);
  });

  it('drops every tile with 256 accumulators and keeps both atoms and strides', () => {
    expect(kept.kept.every((s) => registerEstimate(s).acc < 256)).toBe(true);
    expect(kept.dropped.some((d) => /accumulator file/.test(d.reason))).toBe(true);
    expect(new Set(kept.kept.map((s) => s.atom))).toEqual(new Set(['32x32x16', '16x16x32']));
    expect(new Set(kept.kept.map((s) => s.stride_h))).toEqual(new Set([1, 2]));
  });

  it('flags the production tile t16x64x128 (acc 256) and keeps the parity base', () => {
    const prod = gfx950Spec({ tile_h: 16, tile_w: 64, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 });
    expect(spillReason(prod)).toBe('256 accumulators fill the 256-register accumulator file');
    expect(spillReason(gfx950Spec())).toBeNull();
    const r = registerEstimate(gfx950Spec());
    // acc 64 + prefetch (X ceil(10*34*4/256) = 6 passes x 4 + W 2304/256 = 9 passes x 4) + B ((4-1)+3)*1*4 + A 1*4
    expect([r.acc, r.prefetch, r.bFrags, r.aFrags, r.live, r.budget]).toEqual([64, 60, 24, 4, 152, 409.6]);
  });
});

describe('other AOT grids', () => {
  it('gfx942: 398 valid under its 64 KiB LDS, none predicted to spill', () => {
    const set = aotCandidates('gfx942', 'fp16');
    expect(set.raw).toBe(5760);
    expect(set.valid).toHaveLength(398);
    expect(set.valid.every((s) => s.atom === '32x32x8' || s.atom === '16x16x16')).toBe(true);
    expect(spillFilter(set.valid).kept).toHaveLength(398);
  });

  // Per capability (3x3 s1 and s2): mma.sync 6 widths x 2 tile_h x 4 tile_k x 3 ck x 5 wave layouts,
  // plus wgmma 3 widths x 3 tile_h x 3 tile_k x 2 ck x 7 warpgroup layouts.
  const MMA_SYNC_GRID = 6 * 2 * 4 * 3 * 5;
  const WGMMA_GRID = 3 * 3 * 3 * 3 * 7;

  it('sm_90: two atoms, no AMD knobs, every valid spec validates on its probe', () => {
    const set = aotCandidates('sm_90', 'bf16');
    expect(AOT_CAPABILITIES).toHaveLength(2);
    expect(set.raw).toBe(2 * (MMA_SYNC_GRID + WGMMA_GRID));
    expect(set.valid.length).toBeGreaterThan(0);
    for (const s of set.valid) {
      expect([s.iglp, s.waves_per_eu, s.chiplet_swizzle, s.double_buffer]).toEqual([null, null, false, true]);
      expect(validate(s, aotProbe(s))).toEqual({ ok: true });
    }
    const sync = set.valid.filter((s) => s.atom === 'm16n8k16');
    expect(new Set(sync.map((s) => s.tile_w))).toEqual(new Set([16, 32, 48, 64, 80, 96]));
    expect(sync.every((s) => s.lds_pad === 8)).toBe(true);
    expect(new Set(set.valid.map((s) => s.atom))).toEqual(new Set(['m16n8k16', 'm64nNk16']));
  });

  it('sm_90 wgmma grid: 8x8 m-blocks, N per warpgroup up to 256, lds_pad 0, double buffering, no grouped form', () => {
    expect([WGMMA_TILE_CHOICES, WGMMA_TILE_K_CHOICES, WGMMA_CK_CHOICES]).toEqual([[8, 16, 32], [64, 128, 256], [16, 32, 64]]);
    expect(WGMMA_LAYOUTS.length).toBe(7);
    for (const v of ['dense', 'split_c'] as const) {
      const set = aotCandidates('sm_90', 'bf16', v);
      const raw = AOT_CAPABILITIES.flatMap((capability) => candidateGrid('sm_90', { variant: v, dtype: 'bf16', capability })).filter((s) => s.atom === 'm64nNk16');
      expect(raw).toHaveLength(2 * WGMMA_GRID);
      expect(raw.every((s) => s.lds_pad === 0 && s.double_buffer && s.variant === v)).toBe(true);
      const wg = set.valid.filter((s) => s.atom === 'm64nNk16');
      expect(wg.length).toBeGreaterThan(0);
      for (const s of wg) {
        const n = s.tile_k / s.waves_m;
        const mBlocks = (s.tile_h / 8) * (s.tile_w / 8);
        expect(n % 8 === 0 && n <= WGMMA_MAX_N && mBlocks % s.waves_n === 0).toBe(true);
      }
      expect(new Set(wg.map((s) => s.tile_w))).toEqual(new Set(WGMMA_TILE_CHOICES));
      expect(new Set(wg.map((s) => s.stride_h))).toEqual(new Set([1, 2]));
      // m-blocks per tile 1,2,4 / 2,4,8 / 4,8,16 against waves_n 1,2,1,2,4,4,8: 1*5 + 2*3 + 3*1 = 14
      // (tile, layout) pairs do not split, x 3 tile_k x 3 ck x 2 capabilities.
      const rejected = set.rejected.filter((r) => r.spec.atom === 'm64nNk16');
      expect(rejected.filter((r) => /m-blocks of 8x8 pixels do not split/.test(r.reason))).toHaveLength(14 * 3 * 3 * 2);
      // Everything else the grid offers fails only on resources (registers per thread, register file or LDS).
      for (const r of rejected) expect(r.reason).toMatch(/m-blocks of 8x8 pixels do not split|registers exceed the 65536-register file|registers per thread exceed the 255-register limit|^LDS \d+ bytes exceed/);
    }
    const grouped = AOT_CAPABILITIES.flatMap((capability) => candidateGrid('sm_90', { variant: 'grouped', dtype: 'bf16', capability }));
    expect(grouped.length).toBeGreaterThan(0);
    expect(grouped.some((s) => s.atom === 'm64nNk16')).toBe(false);
  });

  it('offers single and double buffering on request (AMD defaults to one stage)', () => {
    const cap = AOT_CAPABILITIES[0]!;
    expect(candidateGrid('gfx950', { variant: 'dense', dtype: 'bf16', capability: cap }).every((s) => !s.double_buffer)).toBe(true);
    const both = candidateGrid('sm_90', { variant: 'dense', dtype: 'bf16', capability: cap, doubleBuffer: [false, true] });
    expect(both).toHaveLength(2 * (MMA_SYNC_GRID + WGMMA_GRID));
    expect(both.filter((s) => s.double_buffer)).toHaveLength(both.length / 2);
  });

  it('split_c and grouped grids carry their variant and merge degrees', () => {
    const split = aotCandidates('gfx950', 'bf16', 'split_c');
    expect(split.valid).toHaveLength(924);
    expect(split.valid.every((s) => s.variant === 'split_c' && s.group_merge === 1)).toBe(true);
    const grouped = aotCandidates('sm_90', 'bf16', 'grouped');
    expect(new Set(grouped.valid.map((s) => s.group_merge))).toEqual(new Set([1, 2, 4, 8, 16, 32, 64]));
    for (const s of grouped.valid.slice(0, 50)) expect(validate(s, aotProbe(s))).toEqual({ ok: true });
    expect(aotProbe(grouped.valid[0]!)).toMatchObject({ groups: 64 });
  });
});

describe('filterCandidates', () => {
  it('de-duplicates by kernel name and records rejections with reasons', () => {
    const a = gfx950Spec();
    const set = filterCandidates([a, { ...a }, gfx950Spec({ tile_w: 48 })]);
    expect(set.raw).toBe(3);
    expect(set.valid).toEqual([a]);
    expect(set.duplicates).toBe(1);
    expect(set.rejected).toEqual([{ spec: gfx950Spec({ tile_w: 48 }), reason: "tile_w 48 is not a multiple of the atom's N 32 (32x32x16)" }]);
  });

  it('grid order is deterministic', () => {
    const a = candidateGrid('gfx950', { variant: 'dense', dtype: 'bf16', capability: AOT_CAPABILITIES[0]! });
    const b = candidateGrid('gfx950', { variant: 'dense', dtype: 'bf16', capability: AOT_CAPABILITIES[0]! });
    expect(a.map(kernelName)).toEqual(b.map(kernelName));
  });
});

describe('problemCandidates', () => {
  it('fits widths to Wo and validates against the problem', () => {
    const p = problem3x3({ N: 2, H: 16, W: 48, C: 64, K: 128 });
    const set = problemCandidates(p, 'gfx950');
    expect(set.valid.length).toBeGreaterThan(0);
    expect(new Set(set.valid.map((s) => s.tile_w))).toEqual(new Set([16, 48, 32]));
    for (const s of set.valid) expect(validate(s, p)).toEqual({ ok: true });
  });

  it('sm_90 adds 8-wide tiles where 16-wide ones pad more (small and odd maps)', () => {
    expect(fittedWidths(7, 'm16n8k16')).toEqual([16, 8]);
    expect(fittedWidths(8, 'm16n8k16')).toEqual([16, 8]);
    expect(fittedWidths(56, 'm16n8k16')).toEqual([16, 8]);
    expect(fittedWidths(14, 'm16n8k16')).toEqual([16]);
    expect(fittedWidths(64, 'm16n8k16')).toEqual([16, 32, 64]);
    expect(fittedWidths(20, '16x16x32')).toEqual(tileWidthCandidates(20, 16));
    const set = problemCandidates(problem3x3({ N: 1, H: 7, W: 7, C: 512, K: 512 }), 'sm_90');
    expect(new Set(set.valid.filter((s) => s.atom === 'm16n8k16').map((s) => s.tile_w))).toEqual(new Set([16, 8]));
    // The wgmma grid is not fitted to Wo: its widths are whole m-blocks, 8 to 32 (the score weighs the waste);
    // its whole-map tiles (whole-map.ts) are the map itself.
    expect(new Set(set.valid.filter((s) => s.atom === 'm64nNk16' && !s.whole_map).map((s) => s.tile_w))).toEqual(new Set(WGMMA_TILE_CHOICES));
    expect(new Set(set.valid.filter((s) => s.whole_map).map((s) => s.tile_w))).toEqual(new Set([7]));
  });

  it('picks the grouped grid for grouped problems and filters merges that do not fit', () => {
    const p = problem3x3({ N: 1, H: 14, W: 14, C: 128, K: 128, groups: 32 });
    const set = problemCandidates(p, 'sm_90');
    expect(set.valid.length).toBeGreaterThan(0);
    expect(set.valid.every((s) => s.variant === 'grouped' && 32 % s.group_merge === 0 && s.group_merge >= 4)).toBe(true);
  });

  it('judges a batch past the buffer range on its largest chunk', () => {
    const p = problem3x3({ N: 1000, H: 128, W: 128, C: 128, K: 128 });
    expect(validate(gfx950Spec(), p).ok).toBe(false);
    expect(problemCandidates(p, 'gfx950').valid.length).toBeGreaterThan(0);
  });

  it('rejects everything, with the problem reason, for groups 0', () => {
    const set = problemCandidates(problem3x3({ groups: 0 }), 'gfx950', { variant: 'grouped' });
    expect(set.valid).toHaveLength(0);
    expect(set.rejected.some((r) => r.reason === 'problem.groups must be >= 1 (got 0)')).toBe(true);
  });
});

describe('problemCandidates: tile_n variants', () => {
  const sm8 = problem3x3({ N: 4, H: 8, W: 8, C: 1280, K: 1280 }); // the suite's sm_8x8_1280
  // Multi-image m-block tiles (whole-map tiles have their own tests, src/whole-map.test.ts).
  const shapes = (specs: readonly { tile_h: number; tile_w: number; tile_n: number; atom: string; whole_map?: true }[]) =>
    new Set(specs.filter((s) => s.tile_n > 1 && !s.whole_map).map((s) => `${s.atom} ${s.tile_h}x${s.tile_w} n${s.tile_n}`));
  // The whole-map and weight-ring copies have tests of their own (whole-map.test.ts, kernel/weight-ring.test.ts).
  const mBlock = (specs: readonly Spec[]) => specs.filter((s) => !s.whole_map && !s.weight_ring);

  it('adds tile_n 2 and 4 of the tightest covering tile for dense and split_c (sm_8x8_1280: t8x8, mma.sync and wgmma)', () => {
    for (const variant of ['dense', 'split_c'] as const) {
      const set = { valid: mBlock(problemCandidates(sm8, 'sm_90', { variant }).valid) };
      const one = { valid: mBlock(problemCandidates(sm8, 'sm_90', { variant, tileN: [] }).valid) };
      expect(shapes(set.valid)).toEqual(new Set(['m16n8k16 8x8 n2', 'm16n8k16 8x8 n4', 'm64nNk16 8x8 n2', 'm64nNk16 8x8 n4']));
      // Every one-image candidate is still there, in the same order, before the multi-image ones.
      expect(set.valid.slice(0, one.valid.length).map(kernelName)).toEqual(one.valid.map(kernelName));
      expect(set.valid.length - one.valid.length).toBe(77 + 45); // mma.sync + wgmma (ck 16, 32, 64)
      for (const s of set.valid) expect(validate(s, sm8)).toEqual({ ok: true });
    }
    // gfx950: both MFMA atoms' tightest widths (16 for 16x16x32, 32 for 32x32x16).
    expect(shapes(problemCandidates(sm8, 'gfx950', { variant: 'split_c' }).valid)).toEqual(
      new Set(['16x16x32 8x16 n2', '16x16x32 8x16 n4', '32x32x16 8x32 n2', '32x32x16 8x32 n4']),
    );
  });

  it('adds none for one image, past-N degrees, grouped problems, or maps larger than a tile', () => {
    expect(shapes(problemCandidates({ ...sm8, N: 1 }, 'sm_90').valid).size).toBe(0);
    expect(shapes(problemCandidates({ ...sm8, N: 3 }, 'sm_90').valid)).toEqual(new Set(['m16n8k16 8x8 n2', 'm64nNk16 8x8 n2']));
    expect(shapes(problemCandidates(problem3x3({ N: 4, H: 14, W: 14, C: 128, K: 128, groups: 32 }), 'sm_90').valid).size).toBe(0);
    expect(shapes(problemCandidates(problem3x3({ N: 4, H: 20, W: 20, C: 256, K: 256 }), 'sm_90').valid).size).toBe(0);
    // 14x14 fits the 16-row grid tile (multi-image tiles keep the grid heights) and the 16-wide one.
    expect(shapes(problemCandidates(problem3x3({ N: 4, H: 14, W: 14, C: 256, K: 256 }), 'sm_90').valid)).toEqual(new Set(['m16n8k16 16x16 n2', 'm16n8k16 16x16 n4', 'm64nNk16 16x16 n2']));
  });
});

describe('fittedHeights', () => {
  it('adds the largest even height that pads less when neither 8 nor 16 divides Ho', () => {
    expect(fittedHeights(14)).toEqual([8, 16, 14]);
    expect(fittedHeights(28)).toEqual([8, 16, 14]);
    expect(fittedHeights(10)).toEqual([8, 16, 10]);
    expect(fittedHeights(56)).toEqual([8, 16]); // 8 divides it
    expect(fittedHeights(7)).toEqual([8, 16]); // no even height pads less than 8
    expect(fittedHeights(64)).toEqual([8, 16]);
  });

  it('problem candidates of a 14x14 map include 14-row mma.sync tiles (2 rows less MMA work and halo than 16); the AOT grid has none', () => {
    const p14 = problem3x3({ N: 1, H: 14, W: 14, C: 1024, K: 1024 });
    const heights = (specs: readonly { tile_h: number; atom: string }[], atom: string) => new Set(specs.filter((s) => s.atom === atom).map((s) => s.tile_h));
    for (const variant of ['dense', 'split_c'] as const) {
      const set = problemCandidates(p14, 'sm_90', { variant }).valid;
      expect(heights(set, 'm16n8k16').has(14)).toBe(true);
      expect(heights(set.filter((s) => !s.whole_map), 'm64nNk16').has(14)).toBe(false); // 8x8 m-blocks
      for (const s of set.filter((x) => x.tile_h === 14)) expect(validate(s, p14)).toEqual({ ok: true });
    }
    expect(heights(aotCandidates('sm_90', 'bf16').valid, 'm16n8k16')).toEqual(new Set([8, 16]));
  });
});

describe('GridMemo', () => {
  // Two layers of one geometry class (a 1x1 layer at N 1 and N 32, another 1x1 layer of other
  // channels) and a 3x3 layer with a channel tail, on every target.
  const base = problem3x3({ N: 1, R: 1, S: 1, padH: 0, padW: 0, H: 14, W: 14, C: 256, K: 512 });
  const problems = [base, { ...base, N: 32 }, { ...base, C: 128, K: 96 }, problem3x3({ N: 1, C: 40, K: 24, H: 28, W: 28 })];
  const summary = (set: ReturnType<typeof problemCandidates>) => ({
    raw: set.raw,
    duplicates: set.duplicates,
    valid: set.valid.map(kernelName),
    rejected: set.rejected.map((r) => [kernelName(r.spec), r.reason]),
  });

  it('gives every problem the candidates, rejections and reasons a fresh grid gives, sharing the grids of one geometry', () => {
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const) {
      const grids = new GridMemo();
      for (const p of problems) {
        for (const variant of ['pointwise', 'dense', 'split_c'] as const) {
          if (variant === 'pointwise' && p.R !== 1) continue;
          expect(summary(problemCandidates(p, target, { variant, grids })), `${target} ${variant}`).toEqual(summary(problemCandidates(p, target, { variant })));
        }
      }
      // The N = 1 and N = 32 layers and the other 1x1 layer share the pointwise grid: its spec objects.
      const [a, b, c] = problems.slice(0, 3).map((p) => problemCandidates(p, target, { variant: 'pointwise', grids }).valid[0]);
      expect(b).toBe(a);
      expect(c).toBe(a);
      expect(Object.isFrozen(a)).toBe(true);
    }
  });
});
