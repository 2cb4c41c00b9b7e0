/**
 * The depthwise direct convolution (groups = C, K = M*C), written once for gfx950, gfx942 and
 * sm_90. No MMA: each output is R*S multiply-adds of one input channel, so the kernel is built
 * around bytes:
 * - the workgroup stages its halo tile (tile_k/M input channels, NHWC) in LDS with 16-byte loads
 *   along the channels, out-of-range pixels reading zero through the target's guarded loads, so
 *   each input byte crosses from L2 once per tile; the tile's weights are staged as [tap][channel];
 * - each thread owns one 8-channel output vector, one output row and `waves_m` adjacent output
 *   columns: per filter row it holds that row's S weight vectors in f32 registers and streams the
 *   (columns - 1) * stride + S input vectors of the row past all its columns (fp32 FMAs on
 *   `<8 x float>`: VALU on AMD, CUDA cores on sm_90);
 * - outputs leave as one 16-byte NHWK store per column.
 * C and K need not be multiples of 8: when C (or K) is not, the staging (or the store) takes
 * 2-byte elements, each checked against C (K), on a uniform branch.
 */
import { bfloat, f32, getTarget, half, i16, i8, vec, zero, type Builder, type GlobalBuffer, type StoreEpilogue, type Target, type Type, type Value } from '@rocke/ir';
import { DEPTHWISE_STAGE_BATCH, DEPTHWISE_VECTOR, depthwiseGeometry, type DepthwiseGeometry } from '../depthwise-geometry.js';
import { ELEMENT_BYTES } from '../problem.js';
import type { Spec } from '../spec.js';
import { openConvKernel, openStoreEpilogue, SENTINEL_OFFSET, type ConvKernel, type KernelArgs } from './open.js';
import { emitTileOrigin } from './grid-decode.js';

const E = ELEMENT_BYTES;
const V = DEPTHWISE_VECTOR;

/** Builds the depthwise kernel of a validated depthwise spec (buildConvKernel validates and dispatches here). */
export function buildDepthwiseKernel(spec: Spec, t: Target = getTarget(spec.target)): ConvKernel {
  const g = depthwiseGeometry(spec);
  const { module, name, abi, args, b, lds } = openConvKernel(
    spec,
    t,
    {
      workgroupSize: g.threads,
      ...(spec.waves_per_eu !== null ? { wavesPerEu: spec.waves_per_eu } : {}),
      ids: { workitem: ['x'], workgroup: ['x'] },
    },
    16,
  );
  emitDepthwiseBody(b, args, t, spec, g, lds);
  b.ret();
  return {
    spec,
    target: t,
    module,
    name,
    threads: g.threads,
    dynamicSharedBytes: g.ldsBytes,
    abi,
    schedule: 'single-stage',
    fragmentLoad: 'vector',
    weightLayout: 'tap-major',
    epilogue: 'direct',
  };
}

function emitDepthwiseBody(b: Builder, args: KernelArgs, t: Target, spec: Spec, g: DepthwiseGeometry, lds: Value): void {
  const tid = t.workitemId(b, 'x');
  const K = args.K;
  const origin = emitTileOrigin(b, t, spec, () => ({ kTiles: b.udiv(b.add(K, spec.tile_k - 1), spec.tile_k, 'k.tiles') }));
  const kBase = b.mul(origin.kTile, spec.tile_k, 'k.base');
  // kBase is a multiple of 8, hence of M: the tile's input channels start at kBase / M.
  const cBase = g.multiplier === 1 ? kBase : b.udiv(kBase, g.multiplier, 'c.base');
  const ldsAt = (byteOffset: Value) => b.gep(i8, lds, [byteOffset]);

  stageInput(b, args, t, g, tid, origin, cBase, ldsAt);
  stageWeights(b, args, t, spec, g, tid, kBase, ldsAt);
  t.barrier(b);

  // Thread -> (output vector, column group, row), the vector fastest: a pixel's vectors are adjacent lanes.
  const ov = b.urem(tid, g.outVectors, 'o.vec');
  const rest = b.udiv(tid, g.outVectors);
  const group = b.urem(rest, g.columnGroups, 'o.group');
  const row = b.udiv(rest, g.columnGroups, 'o.row');
  const acc = emitTaps(b, spec, g, ov, group, row, ldsAt);
  emitStores(b, args, t, spec, g, acc, { kBase, ov, group, row, origin });
}

interface Origin {
  readonly image: Value;
  readonly oh0: Value;
  readonly ow0: Value;
  readonly ih0: Value;
  readonly iw0: Value;
}

/**
 * Halo tile -> LDS `[ldsInH][ldsInW][inChannels + lds_pad]`, in batches of DEPTHWISE_STAGE_BATCH
 * passes whose loads are all issued before their LDS writes.
 */
function stageInput(b: Builder, args: KernelArgs, t: Target, g: DepthwiseGeometry, tid: Value, o: Origin, cBase: Value, ldsAt: (v: Value) => Value): void {
  const C = args.C;
  const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
  const imageBase = b.mul(o.image, args.x_stride_n, 'x.image');
  const uneven = g.xVectors % g.threads !== 0;
  const slotAt = (j: number) => {
    const v = j === 0 ? tid : b.add(tid, j * g.threads, `xv${j}`);
    const cv = b.urem(v, g.inVectors);
    const pos = b.udiv(v, g.inVectors);
    const ih = b.add(o.ih0, b.udiv(pos, g.ldsInW));
    const iw = b.add(o.iw0, b.urem(pos, g.ldsInW));
    const c = b.add(cBase, b.mul(cv, V), `x.c${j}`);
    // Unsigned compares also reject the (negative) padding rows and columns.
    let inside = b.and(b.icmp('ult', ih, args.H), b.icmp('ult', iw, args.W));
    const inTile = uneven && (j + 1) * g.threads > g.xVectors ? b.icmp('ult', v, g.xVectors) : undefined;
    if (inTile) inside = b.and(inside, inTile);
    const elem = b.add(b.add(imageBase, b.add(b.mul(ih, args.x_stride_h), b.mul(iw, args.x_stride_w))), c, `x.elem${j}`);
    return { inside, elem, c, inTile, lds: b.mul(b.add(b.mul(pos, g.pixelStride), b.mul(cv, V)), E, `x.lds${j}`) };
  };
  const whole = b.icmp('eq', b.and(C, V - 1), 0, 'c.whole.vectors');
  const passes = Array.from({ length: g.xPasses }, (_, j) => j);
  inBatches(passes, DEPTHWISE_STAGE_BATCH, (js) => {
    const batch = js.map(slotAt);
    const vals = b.ifThenElse(
      whole,
      // C % 8 == 0: a vector is wholly inside C or wholly outside.
      () => batch.map((s) => t.globalLoad(b, xBuf, b.select(b.and(s.inside, b.icmp('ult', s.c, C)), b.mul(s.elem, E), SENTINEL_OFFSET), vec(V, i16), { align: 16 })),
      () =>
        batch.map((s) => {
          let out: Value = zero(vec(V, i16));
          for (let i = 0; i < V; i++) {
            const ok = b.and(s.inside, b.icmp('ult', b.add(s.c, i), C));
            out = b.insertElement(out, t.globalLoad(b, xBuf, b.select(ok, b.mul(b.add(s.elem, i), E), SENTINEL_OFFSET), i16, { align: E }), i);
          }
          return out;
        }),
      'x.stage',
    );
    batch.forEach((s, j) => {
      const store = () => b.store(vals[j]!, ldsAt(s.lds), { align: 16 });
      if (s.inTile) b.ifThen(s.inTile, store, 'x.tail');
      else store();
    });
  });
}

/**
 * Runs `f` on consecutive batches of `size` items. Staging batches bound the loads in flight per
 * thread, so a large halo tile on few threads does not hold dozens of 16-byte loads in registers
 * (the geometry's register estimate counts one batch).
 */
function inBatches<T>(items: readonly T[], size: number, f: (batch: readonly T[]) => void): void {
  for (let i = 0; i < items.length; i += size) f(items.slice(i, i + size));
}

/** Weights of the tile's output channels -> LDS `[tap][tile_k]` after the halo tile; read coalesced along w's [K][R*S]. */
function stageWeights(b: Builder, args: KernelArgs, t: Target, spec: Spec, g: DepthwiseGeometry, tid: Value, kBase: Value, ldsAt: (v: Value) => Value): void {
  const RS = spec.R * spec.S;
  const wBuf = t.globalBuffer(b, args.w, args.w_bytes);
  // Elements of w this tile may read: its channels' R*S taps, fewer in the last channel tile.
  const limit = b.umin(b.mul(b.sub(args.K, kBase), RS), g.wElems, 'w.limit');
  const first = b.mul(kBase, RS, 'w.first');
  const wPasses = Array.from({ length: g.wPasses }, (_, j) => j);
  inBatches(wPasses, 4 * DEPTHWISE_STAGE_BATCH, (batch) => {
    const slots = batch.map((j) => {
      const v = j === 0 ? tid : b.add(tid, j * g.threads, `wv${j}`);
      const val = t.globalLoad(b, wBuf, b.select(b.icmp('ult', v, limit), b.mul(b.add(first, v), E), SENTINEL_OFFSET), i16, { align: E });
      const lds = b.add(g.xBytes, b.mul(b.add(b.mul(b.urem(v, RS), spec.tile_k), b.udiv(v, RS)), E), `w.lds${j}`);
      const inTile = (j + 1) * g.threads > g.wElems ? b.icmp('ult', v, g.wElems) : undefined;
      return { val, lds, inTile };
    });
    for (const s of slots) {
      const store = () => b.store(s.val, ldsAt(s.lds), { align: E });
      if (s.inTile) b.ifThen(s.inTile, store, 'w.tail');
      else store();
    }
  });
}

/**
 * The tap loop, unrolled: per filter row, the row's S weight vectors in f32, then each input
 * column of the row once, fused into every output column it reaches.
 */
function emitTaps(b: Builder, spec: Spec, g: DepthwiseGeometry, ov: Value, group: Value, row: Value, ldsAt: (v: Value) => Value): Value[] {
  const elem = spec.dtype === 'bf16' ? bfloat : half;
  const f8 = vec(V, f32);
  const cols = g.columnsPerThread;
  // Element offset of the thread's first input pixel and channels in the halo tile.
  const firstPixel = b.add(b.mul(b.mul(row, spec.stride_h), g.ldsInW), b.mul(group, cols * spec.stride_w));
  const xThread = b.mul(b.add(b.mul(firstPixel, g.pixelStride), b.mul(ov, spec.ck)), E, 'x.thread');
  const wThread = b.add(b.mul(ov, V * E), g.xBytes, 'w.thread');
  // Input channel i of the thread's ck feeds output channels i*M .. i*M + M-1.
  const spread = Array.from({ length: V }, (_, i) => Math.floor(i / g.multiplier));
  let acc: Value[] = Array.from({ length: cols }, () => zero(f8));
  for (let r = 0; r < spec.R; r++) {
    const w = Array.from({ length: spec.S }, (_, s) =>
      b.fpext(b.load(vec(V, elem), ldsAt(b.add(wThread, (r * spec.S + s) * spec.tile_k * E)), { align: 16 }), f8),
    );
    for (let j = 0; j < g.columnsRead; j++) {
      const off = (r * g.ldsInW + j) * g.pixelStride * E;
      const x = b.fpext(b.load(vec(spec.ck, elem), ldsAt(b.add(xThread, off)), { align: spec.ck * E }), vec(spec.ck, f32));
      const xs = g.multiplier === 1 ? x : b.shuffleVector(x, x, spread);
      acc = acc.map((a, c) => {
        const s = j - c * spec.stride_w;
        return s >= 0 && s < spec.S ? b.fma(xs, w[s]!, a) : a;
      });
    }
  }
  return acc;
}

/** One 16-byte NHWK store per output column (K % 8 == 0), else 2-byte stores each checked against K. */
function emitStores(
  b: Builder,
  args: KernelArgs,
  t: Target,
  spec: Spec,
  g: DepthwiseGeometry,
  acc: readonly Value[],
  o: { kBase: Value; ov: Value; group: Value; row: Value; origin: Origin },
): void {
  const K = args.K;
  const elem = spec.dtype === 'bf16' ? bfloat : half;
  const yBuf = t.globalBuffer(b, args.y, args.y_bytes);
  const k = b.add(o.kBase, b.mul(o.ov, V), 'y.k');
  const oh = b.add(o.origin.oh0, o.row, 'y.oh');
  const ow0 = b.add(o.origin.ow0, b.mul(o.group, g.columnsPerThread), 'y.ow0');
  const rowOk = b.icmp('ult', oh, args.Ho);
  const rowElem = b.add(b.add(b.mul(o.origin.image, args.y_stride_n), b.mul(oh, args.y_stride_h)), k, 'y.row');
  const epilogue = openStoreEpilogue(t, b, spec);
  if (epilogue) {
    emitFusedStores(b, args, t, yBuf, epilogue, acc, { k, ow0, rowOk, rowElem, elem });
    return;
  }
  const columns = acc.map((a, c) => {
    const ow = b.add(ow0, c);
    return {
      value: b.bitcast(b.fptrunc(a, vec(V, elem)), vec(V, i16)),
      ok: b.and(rowOk, b.icmp('ult', ow, args.Wo)),
      elem: b.add(rowElem, b.mul(ow, args.y_stride_w)),
    };
  });
  const whole = b.icmp('eq', b.and(K, V - 1), 0, 'k.whole.vectors');
  b.ifThenElse(
    whole,
    () => {
      for (const c of columns) t.globalStore(b, yBuf, b.select(b.and(c.ok, b.icmp('ult', k, K)), b.mul(c.elem, E), SENTINEL_OFFSET), c.value, { align: 16 });
      return [];
    },
    () => {
      for (const c of columns)
        for (let i = 0; i < V; i++) {
          const ok = b.and(c.ok, b.icmp('ult', b.add(k, i), K));
          t.globalStore(b, yBuf, b.select(ok, b.mul(b.add(c.elem, i), E), SENTINEL_OFFSET), b.extractElement(c.value, i), { align: E });
        }
      return [];
    },
    'y.store',
  );
}

/**
 * The stores of {@link emitStores} through a fused epilogue: runs of V channels on the
 * whole-vector path, one element at a time on the tail path (no bias or residual read straddles
 * the end of K).
 */
function emitFusedStores(
  b: Builder,
  args: KernelArgs,
  t: Target,
  yBuf: GlobalBuffer,
  epilogue: StoreEpilogue,
  acc: readonly Value[],
  o: { k: Value; ow0: Value; rowOk: Value; rowElem: Value; elem: Type },
): void {
  const K = args.K;
  const columns = acc.map((a, c) => {
    const ow = b.add(o.ow0, c);
    return { acc: a, ok: b.and(o.rowOk, b.icmp('ult', ow, args.Wo)), elem: b.add(o.rowElem, b.mul(ow, args.y_stride_w)) };
  });
  const whole = b.icmp('eq', b.and(K, V - 1), 0, 'k.whole.vectors');
  b.ifThenElse(
    whole,
    () => {
      for (const c of columns) {
        const value = b.bitcast(b.fptrunc(epilogue.apply(b, c.acc, { channel: o.k, element: c.elem }), vec(V, o.elem)), vec(V, i16));
        t.globalStore(b, yBuf, b.select(b.and(c.ok, b.icmp('ult', o.k, K)), b.mul(c.elem, E), SENTINEL_OFFSET), value, { align: 16 });
      }
      return [];
    },
    () => {
      for (const c of columns)
        for (let i = 0; i < V; i++) {
          const channel = b.add(o.k, i);
          const at = b.add(c.elem, i);
          const value = b.bitcast(b.fptrunc(epilogue.apply(b, b.extractElement(c.acc, i), { channel, element: at }), o.elem), i16);
          t.globalStore(b, yBuf, b.select(b.and(c.ok, b.icmp('ult', channel, K)), b.mul(at, E), SENTINEL_OFFSET), value, { align: E });
        }
      return [];
    },
    'y.store',
  );
}
