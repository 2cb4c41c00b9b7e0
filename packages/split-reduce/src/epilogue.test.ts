/**
 * split_c's fused epilogue: the reduce applies act(alpha*sum + bias[k] + beta*r) to each
 * fixed-order sum before the cast. Interpreted on gfx950 and sm_90, every output must be
 * bit-identical to the host's fold followed by the same fp32 operations, across runs, on the
 * vector and the scalar paths and over several launches.
 */
import { ACTIVATIONS, decodeFloat16, encodeFloat16, interpret, type Epilogue } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { buildSplitReduce, kernelName, kernargTable, planReduce, validate, type Dtype, type SplitReduceSpec, type TargetName } from './index.js';
import { f32ToBf16Bits, f32ToF16Bits } from './fold.js';
import { hostEpilogue, partialSums, rng, type HostEpilogue } from './test-data.js';

const SCALARS = { alpha: 0.75, beta: -1.25, slope: 0.2, lo: -0.5, hi: 3 };
const kind = (dtype: Dtype) => (dtype === 'fp16' ? 'half' : 'bfloat');

function spec(target: TargetName, dtype: Dtype, epilogue: Epilogue, vectorWidth: 4 | 8 = 8): SplitReduceSpec {
  return { target, dtype, vectorWidth, slicesPerStep: 4, threads: target === 'sm_90' ? 32 : 64, outputsPerThread: 2 * vectorWidth, epilogue };
}

/** Runs the planned reduce with an epilogue; returns y and what the host computes. */
function fused(s: SplitReduceSpec, count: number, splits: number, channels: number, opts: { maxViewBytes?: number; dropBias?: boolean } = {}) {
  const e = s.epilogue!;
  const plan = planReduce({ count, splits, dtype: s.dtype, target: s.target, spec: s, epilogue: e, epilogueArgs: { channels, ...SCALARS }, maxViewBytes: opts.maxViewBytes });
  // Sums of moderate size, so the activations see both signs and their curved parts.
  const ws = partialSums(count, splits, 7).map((v) => Math.max(-4, Math.min(4, v)));
  const r = rng(3);
  const biasValues = Array.from({ length: channels }, () => (r() - 0.5) * 4);
  const bias = e.bias === 'fp32' ? Float32Array.from(biasValues) : Uint16Array.from(biasValues, (v) => encodeFloat16(v, kind(s.dtype)));
  const residual = Uint16Array.from({ length: count }, () => encodeFloat16((r() - 0.5) * 6, kind(s.dtype)));
  const m = buildSplitReduce(s);
  const outputs = [0, 1].map(() => {
    const y = new Uint16Array(count);
    for (const l of plan.launches) {
      const args = l.kernargs.map((v) => (typeof v === 'object' ? { buffer: v.buffer, byteOffset: v.offsetBytes } : v));
      interpret(m, plan.kernelName, { target: s.target, grid: l.grid, block: l.block, args, buffers: { ws, y, bias, residual } });
    }
    return y;
  });
  const round = s.dtype === 'fp16' ? f32ToF16Bits : f32ToBf16Bits;
  const host: HostEpilogue = { act: e.act, ...SCALARS };
  const want = Uint16Array.from({ length: count }, (_, i) => {
    let acc = ws[i]!;
    for (let k = 1; k < splits; k++) acc = Math.fround(acc + ws[k * count + i]!);
    const b = e.bias === 'none' || opts.dropBias ? undefined : e.bias === 'fp32' ? (bias as Float32Array)[i % channels]! : decodeFloat16((bias as Uint16Array)[i % channels]!, kind(s.dtype));
    const res = e.residual ? decodeFloat16(residual[i]!, kind(s.dtype)) : undefined;
    return round(hostEpilogue(host, acc, b, res));
  });
  return { y: outputs[0]!, again: outputs[1]!, want, plan };
}

function expectExact(got: Uint16Array, want: Uint16Array): void {
  const wrong = got.findIndex((v, i) => v !== want[i]);
  if (wrong >= 0) throw new Error(`element ${wrong}: got 0x${got[wrong]!.toString(16)}, host gives 0x${want[wrong]!.toString(16)}`);
}

describe.each(['gfx950', 'sm_90'] as const)('%s: the fused epilogue after the fold, interpreted', (target) => {
  it('every activation, with an fp32 bias and a residual: bit-identical to the host, run after run', () => {
    for (const act of ACTIVATIONS) {
      const { y, again, want } = fused(spec(target, 'bf16', { act, bias: 'fp32', residual: true }), 512, 3, 32);
      expectExact(y, want);
      expect(Array.from(again)).toEqual(Array.from(y));
    }
  });

  it('dtype bias and no residual, residual and no bias; fp16; the vector width 4', () => {
    for (const e of [{ act: 'gelu', bias: 'dtype', residual: false }, { act: 'relu', bias: 'none', residual: true }] as Epilogue[]) {
      for (const dtype of ['fp16', 'bf16'] as const) expectExact(fused(spec(target, dtype, e, 4), 1544, 2, 8).y, fused(spec(target, dtype, e, 4), 1544, 2, 8).want);
    }
  });

  it('channels that are not a multiple of the vector width (scalar path) and several launches (channel0 > 0)', () => {
    const s = spec(target, 'bf16', { act: 'silu', bias: 'fp32', residual: true });
    const odd = fused(s, 12 * 130, 3, 12);
    expectExact(odd.y, odd.want);
    const launches = fused(s, 64 * 45, 2, 64, { maxViewBytes: 2048 });
    expect(launches.plan.launches.length).toBeGreaterThan(1);
    expect(launches.plan.launches.some((l) => l.start % 64 !== 0)).toBe(true);
    expectExact(launches.y, launches.want);
  });

  it('would catch a dropped bias or another activation', () => {
    const s = spec(target, 'bf16', { act: 'hard_swish', bias: 'fp32', residual: true });
    const { y, want } = fused(s, 512, 3, 32);
    const noBias = fused(s, 512, 3, 32, { dropBias: true }).want;
    expect(y.filter((v, i) => v !== noBias[i]).length).toBeGreaterThan(256);
    const other = fused(spec(target, 'bf16', { act: 'silu', bias: 'fp32', residual: true }), 512, 3, 32).want;
    expect(want.filter((v, i) => v !== other[i]).length).toBeGreaterThan(128);
  });
});

describe('the epilogue in the spec, the name and the kernargs', () => {
  const e: Epilogue = { act: 'clamp', bias: 'dtype', residual: true };
  it('names carry the epilogue; a bare epilogue must be left out', () => {
    const s = spec('gfx950', 'bf16', e);
    expect(kernelName(s)).toBe('rocke_split_reduce_gfx950_bf16_v8_t64_o16_u4_epclamp_bd_res');
    expect(validate({ ...s, epilogue: { act: 'none', bias: 'none', residual: false } })).toEqual({
      ok: false,
      reason: 'epilogue: a bare epilogue (act none, no bias, no residual) is written by leaving the field out',
    });
    expect(validate({ ...s, epilogue: { act: 'tanh', bias: 'none', residual: false } }).ok).toBe(false);
    expect(validate({ ...s, epilogue: { ...e, extra: 1 } }).ok).toBe(false);
  });

  it('the table appends the channel position and the epilogue arguments', () => {
    expect(kernargTable(e).map((a) => a.name).slice(7)).toEqual(['channels', 'channel0', 'bias', 'residual', 'bias_bytes', 'residual_bytes', 'alpha', 'beta', 'lo', 'hi']);
    expect(kernargTable({ act: 'silu', bias: 'none', residual: false }).map((a) => a.name).slice(7)).toEqual(['alpha']);
  });

  it('plans refuse a mismatched or incomplete epilogue with a reason', () => {
    const s = spec('gfx950', 'bf16', e);
    expect(() => planReduce({ count: 64, splits: 2, dtype: 'bf16', target: 'gfx950', spec: s })).toThrow(/the spec's epilogue .* is not the problem's "none"/);
    expect(() => planReduce({ count: 64, splits: 2, dtype: 'bf16', target: 'gfx950', epilogue: e })).toThrow(/needs its launch values/);
    expect(() => planReduce({ count: 64, splits: 2, dtype: 'bf16', target: 'gfx950', epilogue: e, epilogueArgs: { channels: 24, alpha: 1 } })).toThrow(/channels must be a positive integer dividing count 64/);
    expect(() => planReduce({ count: 64, splits: 2, dtype: 'bf16', target: 'gfx950', epilogue: e, epilogueArgs: { channels: 8, alpha: 1 } })).toThrow(/kernarg lo \(f32\): NaN is not a finite number/);
  });
});

