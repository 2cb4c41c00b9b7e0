/**
 * The depthwise direct convolution (groups = C, K = M*C), written once for gfx950, gfx942 and
 * sm_90. No MMA: each output is R*S multiply-adds of one input channel, so the kernel is built
 * around bytes and around the instructions per FMA:
 * - the workgroup stages its halo tile (tile_k/M input channels, NHWC) in LDS with 16-byte loads
 *   along the channels, out-of-range pixels reading zero through the target's guarded loads, so
 *   each input byte crosses from L2 once per tile (on sm_90 as cp.async copies, all in flight at
 *   once and none through registers); the tile's weights are staged as [tap][channel], lanes
 *   walking along the channels;
 * - each thread owns a pair of adjacent output channels and a block of `waves_n` rows x `waves_m`
 *   columns of output pixels. It holds all R*S weights of its pair in f32 registers (converted
 *   once), then reads each input pixel of its window once (one 4-byte LDS read for multiplier 1,
 *   2 bytes otherwise; pairs are the fastest lanes, so a wave reads along the channels without
 *   bank conflicts), converts it once and feeds it to every (output pixel, tap) of the block it
 *   reaches: `<2 x float>` FMAs with fp32 accumulation (packed v_pk_fma_f32 on AMD, two CUDA-core
 *   FMAs on sm_90). Stride 2 windows hold only the pixels some tap reads;
 * - outputs leave as one 4-byte NHWK store per pixel, the lanes of a wave writing a contiguous run;
 * - an image tile (tile_n > 1) computes its spatial tile on tile_n images one after another: the
 *   next image's halo goes to a second LDS buffer (cp.async copies in flight during the tap loop on
 *   sm_90) while one is computed, and the tile's decode and weight staging are done once.
 * C and K need not be multiples of 8: when C (or K) is not (K: not even), the staging (or the
 * store) takes 2-byte elements, each checked against C (K), on a uniform branch.
 */
import { bfloat, f32, getTarget, half, i16, i8, vec, zero, type Builder, type GlobalBuffer, type StoreEpilogue, type Target, type Type, type Value } from '@rocke/ir';
import { DEPTHWISE_PAIR, DEPTHWISE_STAGE_BATCH, DEPTHWISE_VECTOR, depthwiseGeometry, type DepthwiseGeometry } from '../depthwise-geometry.js';
import { ELEMENT_BYTES } from '../problem.js';
import type { Spec } from '../spec.js';
import { builtKernel, openConvKernel, openStoreEpilogue, SENTINEL_OFFSET, type ConvKernel, type KernelArgs } from './open.js';
import { emitTileOrigin } from './grid-decode.js';

const E = ELEMENT_BYTES;
const V = DEPTHWISE_VECTOR;
const P = DEPTHWISE_PAIR;

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
  return builtKernel(spec, t, { module, name, abi }, {
    threads: g.threads,
    dynamicSharedBytes: g.ldsBytes,
    schedule: 'single-stage',
    fragmentLoad: 'vector',
    weightLayout: 'tap-major',
    epilogue: 'direct',
  });
}

function emitDepthwiseBody(b: Builder, args: KernelArgs, t: Target, spec: Spec, g: DepthwiseGeometry, lds: Value): void {
  const tid = t.workitemId(b, 'x');
  const K = args.K;
  const origin = emitTileOrigin(b, t, spec, () => ({ kTiles: b.udiv(b.add(K, spec.tile_k - 1), spec.tile_k, 'k.tiles') }));
  const kBase = b.mul(origin.kTile, spec.tile_k, 'k.base');
  // kBase is a multiple of 8, hence of M: the tile's input channels start at kBase / M.
  const cBase = g.multiplier === 1 ? kBase : b.udiv(kBase, g.multiplier, 'c.base');
  const ldsAt = (byteOffset: Value) => b.gep(i8, lds, [byteOffset]);
  // Image i of the tile stages into halo buffer i % 2, the second right after the first.
  const bufferAt = (i: number) => (i % 2 === 0 ? ldsAt : (byteOffset: Value) => ldsAt(b.add(byteOffset, g.xBytes)));
  const images = Array.from({ length: g.images }, (_, i) => (i === 0 ? origin : nextImage(b, args, origin, i)));

  stageInput(b, args, t, g, tid, origin, cBase, ldsAt);
  stageWeights(b, args, t, spec, g, tid, kBase, ldsAt);
  // The halo's copies (none where C % 8 != 0: an empty group) land before a barrier publishes them.
  t.asyncCopy?.commit(b);
  let threads: ThreadMap | undefined;
  for (let i = 0; i < g.images; i++) {
    const next = i + 1 < g.images;
    // The next image's halo goes to the other buffer while this one is computed: with async
    // copies (sm_90) all in flight during the tap loop; the barrier ending the previous image
    // made that buffer free.
    if (next) {
      stageInput(b, args, t, g, tid, images[i + 1]!, cBase, bufferAt(i + 1));
      t.asyncCopy?.commit(b);
    }
    t.asyncCopy?.wait(b, next ? 1 : 0);
    t.barrier(b);
    threads ??= threadMap(b, g, tid);
    const w = loadWeights(b, spec, g, threads.pair, ldsAt);
    const acc = emitTaps(b, spec, g, w, threads, bufferAt(i));
    // A fused epilogue opens after the tap loop and reads there: its arguments and reads held through
    // the loop would cost the kernel resident workgroups, which its short blocks need more than the
    // reads' latency (other workgroups' loops hide it).
    const yBuf = t.globalBuffer(b, args.y, args.y_bytes);
    const epilogue = openStoreEpilogue(t, b, spec);
    emitStores(b, args, t, spec, acc, yBuf, outputPixels(b, args, g, { kBase, ...threads, origin: images[i]! }), epilogue);
    // Every thread's reads of this buffer end before the image after next stages into it.
    if (next) t.barrier(b);
  }
}

/** Image `i` of the tile: its first image + i, inside the batch only when below N (the last image tile may be partial). */
function nextImage(b: Builder, args: KernelArgs, o: Origin, i: number): Origin {
  const image = b.add(o.image, i, `n${i}`);
  return { ...o, image, valid: b.icmp('ult', image, args.N, `n${i}.valid`) };
}

/** A thread's place: its channel pair, column group and row group, the pair fastest (a pixel's pairs are adjacent lanes). */
interface ThreadMap {
  readonly pair: Value;
  readonly group: Value;
  readonly rowGroup: Value;
}

function threadMap(b: Builder, g: DepthwiseGeometry, tid: Value): ThreadMap {
  const pair = b.urem(tid, g.pairs, 'o.pair');
  const rest = b.udiv(tid, g.pairs);
  const group = b.urem(rest, g.columnGroups, 'o.group');
  const rowGroup = b.udiv(rest, g.columnGroups, 'o.rows');
  return { pair, group, rowGroup };
}

interface Origin {
  readonly image: Value;
  readonly oh0: Value;
  readonly ow0: Value;
  readonly ih0: Value;
  readonly iw0: Value;
  /** Set when the image may lie past N (an image tile's later images): false reads zeros and stores nothing. */
  readonly valid?: Value;
}

/**
 * Halo tile -> LDS `[ldsInH][ldsInW][inChannels + lds_pad]`. With whole 16-byte channel vectors
 * (C % 8 == 0) on a target with async copies (sm_90: cp.async), every vector of the tile is one
 * copy, all in flight at once and none through registers: a tile of many passes costs one memory
 * latency, not one per batch, and its loads hold no registers (the caller commits and waits).
 * Otherwise loads go out in batches of DEPTHWISE_STAGE_BATCH passes, all issued before their LDS
 * writes.
 */
function stageInput(b: Builder, args: KernelArgs, t: Target, g: DepthwiseGeometry, tid: Value, o: Origin, cBase: Value, ldsAt: (v: Value) => Value): void {
  const C = args.C;
  const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
  const imageBase = b.mul(o.image, args.x_stride_n, 'x.image');
  const uneven = g.xVectors % g.threads !== 0;
  const slotAt = (j: number): StageSlot => {
    const v = j === 0 ? tid : b.add(tid, j * g.threads, `xv${j}`);
    const cv = b.urem(v, g.inVectors);
    const pos = b.udiv(v, g.inVectors);
    const ih = b.add(o.ih0, b.udiv(pos, g.ldsInW));
    const iw = b.add(o.iw0, b.urem(pos, g.ldsInW));
    const c = b.add(cBase, b.mul(cv, V), `x.c${j}`);
    // Unsigned compares also reject the (negative) padding rows and columns.
    let inside = b.and(b.icmp('ult', ih, args.H), b.icmp('ult', iw, args.W));
    if (o.valid) inside = b.and(inside, o.valid);
    const inTile = uneven && (j + 1) * g.threads > g.xVectors ? b.icmp('ult', v, g.xVectors) : undefined;
    if (inTile) inside = b.and(inside, inTile);
    const elem = b.add(b.add(imageBase, b.add(b.mul(ih, args.x_stride_h), b.mul(iw, args.x_stride_w))), c, `x.elem${j}`);
    return { inside, elem, c, inTile, lds: b.mul(b.add(b.mul(pos, g.pixelStride), b.mul(cv, V)), E, `x.lds${j}`) };
  };
  // C % 8 == 0: a vector is wholly inside C or wholly outside.
  const vectorOffset = (s: StageSlot) => b.select(b.and(s.inside, b.icmp('ult', s.c, C)), b.mul(s.elem, E), SENTINEL_OFFSET);
  const loadVector = (s: StageSlot) => t.globalLoad(b, xBuf, vectorOffset(s), vec(V, i16), { align: 16 });
  const loadElements = (s: StageSlot) => {
    let out: Value = zero(vec(V, i16));
    for (let i = 0; i < V; i++) {
      const ok = b.and(s.inside, b.icmp('ult', b.add(s.c, i), C));
      out = b.insertElement(out, t.globalLoad(b, xBuf, b.select(ok, b.mul(b.add(s.elem, i), E), SENTINEL_OFFSET), i16, { align: E }), i);
    }
    return out;
  };
  const inTileOnly = (s: StageSlot, f: () => void) => (s.inTile ? b.ifThen(s.inTile, f, 'x.tail') : f());
  const storeBatch = (batch: readonly StageSlot[], vals: readonly Value[]) => batch.forEach((s, j) => inTileOnly(s, () => b.store(vals[j]!, ldsAt(s.lds), { align: 16 })));
  const whole = b.icmp('eq', b.and(C, V - 1), 0, 'c.whole.vectors');
  const passes = Array.from({ length: g.xPasses }, (_, j) => j);
  const cp = t.asyncCopy;
  if (cp) {
    b.ifThenElse(
      whole,
      () => {
        for (const j of passes) {
          const s = slotAt(j);
          inTileOnly(s, () => cp.copy(b, xBuf, vectorOffset(s), ldsAt(s.lds)));
        }
        return [];
      },
      () => {
        inBatches(passes, DEPTHWISE_STAGE_BATCH, (js) => {
          const batch = js.map(slotAt);
          storeBatch(batch, batch.map(loadElements));
        });
        return [];
      },
      'x.stage',
    );
    return;
  }
  inBatches(passes, DEPTHWISE_STAGE_BATCH, (js) => {
    const batch = js.map(slotAt);
    const vals = b.ifThenElse(whole, () => batch.map(loadVector), () => batch.map(loadElements), 'x.stage');
    storeBatch(batch, vals);
  });
}

/** One 16-byte staging slot of a thread: where it reads (element, channel, whether inside x) and where it lands in LDS (bytes). */
interface StageSlot {
  readonly inside: Value;
  readonly elem: Value;
  readonly c: Value;
  readonly inTile: Value | undefined;
  readonly lds: Value;
}

/**
 * Runs `f` on consecutive batches of `size` items. Staging batches bound the loads in flight per
 * thread, so a large halo tile on few threads does not hold dozens of 16-byte loads in registers
 * (the geometry's register estimate counts one batch).
 */
function inBatches<T>(items: readonly T[], size: number, f: (batch: readonly T[]) => void): void {
  for (let i = 0; i < items.length; i += size) f(items.slice(i, i + size));
}

/**
 * Weights of the tile's output channels -> LDS `[tap][tile_k]` after the halo tile. Lane v stages
 * element v of that layout (tap v / tile_k, channel v % tile_k): consecutive lanes store
 * consecutive 2-byte elements, so a wave's stores fill whole bank words with no conflict at any
 * tile_k. Their global reads stride by R*S elements along w's [K][R*S]; the tile's weights are a
 * few hundred bytes of whole cache lines, read once per workgroup.
 */
function stageWeights(b: Builder, args: KernelArgs, t: Target, spec: Spec, g: DepthwiseGeometry, tid: Value, kBase: Value, ldsAt: (v: Value) => Value): void {
  const RS = spec.R * spec.S;
  const wBuf = t.globalBuffer(b, args.w, args.w_bytes);
  // Channels of this tile inside K: fewer in the last channel tile.
  const channels = b.sub(args.K, kBase, 'w.channels');
  const first = b.mul(kBase, RS, 'w.first');
  const wPasses = Array.from({ length: g.wPasses }, (_, j) => j);
  inBatches(wPasses, 4 * DEPTHWISE_STAGE_BATCH, (batch) => {
    const slots = batch.map((j) => {
      const v = j === 0 ? tid : b.add(tid, j * g.threads, `wv${j}`);
      const tap = b.udiv(v, spec.tile_k);
      const channel = b.urem(v, spec.tile_k);
      // A slot past the tile's last tap (v >= wElems) reads nothing either: its store is skipped.
      const ok = b.and(b.icmp('ult', channel, channels), b.icmp('ult', tap, RS));
      const elem = b.add(first, b.add(b.mul(channel, RS), tap));
      const val = t.globalLoad(b, wBuf, b.select(ok, b.mul(elem, E), SENTINEL_OFFSET), i16, { align: E });
      const lds = b.add(g.wOffset, b.mul(v, E), `w.lds${j}`);
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
 * The pair's R*S weights from LDS, converted to f32: once per image of the tile (kept live across
 * the next image's staging, they would cost more registers than the reads cost issue slots).
 */
function loadWeights(b: Builder, spec: Spec, g: DepthwiseGeometry, pair: Value, ldsAt: (v: Value) => Value): Value[] {
  const elem = spec.dtype === 'bf16' ? bfloat : half;
  const wThread = b.add(b.mul(pair, P * E), g.wOffset, 'w.thread');
  return Array.from({ length: spec.R * spec.S }, (_, tap) => b.fpext(b.load(vec(P, elem), ldsAt(b.add(wThread, tap * spec.tile_k * E)), { align: P * E }), vec(P, f32)));
}

/**
 * The tap loop, unrolled: each pixel of the thread's input window (in the halo buffer `ldsAt`
 * addresses) read and converted once and fused into every output of the block it reaches, with
 * the pair's f32 weights `w`. Returns the accumulators row-major over the block (rows x columns).
 */
function emitTaps(b: Builder, spec: Spec, g: DepthwiseGeometry, w: readonly Value[], threads: ThreadMap, ldsAt: (v: Value) => Value): Value[] {
  const elem = spec.dtype === 'bf16' ? bfloat : half;
  const f2 = vec(P, f32);
  const rows = g.rowsPerThread;
  const cols = g.columnsPerThread;
  const { pair, group, rowGroup } = threads;
  // The pair's first input channel: 2*pair for multiplier 1, else 2*pair / M (one channel for both outputs).
  const channel = g.multiplier === 1 ? b.mul(pair, P) : b.udiv(pair, g.multiplier / P);
  const firstPixel = b.add(b.mul(b.mul(rowGroup, rows * spec.stride_h), g.ldsInW), b.mul(group, cols * spec.stride_w));
  const xThread = b.mul(b.add(b.mul(firstPixel, g.pixelStride), channel), E, 'x.thread');
  const read = (off: number): Value => {
    const at = ldsAt(b.add(xThread, off));
    if (g.pairInChannels === P) return b.fpext(b.load(vec(P, elem), at, { align: P * E }), f2);
    const x = b.fpext(b.load(elem, at, { align: E }), f32);
    return b.insertElement(b.insertElement(zero(f2), x, 0), x, 1);
  };
  const acc: Value[] = Array.from({ length: rows * cols }, () => zero(f2));
  for (let ih = 0; ih < g.rowsRead; ih++)
    for (let iw = 0; iw < g.columnsRead; iw++) {
      const x = read((ih * g.ldsInW + iw) * g.pixelStride * E);
      for (let j = 0; j < rows; j++)
        for (let c = 0; c < cols; c++) {
          const r = ih - j * spec.stride_h;
          const s = iw - c * spec.stride_w;
          if (r >= 0 && r < spec.R && s >= 0 && s < spec.S) acc[j * cols + c] = b.fma(x, w[r * spec.S + s]!, acc[j * cols + c]!);
        }
    }
  return acc;
}

/** Where one output pixel of the block lands: its element of y (at the pair's first channel) and whether the pixel is inside y. */
interface OutputPixel {
  readonly ok: Value;
  readonly elem: Value;
}

/** The thread's output channel pair (its first channel `k`) and its block's pixels, row-major. */
interface ThreadOutputs {
  readonly k: Value;
  readonly pixels: readonly OutputPixel[];
}

function outputPixels(b: Builder, args: KernelArgs, g: DepthwiseGeometry, o: ThreadMap & { kBase: Value; origin: Origin }): ThreadOutputs {
  const k = b.add(o.kBase, b.mul(o.pair, P), 'y.k');
  const oh0 = b.add(o.origin.oh0, b.mul(o.rowGroup, g.rowsPerThread), 'y.oh0');
  const ow0 = b.add(o.origin.ow0, b.mul(o.group, g.columnsPerThread), 'y.ow0');
  const imageElem = b.add(b.mul(o.origin.image, args.y_stride_n), k, 'y.image');
  const pixels = Array.from({ length: g.rowsPerThread * g.columnsPerThread }, (_, i) => {
    const oh = b.add(oh0, Math.floor(i / g.columnsPerThread));
    const ow = b.add(ow0, i % g.columnsPerThread);
    const inside = b.and(b.icmp('ult', oh, args.Ho), b.icmp('ult', ow, args.Wo));
    return {
      ok: o.origin.valid ? b.and(inside, o.origin.valid) : inside,
      elem: b.add(imageElem, b.add(b.mul(oh, args.y_stride_h), b.mul(ow, args.y_stride_w))),
    };
  });
  return { k, pixels };
}

/** One 4-byte NHWK store per output pixel (K even), else 2-byte stores each checked against K. */
function emitStores(
  b: Builder,
  args: KernelArgs,
  t: Target,
  spec: Spec,
  acc: readonly Value[],
  yBuf: GlobalBuffer,
  out: ThreadOutputs,
  epilogue: StoreEpilogue | undefined,
): void {
  const K = args.K;
  const elem = spec.dtype === 'bf16' ? bfloat : half;
  const k = out.k;
  const whole = b.icmp('eq', b.and(K, P - 1), 0, 'k.whole.pairs');
  b.ifThenElse(
    whole,
    () => {
      // K even and k even: the pair is wholly inside K or wholly outside.
      const inK = b.icmp('ult', k, K);
      const offsetOf = (px: OutputPixel) => b.select(b.and(px.ok, inK), b.mul(px.elem, E), SENTINEL_OFFSET);
      const storePair = (bb: Builder, off: Value, v: Value) => t.globalStore(bb, yBuf, off, bb.bitcast(bb.fptrunc(v, vec(P, elem)), vec(P, i16)), { align: P * E });
      if (epilogue) {
        // The pair's bias once, and every pixel's residual pair (one register each, half its
        // accumulators') before the first store: one memory latency for the thread's stores.
        const bias = epilogue.loadBias(b, k, P);
        epilogue.storeAll(b, out.pixels.map((px, i) => () => {
          const off = offsetOf(px);
          return { acc: acc[i]!, at: { channel: k, element: px.elem, ...(bias ? { bias } : {}) }, store: (bb: Builder, v: Value) => storePair(bb, off, v) };
        }), out.pixels.length);
        return [];
      }
      out.pixels.forEach((px, i) => storePair(b, offsetOf(px), acc[i]!));
      return [];
    },
    () => {
      out.pixels.forEach((px, i) => emitElementStores(b, t, yBuf, epilogue, { acc: acc[i]!, ...px }, { k, K, elem }));
      return [];
    },
    'y.store',
  );
}

/** The tail stores of one pixel: each channel of the pair on its own, checked against K (no bias or residual read straddles the end of K). */
function emitElementStores(b: Builder, t: Target, yBuf: GlobalBuffer, epilogue: StoreEpilogue | undefined, px: OutputPixel & { acc: Value }, o: { k: Value; K: Value; elem: Type }): void {
  for (let i = 0; i < P; i++) {
    const channel = b.add(o.k, i);
    const at = b.add(px.elem, i);
    const a = b.extractElement(px.acc, i);
    const value = epilogue ? epilogue.apply(b, a, { channel, element: at }) : a;
    t.globalStore(b, yBuf, b.select(b.and(px.ok, b.icmp('ult', channel, o.K)), b.mul(at, E), SENTINEL_OFFSET), b.bitcast(b.fptrunc(value, o.elem), i16), { align: E });
  }
}
