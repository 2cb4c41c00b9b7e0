import { describe, expect, it } from 'vitest';
import { problemCandidates } from './candidates.js';
import { depthwiseGeometry, depthwiseLdsPad, depthwiseReadConflicts } from './depthwise-geometry.js';
import { depthwiseGrid, depthwiseRegisterBudget, depthwiseStagingEfficiency, depthwiseWidths, isDepthwiseProblem } from './depthwise.js';
import { plan } from './plan.js';
import { residency } from './residency.js';
import { canonicalSpecJson, kernelName, specFromJson } from './spec.js';
import { spillReason } from './spill.js';
import { TARGETS } from './targets.js';
import { depthwiseSpec, gfx950Spec, problem3x3 } from './test-fixtures.js';
import { validate } from './validate.js';
import type { Problem } from './problem.js';

const dw = (o: Partial<Problem> = {}): Problem => problem3x3({ N: 8, H: 56, W: 56, C: 96, K: 96, groups: 96, ...o });
const reasonOf = (spec: unknown, problem?: unknown): string => {
  const v = validate(spec, problem);
  return v.ok ? 'ok' : v.reason;
};

describe('depthwise problems and specs', () => {
  it('recognises groups = C with multipliers 1, 2, 4 only', () => {
    expect(isDepthwiseProblem(dw())).toBe(true);
    expect(isDepthwiseProblem(dw({ K: 384 }))).toBe(true);
    expect(isDepthwiseProblem(dw({ K: 288 }))).toBe(false);
    expect(isDepthwiseProblem(dw({ groups: 32 }))).toBe(false);
    expect(isDepthwiseProblem(problem3x3({ C: 1, K: 1, groups: 1 }))).toBe(false);
  });

  it('round-trips through the strict schema and names every knob', () => {
    const s = depthwiseSpec({ target: 'sm_90' });
    expect(specFromJson(canonicalSpecJson(s))).toEqual({ ok: true, spec: s });
    expect(kernelName(s)).toBe('rocke_direct_depthwise_sm_90_bf16_r3s3_u1v1_p1q1_t2x8x16_ck8_w4x1_afma_lp0_cs0x1x64_wgm8');
  });

  it('rejects specs with reasons', () => {
    expect(reasonOf(depthwiseSpec({ atom: '32x32x16' }))).toBe('the depthwise kernel uses no MMA: its atom is fma (got 32x32x16)');
    expect(reasonOf(gfx950Spec({ atom: 'fma' }))).toBe('atom fma is not available on gfx950 (it has 32x32x16, 16x16x32)');
    expect(reasonOf(depthwiseSpec({ ck: 16 }))).toBe('ck 16: depthwise ck is 8 / channel multiplier (8, 4 or 2 for multipliers 1, 2, 4)');
    expect(reasonOf(depthwiseSpec({ tile_k: 12 }))).toBe('tile_k 12 is not a multiple of 8 (one 16-byte output vector per thread)');
    expect(reasonOf(depthwiseSpec({ ck: 2, tile_k: 16 }))).toBe('tile_k 16 / multiplier 4 = 4 input channels are not a multiple of 8 (16-byte staging)');
    expect(reasonOf(depthwiseSpec({ waves_m: 3 }))).toBe('tile_w 8 is not a multiple of waves_m 3 (depthwise: output columns per thread)');
    expect(reasonOf(depthwiseSpec({ R: 9, S: 9 }))).toBe('filter 9x9: the depthwise kernel takes sides up to 7');
    expect(reasonOf(depthwiseSpec({ double_buffer: true }))).toBe('depthwise specs need double_buffer false (one stage: the tile is the whole reduction)');
    expect(reasonOf(depthwiseSpec({ target: 'sm_90', chiplet_swizzle: true }))).toBe('sm_90 has no chiplets (XCDs); chiplet_swizzle must be false');
    expect(reasonOf(depthwiseSpec({ tile_h: 64, tile_w: 64, tile_k: 64, waves_m: 1 }))).toMatch(/^32768 threads per workgroup .* exceed 1024 on gfx950$/);
  });

  it('rejects problems it cannot serve, with reasons', () => {
    const s = depthwiseSpec();
    expect(reasonOf(s, dw())).toBe('ok');
    expect(reasonOf(s, dw({ groups: 48 }))).toBe('the depthwise variant needs groups == C (got groups 48, C 96)');
    expect(reasonOf(s, dw({ K: 192 }))).toBe("channel multiplier K/C = 192/96 does not match the spec's 1 (ck 8 = 8 / multiplier)");
    expect(reasonOf(depthwiseSpec({ ck: 4 }), dw({ K: 192 }))).toBe('ok');
    expect(reasonOf(s, dw({ dilationH: 2 }))).toBe("problem dilation 2x1 does not match the spec's baked 1x1");
    expect(reasonOf(depthwiseSpec({ dilation_h: 2 }), dw({ dilationH: 2 }))).toBe('depthwise specs need dilation 1x1');
  });

  it('derives threads, LDS and registers from the tile', () => {
    const g = depthwiseGeometry(depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, lds_pad: 8 }));
    expect([g.threads, g.ldsInH, g.ldsInW, g.pixelStride, g.xVectors, g.xPasses, g.accPerLane]).toEqual([128, 10, 18, 40, 720, 6, 32]);
    expect(g.ldsBytes).toBe(10 * 18 * 40 * 2 + 9 * 32 * 2);
    // Multiplier 4: 64 output channels read 16 staged input channels.
    expect(depthwiseGeometry(depthwiseSpec({ ck: 2, tile_k: 64 })).inChannels).toBe(16);
  });

  it('picks the LDS pad that removes the tap loop read conflicts', () => {
    // 32 channels (64 bytes) per pixel, 4 columns per thread: lanes 4 apart read 256 bytes apart, the same banks.
    const fields = { ...depthwiseSpec({ tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4 }), lds_pad: 0 };
    expect(depthwiseReadConflicts(fields)).toBeGreaterThan(1);
    const pad = depthwiseLdsPad(fields);
    expect(pad).toBe(8);
    expect(depthwiseReadConflicts({ ...fields, lds_pad: pad })).toBe(1);
  });
});

describe('depthwise candidates and plans', () => {
  it('offers valid, non-spilling candidates of whole waves for every target, multiplier and filter', () => {
    for (const target of ['gfx950', 'gfx942', 'sm_90'] as const)
      for (const [m, R] of [[1, 3], [2, 5], [4, 7]] as const) {
        const p = dw({ K: 96 * m, R, S: R, padH: (R - 1) / 2, padW: (R - 1) / 2 });
        const set = problemCandidates(p, target);
        expect(set.valid.length).toBeGreaterThan(0);
        for (const s of set.valid) {
          expect(s.variant).toBe('depthwise');
          expect(s.ck).toBe(8 / m);
          expect(spillReason(s)).toBeNull();
          expect(depthwiseGeometry(s).threads % TARGETS[target].waveSize).toBe(0);
          expect(residency(s).perUnit).toBeGreaterThanOrEqual(2);
        }
      }
  });

  it('budgets registers so that two workgroups and 256 threads stay resident', () => {
    expect([64, 128, 256].map((n) => depthwiseRegisterBudget('sm_90', n))).toEqual([255, 255, 128]);
    // gfx950: 4 waves put one wave on each SIMD, 8 waves two: half of a 512-register file per workgroup.
    expect([256, 512].map((n) => depthwiseRegisterBudget('gfx950', n))).toEqual([256, 128]);
  });

  it('fits tile widths to Wo and ranks tiles by staged halo', () => {
    expect(depthwiseWidths(56)).toEqual([4, 8, 28]);
    expect(depthwiseWidths(14)).toEqual([4, 14]);
    expect(depthwiseWidths(null)).toEqual([8, 16, 32]);
    const specs = depthwiseGrid('sm_90', { dtype: 'bf16', capability: { R: 3, S: 3, stride_h: 1, stride_w: 1, pad_h: 1, pad_w: 1, dilation_h: 1, dilation_w: 1 }, wo: 56, ho: 56 });
    const eff = (h: number, w: number) => depthwiseStagingEfficiency(specs.find((s) => s.tile_h === h && s.tile_w === w)!);
    expect(eff(8, 28)).toBeGreaterThan(eff(2, 28));
  });

  it('plans a launch: grid over images, spatial tiles and channel tiles; block and LDS from the spec', () => {
    const s = depthwiseSpec({ target: 'sm_90', tile_h: 8, tile_w: 16, tile_k: 32, waves_m: 4, lds_pad: 8 });
    const p = plan(s, dw(), 'sm_90');
    expect(p.variant).toBe('depthwise');
    expect(p.launches).toHaveLength(1);
    const l = p.launches[0]!;
    expect(l.grid).toEqual([8 * 7 * 4 * 3, 1, 1]);
    expect(l.block).toEqual([128, 1, 1]);
    expect(l.sharedBytes).toBe(depthwiseGeometry(s).ldsBytes);
    expect(l.kernargs).toHaveLength(20);
  });
});
