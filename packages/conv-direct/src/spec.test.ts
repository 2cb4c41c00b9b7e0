import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalSpecJson, kernelName, parseSpec, specFromJson, specGeometry, type Spec } from './spec.js';
import { gfx950Spec, sm90Spec } from './test-fixtures.js';
import { ATOMS } from './targets.js';

describe('spec schema', () => {
  it('round-trips through canonical JSON exactly', () => {
    const spec = gfx950Spec({ waves_per_eu: 3, iglp: null });
    const text = canonicalSpecJson(spec);
    expect(text.startsWith('{"R":3,"S":3,"atom":"32x32x16"')).toBe(true);
    expect(specFromJson(text)).toEqual({ ok: true, spec });
    expect(canonicalSpecJson({ ...spec })).toBe(text);
  });

  it('treats missing and unknown fields as errors, never defaults', () => {
    const { lds_pad: _drop, ...missing } = gfx950Spec();
    expect(parseSpec(missing)).toMatchObject({ ok: false, reason: expect.stringMatching(/^lds_pad:/) });
    const { iglp: _i, ...noIglp } = gfx950Spec();
    expect(parseSpec(noIglp)).toMatchObject({ ok: false, reason: expect.stringMatching(/^iglp:/) });
    expect(parseSpec({ ...gfx950Spec(), splits: 4 })).toMatchObject({ ok: false });
    expect(parseSpec({ ...gfx950Spec(), atom: '8x8x4' })).toMatchObject({ ok: false, reason: expect.stringMatching(/^atom:/) });
    expect(specFromJson('{not json')).toMatchObject({ ok: false, reason: expect.stringMatching(/does not parse/) });
  });
});

describe('kernelName', () => {
  it('spells every knob', () => {
    expect(kernelName(gfx950Spec())).toBe('rocke_direct_dense_gfx950_bf16_r3s3_u1v1_p1q1_t8x32x64_ck32_w2x2_a32x32x16_lp8_cs1x8x64_wgm8_iglp0');
    expect(kernelName(gfx950Spec({ variant: 'grouped', group_merge: 4, double_buffer: true, iglp: null, waves_per_eu: 3, dtype: 'fp16' }))).toBe(
      'rocke_direct_grouped_gfx950_fp16_r3s3_u1v1_p1q1_t8x32x64_ck32_w2x2_a32x32x16_lp8_db_cs1x8x64_wgm8_we3_gm4',
    );
    expect(kernelName(sm90Spec())).toMatch(/^rocke_direct_dense_sm_90_bf16_.*_am16n8k16_lp8_cs0x1x64_wgm8$/);
    expect(kernelName(gfx950Spec())).toMatch(/^[A-Za-z_][A-Za-z0-9_.$-]*$/);
  });

  it('changes when any single field changes', () => {
    const base = gfx950Spec({ variant: 'grouped', group_merge: 2 });
    const alternatives: { [K in keyof Spec]: Spec[K][] } = {
      variant: ['dense', 'split_c'],
      target: ['gfx942', 'sm_90'],
      dtype: ['fp16'],
      R: [1, 5],
      S: [1, 5],
      stride_h: [2],
      stride_w: [2],
      pad_h: [0, 2],
      pad_w: [0, 2],
      tile_h: [16],
      tile_w: [64],
      tile_k: [128],
      ck: [16, 64],
      waves_m: [1, 4],
      waves_n: [1, 4],
      atom: ['16x16x32', '32x32x8', '16x16x16', 'm16n8k16'],
      lds_pad: [0, 16],
      double_buffer: [true],
      chiplet_swizzle: [false],
      chiplet_chunk: [32],
      num_xcds: [4],
      swizzle_wgm: [1, 4],
      iglp: [null, 1],
      waves_per_eu: [1, 3],
      group_merge: [1, 4],
    };
    const names = new Set([kernelName(base)]);
    let count = 1;
    for (const [field, values] of Object.entries(alternatives)) {
      for (const v of values as unknown[]) {
        names.add(kernelName({ ...base, [field]: v } as Spec));
        count++;
      }
    }
    expect(Object.keys(alternatives).sort()).toEqual(Object.keys(base).sort());
    expect(names.size).toBe(count);
  });

  it('is unique per distinct spec and equal for equal specs', () => {
    const arbSpec = fc.record({
      variant: fc.constantFrom('dense', 'split_c', 'grouped'),
      target: fc.constantFrom('gfx950', 'gfx942', 'sm_90'),
      dtype: fc.constantFrom('fp16', 'bf16'),
      R: fc.integer({ min: 1, max: 3 }),
      S: fc.integer({ min: 1, max: 3 }),
      stride_h: fc.integer({ min: 1, max: 2 }),
      stride_w: fc.integer({ min: 1, max: 2 }),
      pad_h: fc.integer({ min: 0, max: 1 }),
      pad_w: fc.integer({ min: 0, max: 1 }),
      tile_h: fc.constantFrom(8, 16),
      tile_w: fc.constantFrom(16, 32),
      tile_k: fc.constantFrom(32, 64),
      ck: fc.constantFrom(16, 32),
      waves_m: fc.integer({ min: 1, max: 2 }),
      waves_n: fc.integer({ min: 1, max: 2 }),
      atom: fc.constantFrom('32x32x16', '16x16x32', 'm16n8k16'),
      lds_pad: fc.constantFrom(0, 8),
      double_buffer: fc.boolean(),
      chiplet_swizzle: fc.boolean(),
      chiplet_chunk: fc.constantFrom(1, 64),
      num_xcds: fc.constantFrom(1, 8),
      swizzle_wgm: fc.constantFrom(1, 8),
      iglp: fc.constantFrom(null, 0, 1),
      waves_per_eu: fc.constantFrom(null, 1, 3),
      group_merge: fc.constantFrom(1, 2),
    }) as fc.Arbitrary<Spec>;
    fc.assert(
      fc.property(arbSpec, arbSpec, (a, b) => {
        expect(kernelName(a) === kernelName(b)).toBe(canonicalSpecJson(a) === canonicalSpecJson(b));
      }),
      { numRuns: 3000 },
    );
    fc.assert(fc.property(arbSpec, (a) => kernelName(a) === kernelName(JSON.parse(JSON.stringify(a)) as Spec)));
  });
});

describe('specGeometry (rocke-notes §2.3 worked examples)', () => {
  it('default spec t16x32x128 ck16 w2x4 32x32x16', () => {
    const g = specGeometry(gfx950Spec({ tile_h: 16, tile_w: 32, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 }));
    expect([g.ldsInH, g.ldsInW, g.cStride, g.ldsXElems, g.ldsWElems]).toEqual([18, 34, 24, 14688, 18432]);
    expect(g.ldsBytes).toBe(66272);
    expect([g.accPerLane, g.threads, g.xPasses, g.wPasses]).toEqual([128, 512, 3, 5]);
  });

  it('parity base and production config', () => {
    const base = specGeometry(gfx950Spec());
    expect([base.ldsBytes, base.accPerLane, base.threads]).toEqual([64096, 64, 256]);
    const prod = specGeometry(gfx950Spec({ tile_h: 16, tile_w: 64, tile_k: 128, ck: 16, waves_m: 2, waves_n: 4 }));
    expect([prod.ldsBytes, prod.accPerLane]).toEqual([93920, 256]);
  });

  it('doubles LDS with double buffering and follows stride in the halo', () => {
    expect(specGeometry(gfx950Spec({ double_buffer: true })).ldsBytes).toBe(2 * 64096);
    const s2 = specGeometry(gfx950Spec({ stride_h: 2, stride_w: 2 }));
    expect([s2.ldsInH, s2.ldsInW]).toEqual([17, 65]);
  });

  it('uses the warp32 m16n8k16 atom on sm_90', () => {
    const a = ATOMS.m16n8k16;
    expect([a.fragA, a.fragB, a.accPerLane]).toEqual([8, 4, 4]);
    const g = specGeometry(sm90Spec());
    expect([g.threads, g.colBlocks, g.mTiles, g.kAtoms, g.rowsPerWave, g.mTilesPerWave, g.nTilesPerWave]).toEqual([128, 4, 4, 2, 4, 2, 16]);
    expect(g.accPerLane).toBe(128);
    expect(g.ldsBytes).toBe(64096);
    expect([g.wSlots, g.wPasses]).toEqual([2304, 18]);
  });
});
