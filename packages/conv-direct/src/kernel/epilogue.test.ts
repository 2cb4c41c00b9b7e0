/**
 * Fused epilogues in the interpreter: y = act(alpha*conv + bias[k] + beta*r) at the store of the
 * dense, grouped and depthwise kernels (mma.sync / MFMA, wgmma and FMA builders) and, for split_c, in the
 * split-reduce pass after the fixed-order fold, on gfx950 and sm_90, against the naive fp64 conv
 * with the fp64 epilogue. A dropped bias or another activation must fail the same check.
 */
import { ACTIVATIONS, interpret, type Activation, type Epilogue } from '@rocke/ir';
import { buildSplitReduce, defaultSpec as reduceSpecFor, type SplitReduceSpec } from '@rocke/split-reduce';
import { describe, expect, it } from 'vitest';
import type { EpilogueScalars } from '../abi.js';
import { launchSequence } from '../launches.js';
import { problemGeometry, type Problem } from '../problem.js';
import { kernelName, type Spec } from '../spec.js';
import { depthwiseSpec, gfx950Spec, pointwiseSpec, problem1x1, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { fragmentStoreFillsSectors, outputStaging } from '../store-path.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits, toBits, withEpilogue } from './test-oracle.js';

const SCALARS: EpilogueScalars = { alpha: 0.5, beta: 0.75, slope: 0.1, lo: -1.5, hi: 2.5 };

/** Inputs whose pre-activation values spread over both signs and past 6 (conv rms ~ sqrt(9*C)/3). */
function data(p: Problem, e: Epilogue) {
  const g = problemGeometry(p);
  const x = randomBits(g.xBytes / 2, p.dtype, 11);
  const w = randomBits(g.wBytes / 2, p.dtype, 23);
  const biasBits = randomBits(p.K, p.dtype, 5).map((v) => toBits(p.dtype)(fromBits(p.dtype)(v) * 2));
  const bias = e.bias === 'none' ? undefined : e.bias === 'fp32' ? Float32Array.from(biasBits, (v, i) => fromBits(p.dtype)(v) + (i % 3) * 2 ** -12) : biasBits;
  const residual = e.residual ? randomBits(g.yBytes / 2, p.dtype, 7).map((v) => toBits(p.dtype)(fromBits(p.dtype)(v) * 2)) : undefined;
  return { x, w, bias, residual };
}

/** The fp64 expectation of `e` (or of `act` in its place, or without the bias) and the check of `y` against it. */
function check(p: Problem, y: Uint16Array, e: Epilogue, d: ReturnType<typeof data>, over: { act?: Activation; dropBias?: boolean; dropResidual?: boolean } = {}) {
  const g = problemGeometry(p);
  const conv = naiveConv(p, d.x, d.w);
  const { expected, scaleRms } = withEpilogue(conv, p.K, p.dtype, { act: over.act ?? e.act, scalars: SCALARS, bias: over.dropBias ? undefined : d.bias, residual: over.dropResidual ? undefined : d.residual });
  return mismatches(Array.from(y, fromBits(p.dtype)), expected, p.dtype, p.R * p.S * g.cpg, scaleRms);
}

function runFused(spec: Spec, p: Problem) {
  const e = spec.epilogue!;
  expect(validate(spec, p)).toEqual({ ok: true });
  const d = data(p, e);
  const run = interpretConv(buildConvKernel(spec), p, d.x, d.w, { epilogue: { scalars: SCALARS, bias: d.bias, residual: d.residual } });
  return { y: run.y, d };
}

const small = (o: Partial<Problem> = {}) => problem3x3({ N: 1, H: 6, W: 12, C: 32, K: 64, ...o });
const full: Epilogue = { act: 'silu', bias: 'fp32', residual: true };

describe('dense: every activation with bias and residual, on gfx950 (MFMA) and sm_90 (mma.sync)', () => {
  const specs = {
    gfx950: gfx950Spec({ atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }),
    sm_90: sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }),
  };
  for (const [target, base] of Object.entries(specs)) {
    it.each(ACTIVATIONS.map((act) => [act] as const))(`${target} %s`, (act) => {
      const e: Epilogue = { act, bias: act === 'relu6' ? 'dtype' : 'fp32', residual: true };
      const p = small({ dtype: act === 'gelu' ? 'fp16' : 'bf16' });
      const { y, d } = runFused({ ...base, dtype: p.dtype, epilogue: e }, p);
      expect(check(p, y, e, d)).toEqual({ count: 0, first: null });
    });
  }
});

describe('the staged store: the fp32 tile through LDS, in bands where the whole tile exceeds the mainloop LDS, else direct', () => {
  const pointwise = (o: Partial<Problem> = {}) => small({ R: 1, S: 1, padH: 0, padW: 0, ...o });
  const oneByOne = { R: 1, S: 1, pad_h: 0, pad_w: 0 } as const;
  it.each([
    ['sm_90 3x3 t8x16x32, two images per tile', sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, tile_n: 2, double_buffer: true, epilogue: full }), small({ N: 3 }), 1],
    ['gfx950 3x3 t8x16x32 (16x16x32), two images per tile', gfx950Spec({ atom: '16x16x32', tile_w: 16, tile_k: 32, waves_m: 1, waves_n: 2, tile_n: 2, epilogue: full }), small({ N: 3 }), 1],
    ['gfx950 3x3 t8x32x64 (32x32x16)', gfx950Spec({ epilogue: full }), small({ W: 20 }), 2],
    ['sm_90 1x1 ck16 t8x16x64 single-buffered (no band fits: direct)', sm90Spec({ ...oneByOne, tile_w: 16, tile_k: 64, ck: 16, waves_m: 2, waves_n: 2, epilogue: full }), pointwise(), undefined],
    ['gfx950 1x1 ck16 t8x16x64 (16x16x32)', gfx950Spec({ ...oneByOne, atom: '16x16x32', tile_w: 16, tile_k: 64, ck: 32, waves_m: 2, waves_n: 2, epilogue: full }), pointwise(), 4],
    ['sm_90 pointwise t8x16x128 w1x4 (bands of one row per wave)', pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 128, ck: 32, waves_m: 1, waves_n: 4, double_buffer: true }), { epilogue: full }), problem1x1({ N: 1, H: 9, W: 30, C: 64, K: 128 }), 2],
    ['wgmma t16x16x64 ck64 w1x2 (one band)', wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 16, waves_n: 2, epilogue: full }), small({ H: 14, W: 18, C: 64, K: 64 }), 1],
  ] as const)('%s', (_, spec, p, passes) => {
    expect(buildConvKernel(spec).epilogue).toBe(passes ? 'lds-staged' : 'direct');
    expect(outputStaging(spec)?.passes).toBe(passes);
    const { y, d } = runFused(spec, p);
    expect(check(p, y, full, d)).toEqual({ count: 0, first: null });
    expect(check(p, y, full, d, { dropBias: true }).count).toBeGreaterThan(y.length / 4);
    expect(check(p, y, full, d, { dropResidual: true }).count).toBeGreaterThan(y.length / 4);
  });
});

describe('the warpgroup MMA stages only what its fragment store would write in partial sectors', () => {
  it('split_c fp32 channel pairs (8 channels = 32 bytes per pixel) store directly; bf16/fp16 outputs (16 bytes) stage; the per-wave MMA stages either way', () => {
    for (const dtype of ['bf16', 'fp16'] as const) {
      const dense = wgmmaSpec({ dtype, ck: 64, tile_w: 16 });
      expect([outputStaging(dense)?.passes, buildConvKernel(dense).epilogue]).toEqual([1, 'lds-staged']);
      expect(fragmentStoreFillsSectors(dense)).toBe(false);
      const split = { ...dense, variant: 'split_c' } as const;
      expect([fragmentStoreFillsSectors(split), outputStaging(split), buildConvKernel(split).epilogue]).toEqual([true, undefined, 'direct']);
    }
    const perWave = sm90Spec({ variant: 'split_c', tile_w: 8, tile_k: 32, ck: 64, waves_m: 1, waves_n: 4, double_buffer: true });
    expect([fragmentStoreFillsSectors(perWave), buildConvKernel(perWave).epilogue]).toEqual([false, 'lds-staged']);
  });
});

describe('every activation with bias and residual through the staged store: grouped, pointwise and wgmma dense, on gfx950 and sm_90', () => {
  const grouped = { variant: 'grouped', group_merge: 4, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 } as const;
  const pw = problem1x1({ N: 2, H: 5, W: 9, C: 64, K: 64 });
  const variants = {
    gfx950: [
      (e: Epilogue) => [gfx950Spec({ ...grouped, atom: '16x16x32', epilogue: e }), small({ C: 64, groups: 8 })] as const,
      (e: Epilogue) => [pointwiseSpec(gfx950Spec({ atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }), { epilogue: e }), pw] as const,
    ],
    sm_90: [
      (e: Epilogue) => [sm90Spec({ ...grouped, double_buffer: true, epilogue: e }), small({ C: 64, groups: 8 })] as const,
      (e: Epilogue) => [pointwiseSpec(wgmmaSpec({ ck: 32, tile_w: 16, waves_n: 2 }), { epilogue: e }), pw] as const,
      (e: Epilogue) => [wgmmaSpec({ epilogue: e }), small({ H: 10, W: 12, K: 40 })] as const,
    ],
  };
  for (const [target, makers] of Object.entries(variants)) {
    // Each activation on one variant, the variants in turn: every variant sees several activations.
    it.each(ACTIVATIONS.filter((a) => a !== 'none').map((act, i) => [act, i] as const))(`${target} %s`, (act, i) => {
      const e: Epilogue = { act, bias: i % 2 === 0 ? 'fp32' : 'dtype', residual: true };
      const [spec, p] = makers[i % makers.length]!(e);
      expect(buildConvKernel(spec).epilogue).toBe('lds-staged');
      const { y, d } = runFused(spec, p);
      expect(check(p, y, e, d)).toEqual({ count: 0, first: null });
      expect(check(p, y, e, d, { dropResidual: true }).count).toBeGreaterThan(y.length / 4);
    });
  }
});

describe('output-channel tails (k_tail) fuse the epilogue channel by channel', () => {
  const tail = { k_tail: true } as const;
  it.each([
    ['gfx950 MFMA dense K 20', gfx950Spec({ atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2, ...tail, epilogue: full }), small({ K: 20 })],
    ['sm_90 mma.sync grouped gm4 (K 40: 4 groups of 10 merged)', sm90Spec({ variant: 'grouped', group_merge: 4, tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, ...tail, epilogue: { act: 'relu6', bias: 'dtype', residual: true } }), small({ C: 64, K: 40, groups: 4 })],
    ['wgmma dense K 44, gelu + fp32 bias + residual', wgmmaSpec({ ...tail, epilogue: { act: 'gelu', bias: 'fp32', residual: true } }), small({ H: 10, W: 12, K: 44 })],
    ['wgmma pointwise s2 K 12', pointwiseSpec(wgmmaSpec({ ck: 32, tile_w: 16, waves_n: 2 }), { stride_h: 2, stride_w: 2, ...tail, epilogue: full }), problem1x1({ N: 2, H: 7, W: 9, C: 32, K: 12, strideH: 2, strideW: 2 })],
  ] as const)('%s', (_, spec, p) => {
    expect(buildConvKernel(spec).epilogue).toBe('direct');
    const { y, d } = runFused(spec, p);
    expect(check(p, y, spec.epilogue!, d)).toEqual({ count: 0, first: null });
    expect(check(p, y, spec.epilogue!, d, { dropBias: true }).count).toBeGreaterThan(y.length / 4);
    expect(check(p, y, spec.epilogue!, d, { dropResidual: true }).count).toBeGreaterThan(y.length / 4);
  });
});

describe('the check is not vacuous', () => {
  it('a dropped bias and each other activation fail on the same output', () => {
    const e: Epilogue = { act: 'hard_swish', bias: 'fp32', residual: true };
    const p = small();
    const { y, d } = runFused(sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, epilogue: e }), p);
    expect(check(p, y, e, d).count).toBe(0);
    expect(check(p, y, e, d, { dropBias: true }).count).toBeGreaterThan(y.length / 4);
    for (const act of ACTIVATIONS.filter((a) => a !== e.act)) expect(check(p, y, e, d, { act }).count, act).toBeGreaterThan(y.length / 50);
  });
});

describe('grouped and wgmma', () => {
  const grouped = { variant: 'grouped', group_merge: 4, tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 } as const;
  it.each([
    ['gfx950 grouped gm4 (16x16x32), silu + fp32 bias + residual', gfx950Spec({ ...grouped, atom: '16x16x32', epilogue: full }), small({ C: 64, groups: 8 })],
    ['sm_90 grouped gm4, relu6 + dtype bias', sm90Spec({ ...grouped, double_buffer: true, epilogue: { act: 'relu6', bias: 'dtype', residual: false } }), small({ C: 64, groups: 8 })],
    ['sm_90 grouped gm4, gelu + residual, fp16', sm90Spec({ ...grouped, dtype: 'fp16', double_buffer: true, epilogue: { act: 'gelu', bias: 'none', residual: true } }), small({ C: 64, groups: 8, dtype: 'fp16' })],
    ['wgmma dense t8x8x64 ck16, gelu + fp32 bias + residual, partial tiles', wgmmaSpec({ epilogue: { act: 'gelu', bias: 'fp32', residual: true } }), small({ H: 10, W: 12, K: 40 })],
    ['wgmma ck64 swizzled t16x16x64 w1x2, leaky_relu + dtype bias + residual', wgmmaSpec({ ck: 64, tile_h: 16, tile_w: 16, waves_n: 2, epilogue: { act: 'leaky_relu', bias: 'dtype', residual: true } }), small({ H: 14, W: 18, C: 64, K: 64 })],
    ['wgmma whole-map 4x4 tile_n 4 (N 3), silu + fp32 bias + residual', wgmmaSpec({ whole_map: true, tile_h: 4, tile_w: 4, tile_n: 4, ck: 32, epilogue: full }), small({ N: 3, H: 4, W: 4 })],
    ['wgmma whole-map 7x7 ck32 two warpgroups, relu6 + dtype bias + residual', wgmmaSpec({ whole_map: true, tile_h: 7, tile_w: 7, tile_k: 128, waves_m: 2, ck: 32, epilogue: { act: 'relu6', bias: 'dtype', residual: true } }), small({ N: 2, H: 7, W: 7, C: 64, K: 128 })],
  ] as const)('%s', (_, spec, p) => {
    const { y, d } = runFused(spec, p);
    expect(check(p, y, spec.epilogue!, d)).toEqual({ count: 0, first: null });
  });
});

describe('pointwise (flat pixels: the store addresses y by flat pixel)', () => {
  const pw = problem1x1({ N: 2, H: 7, W: 9, C: 64, K: 64, strideH: 2, strideW: 2 });
  it.each([
    ['gfx950 16x16x32 s2 (MFMA direct store), silu + fp32 bias + residual', pointwiseSpec(gfx950Spec({ atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }), { stride_h: 2, stride_w: 2, epilogue: full })],
    ['sm_90 mma.sync s2, hard_swish + dtype bias + residual', pointwiseSpec(sm90Spec({ tile_w: 16, tile_k: 32, ck: 16, waves_m: 1, waves_n: 2, double_buffer: true }), { stride_h: 2, stride_w: 2, epilogue: { act: 'hard_swish', bias: 'dtype', residual: true } })],
    ['wgmma ck64 s2, gelu + fp32 bias + residual', pointwiseSpec(wgmmaSpec({ ck: 64, tile_h: 16, waves_n: 2 }), { stride_h: 2, stride_w: 2, epilogue: { act: 'gelu', bias: 'fp32', residual: true } })],
  ] as const)('%s', (_, spec) => {
    const { y, d } = runFused(spec, pw);
    expect(check(pw, y, spec.epilogue!, d)).toEqual({ count: 0, first: null });
    expect(check(pw, y, spec.epilogue!, d, { dropBias: true }).count).toBeGreaterThan(y.length / 4);
  });
});

describe('depthwise', () => {
  const dw = (C: number, m: number, o: Partial<Problem> = {}) => problem3x3({ N: 1, H: 7, W: 13, C, K: m * C, groups: C, ...o });
  for (const target of ['gfx950', 'sm_90'] as const) {
    it.each([
      ['M1 C 32, silu + fp32 bias + residual (whole vectors)', depthwiseSpec({ target, epilogue: full }), dw(32, 1)],
      ['M2 C 12 (K 24, 2-byte staging), gelu + dtype bias + residual', depthwiseSpec({ target, ck: 4, epilogue: { act: 'gelu', bias: 'dtype', residual: true } }), dw(12, 2)],
      ['M1 C 16, 3 images per workgroup over N 4 (each image reads its own residual), silu + fp32 bias + residual', depthwiseSpec({ target, tile_n: 3, epilogue: full }), dw(16, 1, { N: 4 })],
      ['M1 C 5 (K 5: the per-element tail), 2x4 blocks, silu + fp32 bias + residual', depthwiseSpec({ target, tile_h: 4, waves_n: 2, epilogue: full }), dw(5, 1)],
    ] as const)(`${target} %s`, (_, spec, p) => {
      const { y, d } = runFused(spec, p);
      expect(check(p, y, spec.epilogue!, d)).toEqual({ count: 0, first: null });
      expect(check(p, y, spec.epilogue!, d, { dropBias: true }).count).toBeGreaterThan(y.length / 4);
    });
  }
});

describe('split_c: the epilogue runs in split-reduce after the fold', () => {
  for (const [target, spec, splits] of [
    ['gfx950', gfx950Spec({ variant: 'split_c', atom: '16x16x32', tile_w: 16, tile_k: 32, ck: 32, waves_m: 1, waves_n: 2 }), 2],
    ['sm_90', wgmmaSpec({ variant: 'split_c' }), 4],
  ] as const) {
    it(`${target}: sigmoid + fp32 bias + residual, ${splits} splits, bit-identical across runs`, () => {
      const e: Epilogue = { act: 'sigmoid', bias: 'fp32', residual: true };
      const p = small({ N: 2, C: 64 });
      const reduce: SplitReduceSpec = { ...reduceSpecFor(target, p.dtype, 8), epilogue: e };
      const seq = launchSequence(spec, p, { splits, reduce, epilogue: SCALARS });
      expect(seq.launches.filter((l) => l.role === 'reduce').every((l) => l.kernelName.endsWith('_epsigmoid_b32_res'))).toBe(true);
      const d = data(p, e);
      const conv = buildConvKernel(spec);
      const reduceModule = buildSplitReduce(reduce);
      const once = () => {
        const y = new Uint16Array(problemGeometry(p).yBytes / 2).fill(0x7f7f);
        const buffers = { x: d.x, w: d.w, y, ws: new Float32Array(seq.plan.workspaceBytes / 4), bias: d.bias!, residual: d.residual! };
        for (const l of seq.launches) {
          const args = l.kernargs.map((v) => (typeof v === 'object' ? { buffer: v.buffer, byteOffset: v.offsetBytes } : v));
          const m = l.role === 'conv' ? conv.module : reduceModule;
          interpret(m, l.kernelName, { target, grid: l.grid, block: l.block, args, buffers, dynamicShared: l.sharedBytes });
        }
        return y;
      };
      const y = once();
      expect(check(p, y, e, d)).toEqual({ count: 0, first: null });
      expect(check(p, y, e, d, { act: 'silu' }).count).toBeGreaterThan(y.length / 4);
      expect(Array.from(once())).toEqual(Array.from(y));
    });
  }
});

describe('the epilogue field', () => {
  it('names: bare kernels keep theirs; epilogue kernels add the tag', () => {
    const s = sm90Spec();
    expect(kernelName({ ...s, epilogue: full })).toBe(`${kernelName(s)}_epsilu_b32_res`);
  });

  it('validation refuses a bare epilogue written out, split_c with an epilogue, and unknown fields', () => {
    const p = small();
    expect(validate({ ...sm90Spec(), epilogue: { act: 'none', bias: 'none', residual: false } }, p)).toEqual({
      ok: false,
      reason: 'epilogue: a bare epilogue (act none, no bias, no residual) is written by leaving the field out',
    });
    expect(validate(sm90Spec({ variant: 'split_c', epilogue: full }), p)).toMatchObject({ ok: false, reason: expect.stringMatching(/^epilogue: split_c writes fp32 partial sums/) });
    expect(validate({ ...sm90Spec(), epilogue: { ...full, alpha: 2 } }, p)).toMatchObject({ ok: false });
    expect(validate({ ...sm90Spec(), epilogue: { act: 'tanh', bias: 'none', residual: false } }, p)).toMatchObject({ ok: false });
  });
});
