// JavaScript bodies for hip-runtime's fake binding that do what the conv and split-reduce kernels
// do (tests and the bundle self-test use them to run the bench without a GPU), reading every size and pointer from the packed kernarg buffer (so a
// wrong offset, byte count or launch order in the bench shows up as a wrong result).
import { kernargLayout, splitSlice, type Problem, type Variant } from '@rocke/conv-direct';
import type { FakeKernel, FakeKernelContext } from '@rocke/hip-runtime/testing';
import type { Epilogue } from '@rocke/ir';
import { applyEpilogue, convForward, convGeometry, makeProblem, type EpilogueValues } from '@rocke/reference';
import { foldSlices, kernargTable as reduceKernargTable } from '@rocke/split-reduce';

function readArgs(ctx: FakeKernelContext, slots: readonly { name: string; type: string; offset: number }[]): Record<string, number | bigint> {
  const out: Record<string, number | bigint> = {};
  for (const s of slots) {
    out[s.name] =
      s.type === 'ptr' ? ctx.args.getBigUint64(s.offset, true)
      : s.type === 'i64' ? Number(ctx.args.getBigInt64(s.offset, true))
      : s.type === 'f32' ? ctx.args.getFloat32(s.offset, true)
      : ctx.args.getInt32(s.offset, true);
  }
  return out;
}

const u16 = (bytes: Uint8Array) => new Uint16Array(bytes.slice().buffer);

/** Channels [c0, c1) of an NHWC / KRSC tensor with `C` channels in the last dimension. */
function channelSlice(t: Uint16Array, C: number, c0: number, c1: number): Uint16Array {
  const rows = t.length / C;
  const out = new Uint16Array(rows * (c1 - c0));
  for (let r = 0; r < rows; r++) out.set(t.subarray(r * C + c0, r * C + c1), r * (c1 - c0));
  return out;
}

/**
 * A conv kernel body for `variant` (dense, split_c or grouped) with the problem's fixed parts (filter,
 * stride, pad, dtype) baked in, like a compiled spec; N, H, W, C, K and the splits come from the
 * kernargs. `dropChannels` simulates a broken kernel that skips the first channels. With a fused
 * `epilogue` (not split_c) it reads bias, residual and scalars from its arguments and applies it;
 * `dropBias` simulates a kernel that forgets the bias.
 */
export function fakeConvKernel(
  variant: Variant,
  baked: Pick<Problem, 'R' | 'S' | 'strideH' | 'strideW' | 'padH' | 'padW' | 'dtype'>,
  dropChannels = 0,
  epilogue?: Epilogue,
  dropBias = false,
): FakeKernel {
  const { slots } = kernargLayout(variant, epilogue);
  return (ctx) => {
    const a = readArgs(ctx, slots);
    const p: Problem = { ...baked, N: a['N'] as number, H: a['H'] as number, W: a['W'] as number, C: a['C'] as number, K: a['K'] as number, dilationH: 1, dilationW: 1, groups: a['groups'] as number };
    let x = u16(ctx.memory(a['x'] as bigint, a['x_bytes'] as number));
    const w = u16(ctx.memory(a['w'] as bigint, a['w_bytes'] as number));
    if (x.length !== p.N * p.H * p.W * p.C) throw new Error(`x_bytes ${a['x_bytes']} does not match N H W C`);
    if (dropChannels) {
      x = x.slice();
      for (let i = 0; i < x.length; i += p.C) x.fill(0, i, i + dropChannels);
    }
    if (variant !== 'split_c') {
      const ref = convForward(p, x, w);
      const y = epilogue ? applyEpilogue(ref.geometry, ref.y32, epilogueArgs(ctx, a, epilogue, p.K, ref.y.length, 0, dropBias)).y : ref.y;
      const out = ctx.memory(a['y'] as bigint, a['y_bytes'] as number);
      if (out.byteLength !== y.byteLength) throw new Error(`y_bytes ${a['y_bytes']} does not match the output`);
      out.set(new Uint8Array(y.buffer, y.byteOffset, y.byteLength));
      return;
    }
    const splits = a['splits'] as number;
    const ws = ctx.memory(a['ws'] as bigint, a['ws_bytes'] as number);
    for (let s = 0; s < splits; s++) {
      // Slices of single channels, uneven as the kernels' (which use runs of ck): the reduce sums them all the same.
      const { c0, c1 } = splitSlice(p.C, 1, splits, s);
      const part = convForward({ ...p, C: c1 - c0 }, channelSlice(x, p.C, c0, c1), channelSlice(w, p.C, c0, c1)).y32;
      ws.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), s * part.byteLength);
    }
  };
}

/** The epilogue values a fused kernel's arguments hold (`count` outputs from channel `channel0`). */
function epilogueArgs(ctx: FakeKernelContext, a: Record<string, number | bigint>, e: Epilogue, K: number, count: number, channel0: number, dropBias: boolean): EpilogueValues {
  const values: EpilogueValues = { act: e.act, alpha: a['alpha'] as number };
  if (e.bias !== 'none' && !dropBias) {
    const bytes = ctx.memory(a['bias'] as bigint, a['bias_bytes'] as number).slice().buffer;
    const bias = e.bias === 'fp32' ? new Float32Array(bytes) : new Uint16Array(bytes);
    // The reduce's launch covers elements from channel0: rotate so element 0 is channel 0 of this view.
    values.bias = channel0 ? (bias instanceof Float32Array ? Float32Array.from({ length: K }, (_, k) => bias[(k + channel0) % K]!) : Uint16Array.from({ length: K }, (_, k) => bias[(k + channel0) % K]!)) : bias;
  }
  if (e.residual) {
    values.residual = new Uint16Array(ctx.memory(a['residual'] as bigint, a['residual_bytes'] as number).slice().buffer);
    values.beta = a['beta'] as number;
  }
  if (e.act === 'leaky_relu') values.slope = a['slope'] as number;
  if (e.act === 'clamp') Object.assign(values, { lo: a['lo'] as number, hi: a['hi'] as number });
  if (values.residual && values.residual.length !== count) throw new Error(`residual_bytes ${a['residual_bytes']} does not match ${count} outputs`);
  return values;
}

/** The split-reduce kernel body: folds `splits` fp32 slices in order into y (then a fused epilogue, if any). */
export function fakeReduceKernel(dtype: 'fp16' | 'bf16', epilogue?: Epilogue): FakeKernel {
  const slots = (() => {
    let off = 0;
    return reduceKernargTable(epilogue).map((e) => {
      const size = e.type === 'i32' || e.type === 'f32' ? 4 : 8;
      off = Math.ceil(off / size) * size;
      const s = { name: e.name, type: e.type, offset: off };
      off += size;
      return s;
    });
  })();
  return (ctx) => {
    const a = readArgs(ctx, slots);
    const count = a['count'] as number;
    const splits = a['splits'] as number;
    const stride = a['slice_stride'] as number;
    const ws = new Float32Array(ctx.memory(a['ws'] as bigint, 4 * (stride * (splits - 1) + count)).slice().buffer);
    let y = foldSlices(ws, count, splits, dtype, stride);
    if (epilogue) {
      const K = epilogue.bias === 'none' ? 1 : (a['channels'] as number);
      // The folded fp32 sums as a [count / K, K] output, the epilogue applied per channel.
      const sums = new Float32Array(count);
      for (let i = 0; i < count; i++) {
        let acc = ws[i]!;
        for (let s = 1; s < splits; s++) acc = Math.fround(acc + ws[s * stride + i]!);
        sums[i] = acc;
      }
      const geometry = convGeometry(makeProblem({ N: 1, H: count / K, W: 1, C: 1, K, R: 1, S: 1, dtype }));
      y = applyEpilogue(geometry, sums, epilogueArgs(ctx, a, epilogue, K, count, epilogue.bias === 'none' ? 0 : (a['channel0'] as number), false)).y;
    }
    ctx.memory(a['y'] as bigint, a['y_bytes'] as number).set(new Uint8Array(y.buffer, y.byteOffset, y.byteLength));
  };
}
