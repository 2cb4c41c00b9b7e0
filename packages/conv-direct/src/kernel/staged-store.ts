/**
 * The staged output store every MMA builder shares (per-wave MFMA / mma.sync in mma.ts, the sm_90
 * warpgroup MMA in wgmma.ts). Each lane writes its accumulators into an LDS tile
 * `[pixel][tile_k + one 16-byte vector]` (the vector keeps consecutive pixels off the same banks);
 * then the workgroup reads the tile back as 16-byte vectors, a pixel's channels contiguous as in
 * NHWK, and stores each with one 16-byte global store, so stores are coalesced whatever the atom's
 * accumulator layout. A fused epilogue stages fp32 and runs on each vector after the read-back: its
 * bias and residual are read as the same whole vectors the store writes.
 *
 * The tile reuses the mainloop's LDS; when it does not fit it is staged in bands (see
 * `outputStaging` in store-path.ts): band p holds rows [p * b, (p + 1) * b) of every row owner's
 * rows, b = rowsPerOwner / passes. Bounds checks go through the sentinel offset, as every store.
 */
import { bfloat, f32, half, vec, type Builder, type EpilogueStore, type StoreEpilogue, type Target, type Value } from '@rocke/ir';
import type { Spec } from '../spec.js';
import { outputElementBytes, outputStaging, stagedElementBytes, stagedOutputStride, type OutputStaging } from '../store-path.js';
import type { PixelTileOrigin, TileOrigin } from './grid-decode.js';
import { registersToSpare } from '../residency.js';
import { ConvKernelError, SENTINEL_OFFSET, emitOutputSliceBase, openStoreEpilogue, variantArg, type KernelArgs } from './open.js';
import { emitPixelOutput } from './pixels.js';

/**
 * Registers of residual reads a thread issues before the staging's barriers, while its accumulators
 * are still live: four 16-byte residual vectors, twice the budget of a store from the accumulators
 * (@rocke/ir's PREFETCH_REGISTERS). Only kernels with registers to spare read that early
 * (`registersToSpare`: holding them costs no resident workgroup); the rest of a band's reads, and
 * the bias, follow its LDS writes.
 */
const STAGED_PREFETCH_REGISTERS = 16;

/** What the staged store needs of the kernel: where the tile sits and which channels it holds. */
export interface StagedTileInputs {
  readonly spec: Spec;
  readonly t: Target;
  readonly args: KernelArgs;
  readonly tid: Value;
  readonly threads: number;
  /** A pointer into the kernel's LDS window (the tile starts at byte 0). */
  readonly ldsAt: (byteOffset: Value) => Value;
  readonly place: TileOrigin | PixelTileOrigin;
  /** First output channel of the tile within its block, and the block's channel count. */
  readonly kBase: Value;
  readonly kLimit: Value;
  /** Grouped: global output channel of the (merged) block's first channel; dense: undefined. */
  readonly kOffset: Value | undefined;
  readonly Ho: Value;
  readonly Wo: Value;
  readonly splitIdx: Value | undefined;
}

/** Where a lane writes into the staged tile: the LDS tile's geometry, for the builders' fragment writes. */
export interface StagedTile {
  readonly staging: OutputStaging;
  /** Rows of each owner one band holds. */
  readonly bandRows: number;
  /** Element pitch between staged pixels, and bytes per staged element (4: fp32, else the output's). */
  readonly stride: number;
  readonly elementBytes: number;
  /** fp32, or the output element when the tile stages what it stores. */
  readonly elementType: typeof f32;
  /** Converts a run of fp32 accumulators to the staged element type. */
  convert(b: Builder, v: Value, count: number): Value;
}

/** The LDS tile geometry of a spec that stages its output; throws when it stores directly. */
export function stagedTile(spec: Spec): StagedTile {
  const staging = outputStaging(spec);
  if (!staging) throw new ConvKernelError(`${spec.variant} tile ${spec.tile_h}x${spec.tile_w}x${spec.tile_k}: the output is not staged through LDS`);
  const elementBytes = stagedElementBytes(spec);
  const outElem = spec.dtype === 'bf16' ? bfloat : half;
  const elementType = elementBytes === 4 ? f32 : outElem;
  return {
    staging,
    bandRows: staging.rowsPerOwner / staging.passes,
    stride: stagedOutputStride(spec),
    elementBytes,
    elementType,
    convert: (b, v, count) => (elementType === f32 ? v : b.fptrunc(v, count === 1 ? outElem : vec(count, outElem))),
  };
}

/**
 * Stages and stores the tile: per band, a barrier (every wave is done with the LDS the band
 * overwrites), `writeBand(pass)` (each lane stores its accumulators of that band into the tile),
 * a barrier, and the read-back with its 16-byte global stores (through the epilogue when fused).
 */
export function emitStagedTileStore(b: Builder, o: StagedTileInputs, writeBand: (pass: number) => void): void {
  const { spec, t, args, tid } = o;
  const tile = stagedTile(spec);
  const perVec = 16 / outputElementBytes(spec);
  const perPixel = spec.tile_k / perVec;
  const outElem = spec.dtype === 'bf16' ? bfloat : half;
  const channelOf = (k: Value) => (o.kOffset ? b.add(o.kOffset, k) : k);
  let band: ((pass: number) => BandVectors) | undefined;
  let epilogue: ReturnType<typeof openStoreEpilogue>;
  let bias: Value[] | undefined;
  let outBuf: ReturnType<Target['globalBuffer']> | undefined;
  const open = () => {
    outBuf = spec.variant === 'split_c' ? t.globalBuffer(b, variantArg(args, 'ws'), variantArg(args, 'ws_bytes')) : t.globalBuffer(b, args.y, args.y_bytes);
    band = bandVectors(b, o, tile);
    epilogue = openStoreEpilogue(t, b, spec);
    return band;
  };
  const perThread = (n: number) => Math.ceil(n / o.threads);
  // Fused, with registers to spare: the tile's addresses and its first residual reads are issued
  // before the staging, so their latency passes behind the barriers and LDS writes.
  const firstCount = Math.min(perThread(bandVectorCount(spec, tile)), Math.floor(STAGED_PREFETCH_REGISTERS / (perVec / 2)));
  const ahead = spec.epilogue?.residual === true && registersToSpare(spec, (firstCount * perVec) / 2);
  if (ahead) open();
  for (let pass = 0; pass < tile.staging.passes; pass++) {
    const early = band && ahead ? residualReads(b, band(pass), 0, firstCount, epilogue) : [];
    t.barrier(b);
    writeBand(pass);
    // The band's accumulators are in LDS now, their registers free: the bias (once) and the band's
    // other residual reads (half those registers: 2-byte elements for 4-byte sums) go out before
    // the barrier, all at once, so a thread waits out one memory latency per band instead of one
    // per batch of stores.
    const rest = spec.epilogue ? (band ?? open())(pass) : undefined;
    // A thread's channels are the same in every vector it stores when the threads cover whole pixels: one bias read.
    if (rest && pass === 0 && o.threads % perPixel === 0) bias = epilogue!.loadBias(b, channelOf(b.add(o.kBase, b.mul(b.urem(tid, perPixel), perVec))), perVec);
    const reads = rest ? [...early, ...residualReads(b, rest, early.length, perThread(rest.count), epilogue)] : [];
    t.barrier(b);
    const vectors = (band ?? open())(pass);
    const buf = outBuf!;
    const fused: (() => EpilogueStore)[] = [];
    for (let j = 0; j < perThread(vectors.count); j++) {
      if (!epilogue) {
        const x = vectors.at(j);
        t.globalStore(b, buf, x.off, x.val, { align: 16 });
        continue;
      }
      fused.push(() => {
        const x = reads[j]?.x ?? vectors.address(j);
        const residual = reads[j]?.residual;
        const at = { channel: channelOf(x.k), element: x.elem, ...(bias ? { bias } : {}), ...(residual ? { residual } : {}) };
        return { acc: x.load(), at, store: (bb, v) => t.globalStore(bb, buf, x.off, bb.fptrunc(v, vec(perVec, outElem)), { align: 16 }) };
      });
    }
    epilogue?.storeAll(b, fused, STAGED_PREFETCH_REGISTERS);
  }
}

/** The residual reads of the thread's vectors `from` to `to` of a band (none without a residual). */
function residualReads(b: Builder, vector: BandVectors, from: number, to: number, epilogue: StoreEpilogue | undefined) {
  if (!epilogue?.epilogue.residual) return [];
  const perVec = vector.perVector;
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => {
    const x = vector.address(from + i);
    return { x, residual: epilogue.loadResidual(b, x.elem, perVec) };
  });
}

/** The 16-byte vectors of one band of the staged tile (every band holds as many). */
function bandVectorCount(spec: Spec, tile: StagedTile): number {
  const perPixel = spec.tile_k / (16 / outputElementBytes(spec));
  return ((spec.tile_n * spec.tile_h) / tile.staging.passes) * spec.tile_w * perPixel;
}

/** A band's 16-byte vectors: how many, and the thread's j-th one (see {@link bandVectors}). */
interface BandVectors {
  readonly count: number;
  /** Output elements per 16-byte vector. */
  readonly perVector: number;
  at(j: number): { val: Value; off: Value; elem: Value; k: Value };
  /** The same vector with its LDS read left for later (the read must follow the staging). */
  address(j: number): { load: () => Value; off: Value; elem: Value; k: Value };
}

/**
 * The 16-byte vectors of each band: their count, and the thread's j-th one — its LDS value, its
 * byte offset in the output (the sentinel when out of range), its element and its channel. The
 * tile's image offsets are emitted once, for every band.
 */
function bandVectors(b: Builder, o: StagedTileInputs, tile: StagedTile): (pass: number) => BandVectors {
  const { spec, args, tid } = o;
  const E = outputElementBytes(spec);
  const S = tile.elementBytes;
  const perVec = 16 / E;
  const perPixel = spec.tile_k / perVec;
  const { passes, rowsPerOwner } = tile.staging;
  const count = bandVectorCount(spec, tile);
  const outElem = spec.variant === 'split_c' ? f32 : spec.dtype === 'bf16' ? bfloat : half;
  const stageElem = S === E ? outElem : f32;
  const sliceBase = emitOutputSliceBase(b, args, o.splitIdx);
  // Element offset of an image's output (its split slice and channel block included).
  const imageOffset = (image: Value) => {
    const imageBase = b.mul(image, args.y_stride_n, 'y.image');
    const imageSlice = sliceBase ? b.add(sliceBase, imageBase) : imageBase;
    return o.kOffset ? b.add(imageSlice, o.kOffset, 'y.image.k') : imageSlice;
  };
  const window = o.place.flat ? undefined : o.place;
  const tileImageK = window && spec.tile_n === 1 ? imageOffset(window.image) : undefined;
  /** The tile pixel (row-major over the tile's virtual rows) of pixel `pix` of band `pass`. */
  const tilePixel = (pix: Value, pass: number): Value => {
    if (passes === 1) return pix;
    const row = b.udiv(pix, spec.tile_w);
    const owner = b.udiv(row, tile.bandRows);
    const vrow = b.add(b.mul(owner, rowsPerOwner), b.add(b.urem(row, tile.bandRows), pass * tile.bandRows));
    return b.add(b.mul(vrow, spec.tile_w), b.urem(pix, spec.tile_w), 'out.tile.pixel');
  };
  /** Vector j of band `pass`; its LDS read now (in the bare store's order) or as a thunk for after the staging. */
  const vectorAt = (pass: number, j: number) => {
    let v = b.add(tid, j * o.threads, `out.v${j}`);
    const inTile = count % o.threads !== 0 && (j + 1) * o.threads > count ? b.icmp('ult', v, count) : undefined;
    // Threads past the tile re-read its last vector and store it nowhere.
    if (inTile) v = b.umin(v, count - 1);
    const kv = b.urem(v, perPixel);
    const ldsPix = b.udiv(v, perPixel);
    const pix = tilePixel(ldsPix, pass);
    let valid: Value;
    let elemOf: () => Value;
    let k: Value;
    if (!window) {
      // Pointwise: the tile's pix-th flat pixel.
      const out = emitPixelOutput(b, args, o.place.flat!, pix);
      k = b.add(o.kBase, b.mul(kv, perVec));
      valid = b.and(out.ok, b.icmp('ult', k, o.kLimit));
      elemOf = () => b.add(out.elem, k);
    } else {
      let imageK = tileImageK;
      let oh: Value;
      let imageOk: Value | undefined;
      if (spec.tile_n === 1) oh = b.add(window.oh0, b.udiv(pix, spec.tile_w));
      else {
        const vrow = b.udiv(pix, spec.tile_w);
        const image = b.add(window.image, b.udiv(vrow, spec.tile_h), 'out.image');
        imageOk = b.icmp('ult', image, args.N);
        imageK = imageOffset(image);
        oh = b.add(window.oh0, b.urem(vrow, spec.tile_h));
      }
      const ow = b.add(window.ow0, b.urem(pix, spec.tile_w));
      k = b.add(o.kBase, b.mul(kv, perVec));
      valid = b.and(b.icmp('ult', oh, o.Ho), b.and(b.icmp('ult', ow, o.Wo), b.icmp('ult', k, o.kLimit)));
      if (imageOk) valid = b.and(valid, imageOk);
      elemOf = () => b.add(b.add(imageK!, b.add(b.mul(oh, args.y_stride_h), b.mul(ow, args.y_stride_w))), k);
    }
    if (inTile) valid = b.and(valid, inTile);
    const load = () => b.load(vec(perVec, stageElem), o.ldsAt(b.mul(b.add(b.mul(ldsPix, tile.stride), b.mul(kv, perVec)), S)), { align: 16 });
    return { valid, elemOf, k, load };
  };
  return (pass) => ({
    count,
    perVector: perVec,
    at(j) {
      const x = vectorAt(pass, j);
      const val = x.load();
      const elem = x.elemOf();
      return { val, off: b.select(x.valid, b.mul(elem, E), SENTINEL_OFFSET), elem, k: x.k };
    },
    address(j) {
      const x = vectorAt(pass, j);
      const elem = x.elemOf();
      return { load: x.load, off: b.select(x.valid, b.mul(elem, E), SENTINEL_OFFSET), elem, k: x.k };
    },
  });
}
