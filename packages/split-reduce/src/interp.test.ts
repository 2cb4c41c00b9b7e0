/**
 * Numerics of the emitted IR, run on the CPU by @rocke/ir's interpreter with gfx950 and sm_90
 * semantics: every output must be bit-identical to the host fold in the same fixed order, and two
 * runs must give the same bits.
 */
import { interpret, type Module } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import {
  buildSplitReduce, defaultSpec, foldSlices, kernelName, planReduce,
  type Dtype, type ReducePlan, type SplitReduceSpec, type TargetName, type VectorWidth,
} from './index.js';
import { f32ToBf16Bits, f32ToF16Bits } from './fold.js';
import { partialSums } from './test-data.js';

/** What y holds where the kernel must not write. */
const CANARY = 0xa5a5;

const modules = new Map<string, Module>();
function moduleOf(spec: SplitReduceSpec): Module {
  const name = kernelName(spec);
  let m = modules.get(name);
  if (!m) modules.set(name, (m = buildSplitReduce(spec)));
  return m;
}

interface Run {
  /** The whole y buffer (canaries around the output). */
  readonly y: Uint16Array;
  /** Interpreted IR instructions over all launches. */
  readonly instructions: number;
}

/** Runs every launch of the plan over a ws buffer holding `wsData` at the plan's ws offset. */
function run(plan: ReducePlan, wsData: Float32Array, yOffsetBytes = 0): Run {
  const wsOffset = plan.launches[0]!.wsOffsetBytes - plan.launches[0]!.start * 4;
  const ws = new Float32Array(wsOffset / 4 + wsData.length + 64).fill(NaN); // NaN around the workspace: a stray read would show
  ws.set(wsData, wsOffset / 4);
  const count = plan.yBytes / 2;
  const y = new Uint16Array(yOffsetBytes / 2 + count + 64).fill(CANARY);
  let instructions = 0;
  for (const l of plan.launches) {
    const args = l.kernargs.map((v) => (typeof v === 'object' ? { buffer: v.buffer, byteOffset: v.offsetBytes } : v));
    const r = interpret(moduleOf(plan.spec), plan.kernelName, { target: plan.spec.target, grid: l.grid, block: l.block, args, buffers: { ws, y } });
    instructions += r.instructions;
  }
  return { y, instructions };
}

/** The same fold in reverse order: a kernel that reordered the additions would match this instead. */
function reversedFold(ws: Float32Array, count: number, splits: number, dtype: Dtype): Uint16Array {
  const round = dtype === 'fp16' ? f32ToF16Bits : f32ToBf16Bits;
  return Uint16Array.from({ length: count }, (_, i) => {
    let acc = ws[(splits - 1) * count + i]!;
    for (let s = splits - 2; s >= 0; s--) acc = Math.fround(acc + ws[s * count + i]!);
    return round(acc);
  });
}

function expectReduces(spec: SplitReduceSpec, count: number, splits: number, opts: { maxViewBytes?: number; wsOffsetBytes?: number; yOffsetBytes?: number } = {}): Run {
  const plan = planReduce({ count, splits, dtype: spec.dtype, target: spec.target, spec, ...opts });
  const wsData = partialSums(count, splits, count * 31 + splits);
  const first = run(plan, wsData, opts.yOffsetBytes);
  const second = run(plan, wsData, opts.yOffsetBytes);
  expect(Buffer.from(second.y.buffer).equals(Buffer.from(first.y.buffer))).toBe(true);

  const at = (opts.yOffsetBytes ?? 0) / 2;
  const want = foldSlices(wsData, count, splits, spec.dtype);
  const got = first.y.subarray(at, at + count);
  const wrong = got.findIndex((v, i) => v !== want[i]);
  if (wrong >= 0) throw new Error(`element ${wrong}: got 0x${got[wrong]!.toString(16)}, fold gives 0x${want[wrong]!.toString(16)}`);
  expect(first.y.subarray(0, at).every((v) => v === CANARY)).toBe(true);
  expect(first.y.subarray(at + count).every((v) => v === CANARY)).toBe(true);
  if (splits >= 3 && count >= 64) expect(Array.from(reversedFold(wsData, count, splits, spec.dtype))).not.toEqual(Array.from(want));
  return first;
}

const small = (target: TargetName, dtype: Dtype, vectorWidth: VectorWidth, slicesPerStep: 1 | 2 | 4): SplitReduceSpec => ({
  target, dtype, vectorWidth, slicesPerStep, threads: target === 'sm_90' ? 32 : 64, outputsPerThread: 2 * vectorWidth,
});

// Counts: below one vector, unaligned slices (all scalar), whole tiles plus a tail, whole tiles only.
const COUNTS = [3, 1001, 1544, 2048];
const SPLITS = [1, 2, 3, 7];
const VARIANTS = [['fp16', 4, 4], ['bf16', 8, 4], ['bf16', 4, 2], ['fp16', 8, 1]] as const;

describe.each(['gfx950', 'sm_90'] as const)('%s lowering, interpreted', (target) => {
  it.each(SPLITS)('splits = %i: bit-identical to the host fold for every count and spec variant, and across runs', (splits) => {
    for (const count of COUNTS) {
      for (const [dtype, vw, perStep] of VARIANTS) expectReduces(small(target, dtype, vw, perStep), count, splits);
    }
  });

  it('the default compile-all specs (256 threads) on a 7x7x512 output', () => {
    expectReduces(defaultSpec(target, 'bf16', 8), 7 * 7 * 512, 3);
    expectReduces(defaultSpec(target, 'fp16', 4), 7 * 7 * 512, 2);
  });

  it('several launches over views with offsets, as planned under a small view limit', () => {
    const r = expectReduces(small(target, 'bf16', 8, 4), 5000, 3, { maxViewBytes: 4096, wsOffsetBytes: 256, yOffsetBytes: 48 });
    expect(r.instructions).toBeGreaterThan(0);
    expect(planReduce({ count: 5000, splits: 3, dtype: 'bf16', target, spec: small(target, 'bf16', 8, 4), maxViewBytes: 4096 }).launches).toHaveLength(5);
  });

  it('views at offsets not aligned for vectors still fold exactly (through the scalar path)', () => {
    expectReduces(small(target, 'fp16', 4, 4), 1544, 3, { wsOffsetBytes: 4, yOffsetBytes: 2 });
    expectReduces(small(target, 'bf16', 8, 2), 1544, 7, { wsOffsetBytes: 32, yOffsetBytes: 8 });
  });

  it('aligned whole tiles take the vector path: under half the instructions of the scalar path', () => {
    const spec = small(target, 'fp16', 8, 4);
    const vector = expectReduces(spec, 2048, 7).instructions;
    expect(vector * 2).toBeLessThan(expectReduces(spec, 2047, 7).instructions); // unaligned slice stride
    expect(vector * 2).toBeLessThan(expectReduces(spec, 2048, 7, { yOffsetBytes: 8 }).instructions); // y not 16-byte aligned
    expect(expectReduces(spec, 2048, 7, { wsOffsetBytes: 16, yOffsetBytes: 16 }).instructions).toBe(vector);
  });
});

describe('gfx942 lowering, interpreted', () => {
  it('matches the host fold too', () => {
    for (const splits of [2, 7]) expectReduces(small('gfx942', 'bf16', 8, 4), 1544, splits);
  });
});
