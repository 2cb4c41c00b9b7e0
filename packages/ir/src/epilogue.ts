/**
 * The fused store epilogue every kernel family shares:
 *
 *   y = act(alpha * acc + bias[k] + beta * r)
 *
 * in fp32 on the fp32 accumulators, just before the cast to the output dtype. `bias` is per output
 * channel (fp32 or the output dtype), `r` a residual tensor in y's layout (the output dtype). The
 * epilogue's *shape* (activation, bias kind, residual or not) is compiled in; its scalars (alpha,
 * beta, the activation's parameters) and tensors are kernel arguments, listed by
 * {@link epilogueKernargs} for each family's kernarg table.
 *
 * Only what every target lowers: fmul/fadd/fdiv, fcmp/select, llvm.maxnum/minnum and llvm.exp2
 * (v_exp_f32 on gfx9, ex2.approx.f32 on sm_90); the divisions carry `arcp afn` (v_rcp_f32 + mul,
 * div.approx.f32), as approximate as the exp2. The smooth activations are written with exp2 alone:
 *   sigmoid(z) = 1 / (1 + 2^(-z log2 e))       silu(z) = z / (1 + 2^(-z log2 e))
 *   gelu(z)    = z / (1 + 2^(z (k1 + k2 z^2)))  (the tanh form: 0.5 (1 + tanh u) = 1 / (1 + e^(-2u)),
 *                                                u = sqrt(2/pi) (z + 0.044715 z^3), k1 = -2 log2(e) sqrt(2/pi), k2 = 0.044715 k1)
 * An overflowing exp2 gives +inf and the quotients their limits (0 or -0), never NaN.
 */
import type { Builder } from './builder.js';
import type { KernargEntry } from './kernarg.js';
import type { Value } from './ir.js';
import type { GlobalBuffer, Target } from './targets/target.js';
import { bfloat, f32, half, vec } from './types.js';
import type { Type } from './types.js';

/** The activations of the epilogue. */
export const ACTIVATIONS = ['none', 'relu', 'relu6', 'leaky_relu', 'silu', 'hard_swish', 'gelu', 'sigmoid', 'clamp'] as const;
export type Activation = (typeof ACTIVATIONS)[number];

/** How the bias is stored: no bias, fp32, or the output dtype. */
export const BIAS_KINDS = ['none', 'fp32', 'dtype'] as const;
export type BiasKind = (typeof BIAS_KINDS)[number];

/** The compiled-in shape of an epilogue. */
export interface Epilogue {
  readonly act: Activation;
  readonly bias: BiasKind;
  /** Adds beta * r, r in y's layout and dtype. */
  readonly residual: boolean;
}

/** The bare store: no activation, no bias, no residual (and no alpha: nothing to fuse). */
export const NO_EPILOGUE: Epilogue = { act: 'none', bias: 'none', residual: false };

/** Whether the epilogue does nothing (a plain cast and store). */
export function isBareEpilogue(e: Epilogue): boolean {
  return e.act === 'none' && e.bias === 'none' && !e.residual;
}

/**
 * The epilogue's part of a kernel name: empty when bare, so bare kernels keep their names;
 * otherwise `ep<act>` then `b32` / `bd` (bias fp32 / dtype) and `res`, e.g. `epsilu_b32_res`.
 */
export function epilogueTag(e: Epilogue): string {
  if (isBareEpilogue(e)) return '';
  const bias = e.bias === 'fp32' ? '_b32' : e.bias === 'dtype' ? '_bd' : '';
  return `ep${e.act.replace('_', '')}${bias}${e.residual ? '_res' : ''}`;
}

/** One kernel argument the epilogue adds (the families' kernarg tables append these). */
export interface EpilogueKernarg extends KernargEntry {
  readonly name: 'bias' | 'residual' | 'bias_bytes' | 'residual_bytes' | 'alpha' | 'beta' | 'slope' | 'lo' | 'hi';
  readonly type: 'ptr' | 'i32' | 'f32';
  readonly access?: 'read';
}

/** The arguments an epilogue needs, in order; none for a bare epilogue. */
export function epilogueKernargs(e: Epilogue): EpilogueKernarg[] {
  if (isBareEpilogue(e)) return [];
  const args: EpilogueKernarg[] = [];
  if (e.bias !== 'none') args.push({ name: 'bias', type: 'ptr', access: 'read', doc: `per output channel, [K] ${e.bias === 'fp32' ? 'fp32' : 'of the output dtype'}` });
  if (e.residual) args.push({ name: 'residual', type: 'ptr', access: 'read', doc: "added tensor in y's layout and dtype (the same view as y)" });
  if (e.bias !== 'none') args.push({ name: 'bias_bytes', type: 'i32', doc: 'bytes of bias' });
  if (e.residual) args.push({ name: 'residual_bytes', type: 'i32', doc: 'bytes of the residual view (as y_bytes)' });
  args.push({ name: 'alpha', type: 'f32', doc: 'scale of the accumulated sum' });
  if (e.residual) args.push({ name: 'beta', type: 'f32', doc: 'scale of the residual' });
  if (e.act === 'leaky_relu') args.push({ name: 'slope', type: 'f32', doc: 'leaky_relu: slope below zero' });
  if (e.act === 'clamp') args.push({ name: 'lo', type: 'f32', doc: 'clamp: lower bound' }, { name: 'hi', type: 'f32', doc: 'clamp: upper bound' });
  return args;
}

/** Where a run of consecutive outputs sits: its first output channel and its first element of y's view. */
export interface EpiloguePosition {
  /** Output channel of the run's first value (i32); the run's channels are consecutive. */
  readonly channel: Value;
  /** Element index in y's view of the run's first value (i32); the residual is read there. */
  readonly element: Value;
  /**
   * The run's bias, loaded once by {@link StoreEpilogue.loadBias} where many runs share channels
   * (a lane's channels repeat over its pixels): saves a load per run and the registers it holds.
   */
  readonly bias?: readonly Value[];
  /**
   * The run's residual as loaded by {@link StoreEpilogue.loadResidual}, where a kernel reads it
   * ahead of its main loop (the read's latency then hides behind the loop, not behind the store).
   */
  readonly residual?: readonly Value[];
}

/** One fused store: an fp32 run, where it sits, and how the kernel stores the finished (still fp32) run. */
export interface EpilogueStore {
  readonly acc: Value;
  readonly at: EpiloguePosition;
  readonly store: (b: Builder, value: Value) => void;
}

/** An epilogue opened in one kernel: its arguments read once, applied at each store. */
export interface StoreEpilogue {
  readonly epilogue: Epilogue;
  /**
   * `acc` (f32 or <n x f32>, n consecutive channels of one pixel) through the epilogue, still fp32.
   * Bias and residual are read as runs at `at` (out-of-range reads give zero, as for the store they feed).
   */
  apply(b: Builder, acc: Value, at: EpiloguePosition): Value;
  /**
   * A thread's stores through the epilogue, its bias and residual reads issued ahead of them: in
   * batches that hold at most `registers` ({@link PREFETCH_REGISTERS} unless the kernel knows its
   * registers are free, e.g. once its accumulators are staged in LDS) of reads, every read of a batch
   * precedes the batch's first store. Interleaved, each read would sit behind the previous store in
   * program order, which neither LLVM nor ptxas may reorder (the buffers may alias y), so every
   * store would expose a full memory latency. Each store is made (its address math emitted) as its
   * batch forms, so a thread holds the addresses of one batch, not of all its stores.
   */
  storeAll(b: Builder, stores: readonly (() => EpilogueStore)[], registers?: number): void;
  /** The fp32 bias of `n` consecutive channels from `channel`, for {@link EpiloguePosition.bias}; undefined without a bias. */
  loadBias(b: Builder, channel: Value, n: number): Value[] | undefined;
  /** The residual run of `n` elements from element `element`, as loaded, for {@link EpiloguePosition.residual}; undefined without a residual. */
  loadResidual(b: Builder, element: Value, n: number): Value[] | undefined;
}

/**
 * 32-bit registers of bias and residual a thread reads ahead of its stores: two 16-byte vectors (or
 * eight channel pairs) in flight per thread, 32 bytes, which over the threads of an SM's resident
 * blocks already covers the memory's bandwidth-latency product; more would hold registers that the
 * largest-accumulator kernels do not have (a 128-accumulator wgmma tile spills at 16).
 */
export const PREFETCH_REGISTERS = 8;

const LOG2E = Math.LOG2E;
const GELU_K1 = -2 * Math.LOG2E * Math.sqrt(2 / Math.PI);
const GELU_K2 = 0.044715 * GELU_K1;
const MAX_LOAD_BYTES = 16;

/**
 * Opens the epilogue in a kernel whose parameters include {@link epilogueKernargs}(e): makes the
 * bias and residual buffers and reads the scalars. `dtype` is y's (and the residual's) element type.
 * Call it where the arguments dominate every store (the kernel's entry or the store block).
 */
export function openEpilogue(t: Target, b: Builder, e: Epilogue, dtype: 'fp16' | 'bf16'): StoreEpilogue {
  const outType = dtype === 'bf16' ? bfloat : half;
  if (isBareEpilogue(e)) return { epilogue: e, apply: (_b, acc) => acc, storeAll: (bb, stores) => stores.forEach((make) => { const s = make(); s.store(bb, s.acc); }), loadBias: () => undefined, loadResidual: () => undefined };
  const bias = e.bias === 'none' ? undefined : { buf: t.globalBuffer(b, b.arg('bias'), b.arg('bias_bytes')), type: e.bias === 'fp32' ? f32 : outType };
  const residual = e.residual ? t.globalBuffer(b, b.arg('residual'), b.arg('residual_bytes')) : undefined;
  const alpha = b.arg('alpha');
  const beta = e.residual ? b.arg('beta') : undefined;
  const params = { slope: e.act === 'leaky_relu' ? b.arg('slope') : undefined, lo: e.act === 'clamp' ? b.arg('lo') : undefined, hi: e.act === 'clamp' ? b.arg('hi') : undefined };
  const runOf = (acc: Value) => (acc.type.kind === 'vector' ? acc.type.count : 1);
  const loadBias = (bb: Builder, channel: Value, n: number) => (bias ? loadRun(t, bb, bias.buf, channel, bias.type, n, (l) => widen(bb, [l])) : undefined);
  // The residual stays as loaded (half the registers while it waits) until `finish` widens it.
  const loadResidual = (bb: Builder, element: Value, n: number) => (residual ? loadRun(t, bb, residual, element, outType, n, (l) => [l]) : undefined);
  const valuesOf = (bb: Builder, acc: Value) => (runOf(acc) === 1 ? [acc] : bb.elements(acc));
  /** The epilogue of the run `values` with its reads done: the fp32 bias and the residual as loaded. */
  const finish = (bb: Builder, values: Value[], biasRun: Value[] | undefined, residualRun: Value[] | undefined) => {
    const n = values.length;
    const r = residualRun ? widen(bb, residualRun) : undefined;
    const out = values.map((v, i) => {
      let z = bb.fmul(v, alpha);
      if (biasRun) z = bb.fadd(z, biasRun[i]!);
      if (r && beta) z = bb.fadd(z, bb.fmul(r[i]!, beta));
      return activate(bb, e.act, z, params);
    });
    return n === 1 ? out[0]! : bb.vector(out);
  };
  return {
    epilogue: e,
    loadBias,
    loadResidual,
    apply(bb, acc, at) {
      const values = valuesOf(bb, acc);
      return finish(bb, values, at.bias ? [...at.bias] : loadBias(bb, at.channel, values.length), at.residual ? [...at.residual] : loadResidual(bb, at.element, values.length));
    },
    storeAll(bb, stores, budget = PREFETCH_REGISTERS) {
      const registers = (s: EpilogueStore) =>
        (residual && !s.at.residual ? runRegisters(outType, runOf(s.acc)) : 0) + (bias && !s.at.bias ? runRegisters(bias.type, runOf(s.acc)) : 0);
      let batch: EpilogueStore[] = [];
      let held = 0;
      const flush = () => {
        const read = batch.map((s) => ({
          bias: s.at.bias ? [...s.at.bias] : loadBias(bb, s.at.channel, runOf(s.acc)),
          residual: s.at.residual ? [...s.at.residual] : loadResidual(bb, s.at.element, runOf(s.acc)),
        }));
        batch.forEach((s, i) => s.store(bb, finish(bb, valuesOf(bb, s.acc), read[i]!.bias, read[i]!.residual)));
        batch = [];
        held = 0;
      };
      for (const make of stores) {
        const s = make();
        const need = registers(s);
        if (batch.length > 0 && held + need > budget) flush();
        batch.push(s);
        held += need;
      }
      flush();
    },
  };
}

/** `n` consecutive elements of `type` from element `first` of `buf` in loads of up to 16 bytes, each passed through `each` as it is loaded. */
function loadRun(t: Target, b: Builder, buf: GlobalBuffer, first: Value, type: Type, n: number, each: (loaded: Value) => Value[]): Value[] {
  const bytes = isF32(type) ? 4 : 2;
  const per = Math.min(n, MAX_LOAD_BYTES / bytes);
  const out: Value[] = [];
  for (let i = 0; i < n; i += per) {
    const count = Math.min(per, n - i);
    const offset = b.mul(i === 0 ? first : b.add(first, i), bytes);
    out.push(...each(t.globalLoad(b, buf, offset, count === 1 ? type : vec(count, type), { align: bytes * count })));
  }
  return out;
}

/** 32-bit registers that a run of `n` elements of `type` holds as loaded (a lone 2-byte element takes a whole one). */
function runRegisters(type: Type, n: number): number {
  return Math.ceil((n * (isF32(type) ? 4 : 2)) / 4);
}

/** Loaded runs as fp32 scalars. */
function widen(b: Builder, loaded: readonly Value[]): Value[] {
  return loaded.flatMap((l) => (l.type.kind === 'vector' ? b.elements(l) : [l])).map((v) => (isF32(v.type) ? v : b.fpext(v, f32)));
}

function isF32(type: Type): boolean {
  return type.kind === 'float' && type.name === 'float';
}

/** act(z) in fp32. */
function activate(b: Builder, act: Activation, z: Value, p: { slope?: Value; lo?: Value; hi?: Value }): Value {
  const max = (x: Value, y: Value | number) => b.intrinsic('llvm.maxnum.f32', f32, [x, typeof y === 'number' ? b.f32(y) : y]);
  const min = (x: Value, y: Value | number) => b.intrinsic('llvm.minnum.f32', f32, [x, typeof y === 'number' ? b.f32(y) : y]);
  const exp2 = (x: Value) => b.intrinsic('llvm.exp2.f32', f32, [x]);
  /** num / (1 + 2^power). */
  // arcp afn: a reciprocal and a multiply (v_rcp_f32; div.approx.f32), within 2 ulp like the exp2
  // it divides by, instead of IEEE division's scale-and-fixup sequence. 1/inf is 0, so still no NaN.
  const overOnePlusExp2 = (num: Value | number, power: Value) =>
    b.floatOp('fdiv', typeof num === 'number' ? b.f32(num) : num, b.fadd(exp2(power), 1), { flags: ['arcp', 'afn'] });
  switch (act) {
    case 'none': return z;
    case 'relu': return max(z, 0);
    case 'relu6': return min(max(z, 0), 6);
    case 'leaky_relu': return b.select(b.fcmp('ogt', z, 0), z, b.fmul(z, p.slope!));
    case 'clamp': return min(max(z, p.lo!), p.hi!);
    case 'hard_swish': return b.fmul(b.fmul(z, min(max(b.fadd(z, 3), 0), 6)), 1 / 6);
    case 'sigmoid': return overOnePlusExp2(1, b.fmul(z, -LOG2E));
    case 'silu': return overOnePlusExp2(z, b.fmul(z, -LOG2E));
    case 'gelu': return overOnePlusExp2(z, b.fmul(z, b.fadd(b.fmul(b.fmul(z, z), GELU_K2), GELU_K1)));
  }
}
