// JavaScript bodies for hip-runtime's fake binding that do what the conv and split-reduce kernels
// do (tests and the bundle self-test use them to run the bench without a GPU), reading every size and pointer from the packed kernarg buffer (so a
// wrong offset, byte count or launch order in the bench shows up as a wrong result).
import { kernargLayout, type Problem, type Variant } from '@rocke/conv-direct';
import type { FakeKernel, FakeKernelContext } from '@rocke/hip-runtime/testing';
import { convForward } from '@rocke/reference';
import { foldSlices, KERNARG_TABLE } from '@rocke/split-reduce';

function readArgs(ctx: FakeKernelContext, slots: readonly { name: string; type: string; offset: number }[]): Record<string, number | bigint> {
  const out: Record<string, number | bigint> = {};
  for (const s of slots) {
    out[s.name] = s.type === 'ptr' ? ctx.args.getBigUint64(s.offset, true) : s.type === 'i64' ? Number(ctx.args.getBigInt64(s.offset, true)) : ctx.args.getInt32(s.offset, true);
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
 * kernargs. `dropChannels` simulates a broken kernel that skips the first channels.
 */
export function fakeConvKernel(variant: Variant, baked: Pick<Problem, 'R' | 'S' | 'strideH' | 'strideW' | 'padH' | 'padW' | 'dtype'>, dropChannels = 0): FakeKernel {
  const { slots } = kernargLayout(variant);
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
      const y = convForward(p, x, w).y;
      const out = ctx.memory(a['y'] as bigint, a['y_bytes'] as number);
      if (out.byteLength !== y.byteLength) throw new Error(`y_bytes ${a['y_bytes']} does not match the output`);
      out.set(new Uint8Array(y.buffer, y.byteOffset, y.byteLength));
      return;
    }
    const splits = a['splits'] as number;
    const cs = p.C / splits;
    const ws = ctx.memory(a['ws'] as bigint, a['ws_bytes'] as number);
    for (let s = 0; s < splits; s++) {
      const part = convForward({ ...p, C: cs }, channelSlice(x, p.C, s * cs, (s + 1) * cs), channelSlice(w, p.C, s * cs, (s + 1) * cs)).y32;
      ws.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), s * part.byteLength);
    }
  };
}

/** The split-reduce kernel body: folds `splits` fp32 slices in order into y. */
export function fakeReduceKernel(dtype: 'fp16' | 'bf16'): FakeKernel {
  const slots = (() => {
    let off = 0;
    return KERNARG_TABLE.map((e) => {
      const size = e.type === 'i32' ? 4 : 8;
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
    const y = foldSlices(ws, count, splits, dtype, stride);
    ctx.memory(a['y'] as bigint, a['y_bytes'] as number).set(new Uint8Array(y.buffer, y.byteOffset, y.byteLength));
  };
}
