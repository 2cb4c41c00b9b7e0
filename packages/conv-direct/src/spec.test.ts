import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalSpecJson, kernelName, parseSpec, specFromJson, specGeometry, wgmmaStages, withEpilogue, WGMMA_MAX_STAGES, type Spec } from './spec.js';
import { gfx950Spec, sm90Spec, wgmmaSpec } from './test-fixtures.js';
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
      atom: ['16x16x32', '32x32x8', '16x16x16', 'm16n8k16', 'm64nNk16'],
      lds_pad: [0, 16],
      double_buffer: [true],
      chiplet_swizzle: [false],
      chiplet_chunk: [32],
      num_xcds: [4],
      swizzle_wgm: [1, 4],
      iglp: [null, 1],
      waves_per_eu: [1, 3],
      group_merge: [1, 4],
      tile_n: [2, 4],
      dilation_h: [2],
      dilation_w: [3],
      c_tail: [1, 8],
      k_tail: [true],
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
      tile_n: fc.constantFrom(1, 2, 4),
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

describe('specGeometry (worked examples)', () => {
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

describe('specGeometry of warpgroup-MMA specs (m64nNk16)', () => {
  it('t16x8x128 ck32 w1x2, 3x3 s1: two m-blocks, one per warpgroup of N 128', () => {
    const g = specGeometry(wgmmaSpec({ tile_h: 16, tile_k: 128, ck: 32, waves_n: 2 }));
    // 2 warpgroups of 128 threads; each: one 8x8 m-block x 128 channels = 64 f32 per thread.
    expect([g.threads, g.waveSize, g.accPerLane]).toEqual([256, 128, 64]);
    expect([g.colBlocks, g.mTiles, g.kAtoms, g.rowsPerWave, g.mTilesPerWave, g.nTilesPerWave]).toEqual([1, 16, 2, 8, 16, 1]);
    // Halo 18x10, 4 planes of 8 channels: 4*18*10*8 = 5760; weights 128*9*32 = 36864; two stages of bf16
    // (85248 bytes a stage: a third would not let two workgroups share an SM).
    expect([g.ldsInH, g.ldsInW, g.cStride, g.ldsXElems, g.ldsWElems, g.ldsXTail, g.ldsWTail]).toEqual([18, 10, 8, 5760, 36864, 0, 0]);
    expect(g.ldsBytes).toBe(2 * 2 * (5760 + 36864));
    expect(g.ldsBytes).toBe(170496);
    // 18*10*4 = 720 X vectors over 256 threads; 36864/8 = 4608 W vectors.
    expect([g.xChannelVectors, g.xVectors, g.xPasses, g.wSlots, g.wPasses]).toEqual([4, 720, 3, 4608, 18]);
  });

  it('t8x16x64 ck32 w2x2, 3x3 s2 fp16: stride-2 planes pad the halo width to even', () => {
    const g = specGeometry(wgmmaSpec({ stride_h: 2, stride_w: 2, dtype: 'fp16', tile_w: 16, ck: 32, waves_m: 2, waves_n: 2 }));
    // 4 warpgroups: 2 m-blocks over waves_n 2, 64 channels over waves_m 2 (N 32): 1 * 32 / 2 accumulators.
    expect([g.threads, g.accPerLane, g.mTilesPerWave, g.nTilesPerWave]).toEqual([512, 16, 4, 1]);
    // Halo 17 x 33; the plane stores 34 columns (17 even, then 17 odd slots): 4 planes * 17 * 34 * 8 = 18496.
    expect([g.ldsInH, g.ldsInW, g.ldsXElems, g.ldsWElems]).toEqual([17, 33, 18496, 18432]);
    expect(g.ldsBytes).toBe(2 * 2 * (18496 + 18432));
    expect(g.ldsBytes).toBe(147712);
    // Staging copies the 33 real columns only: 17*33*4 = 2244 vectors over 512 threads; 18432/8 = 2304 W vectors.
    expect([g.xVectors, g.xPasses, g.wSlots, g.wPasses]).toEqual([2244, 5, 2304, 5]);
  });

  it('stages as many chunks as let two workgroups share an H200 SM, from 2 to 4', () => {
    // Budget per workgroup: 233472 / 2 - 1024 reserved = 115712 bytes.
    expect(WGMMA_MAX_STAGES).toBe(4);
    // t8x8x64 ck16 3x3: 2 * 16 * (10*10 + 9*64) = 21632 bytes a stage; 5 fit, capped at 4.
    expect(wgmmaStages(wgmmaSpec())).toBe(4);
    expect(specGeometry(wgmmaSpec()).ldsBytes).toBe(4 * 21632);
    // t8x16x64 ck16 3x3 s2: 2 * 16 * (17*34 + 9*64) = 36928 bytes; 3 fit.
    const s2 = wgmmaSpec({ stride_h: 2, stride_w: 2, tile_w: 16 });
    expect(wgmmaStages(s2)).toBe(3);
    expect(specGeometry(s2).ldsBytes).toBe(3 * 36928);
    // The two specs above: 85248 and 73856 bytes a stage, only one fits, and the kernel keeps 2.
    expect(wgmmaStages(wgmmaSpec({ tile_h: 16, tile_k: 128, ck: 32, waves_n: 2 }))).toBe(2);
    expect(wgmmaStages(wgmmaSpec({ stride_h: 2, stride_w: 2, tile_w: 16, ck: 32, waves_m: 2, waves_n: 2 }))).toBe(2);
  });

  it('matches the shared memory and threads the built kernel asks for', async () => {
    const { buildConvKernel } = await import('./kernel/build.js');
    for (const spec of [wgmmaSpec({ tile_h: 16, tile_k: 128, ck: 32, waves_n: 2 }), wgmmaSpec({ stride_h: 2, stride_w: 2, tile_w: 16, waves_m: 2, waves_n: 2 }), wgmmaSpec()]) {
      const g = specGeometry(spec);
      const k = buildConvKernel(spec);
      expect([k.threads, k.dynamicSharedBytes]).toEqual([g.threads, g.ldsBytes]);
    }
  });
});


describe('tile_n in names and geometry', () => {
  it('tags the name only when tile_n is not 1', () => {
    expect(kernelName(sm90Spec())).not.toMatch(/_n\d/);
    expect(kernelName(sm90Spec({ tile_n: 4 }))).toBe(`${kernelName(sm90Spec())}_n4`);
    expect(parseSpec({ ...sm90Spec(), tile_n: undefined }).ok).toBe(false);
  });

  it('stacks tile_n halo tiles along LDS rows and splits tile_n * tile_h virtual rows over the waves', () => {
    const one = specGeometry(sm90Spec({ tile_w: 8, tile_k: 64, waves_n: 2 }));
    const four = specGeometry(sm90Spec({ tile_w: 8, tile_k: 64, waves_n: 2, tile_n: 4 }));
    expect([one.ldsInH, one.ldsRows, one.rowsPerWave, one.bandRows, one.waveImages]).toEqual([10, 10, 4, 4, 1]);
    expect([four.ldsInH, four.ldsRows, four.rowsPerWave, four.bandRows, four.waveImages]).toEqual([10, 40, 16, 8, 2]);
    expect(four.ldsXElems).toBe(4 * one.ldsXElems);
    expect(four.xVectors).toBe(4 * one.xVectors);
    expect(four.ldsWElems).toBe(one.ldsWElems);
    expect(four.accPerLane).toBe(4 * one.accPerLane);
    expect(four.ldsBytes - one.ldsBytes).toBe(2 * 3 * one.ldsXElems * (sm90Spec().double_buffer ? 2 : 1));
  });
});

describe('withEpilogue', () => {
  const silu = { act: 'silu', bias: 'fp32', residual: true } as const;
  it('fuses at the store of dense and grouped specs, keeps split_c bare, and strips for a bare run', () => {
    const dense = gfx950Spec();
    expect(withEpilogue(dense, silu)).toEqual({ ...dense, epilogue: silu });
    expect(kernelName(withEpilogue(dense, silu))).toBe(`${kernelName(dense)}_epsilu_b32_res`);
    expect(withEpilogue(gfx950Spec({ variant: 'split_c' }), silu)).toEqual(gfx950Spec({ variant: 'split_c' }));
    expect(withEpilogue({ ...dense, epilogue: silu }, undefined)).toEqual(dense);
    expect(withEpilogue({ ...dense, epilogue: silu }, { act: 'none', bias: 'none', residual: false })).toEqual(dense);
    expect(withEpilogue({ ...dense, epilogue: silu }, { ...silu, act: 'relu' }).epilogue).toEqual({ ...silu, act: 'relu' });
  });
});
