/**
 * Whole-map tiles on sm_90a warpgroup MMA (spec `whole_map`, layout in ../whole-map.ts): the
 * channel loop, the cp.async stages and the weight staging are the m-block kernel's (wgmma.ts);
 * the operand roles are swapped. A = weights (M = 64 output channels of one m-block, the W stage's
 * [tap][output channel] rows read as they are), B = the staged input as flat pixel positions
 * (N = up to 256 consecutive positions per wgmma): a tap moves B's start by its constant offset,
 * a k-step by 16 channels. Each warpgroup owns tile_k / waves_m output channels and every pixel.
 *
 * X stage: position q holds input pixel (image q'/(pitchH·pitchW), row, column) of q' = q − lead,
 * or zeros (padding between rows and images, past the map, past N): ck/8 planes of
 * [position][8 channels] (16-byte core-matrix rows), or one 128B-swizzled row per position (ck 64).
 */
import { bfloat, half, type Builder, type EpilogueStore, type Value } from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import { WORKSPACE_ELEMENT_BYTES } from '../validate.js';
import { wholeMapLayout, type WholeMapLayout } from '../whole-map.js';
import type { PixelTileOrigin, TileOrigin } from './grid-decode.js';
import { ConvKernelError, SENTINEL_OFFSET, emitOutputSliceBase, openStoreEpilogue, variantArg } from './open.js';
import type { Slot, WgmmaTileOrigin } from './wgmma.js';
import { WeightRingBuilder, type TapIssuer } from './wgmma-ring.js';

const ROW = 16; // bytes of one core-matrix row: 8 channels

/** The tile's first image: whole-map tiles are windowed (validation keeps them off the pointwise grid). */
function firstImage(place: TileOrigin | PixelTileOrigin): Value {
  if (place.flat) throw new ConvKernelError('whole-map tiles are decoded as windows, not as flat pointwise pixel runs');
  return place.image;
}

/** Whole-map tiles, their weights staged with the halo for every tap or, with `weight_ring`, per tap in a ring (wgmma-ring.ts). */
export class WholeMapBuilder extends WeightRingBuilder {
  private get flat(): WholeMapLayout {
    return wholeMapLayout(this.spec);
  }

  /** Per m-block of 64 channels, one accumulator array per pixel run. */
  protected override accLengths(): number[] {
    const f = this.flat;
    return Array.from({ length: f.mBlocksPerGroup }, () => f.runs.map((n) => n / 2)).flat();
  }

  /** X slots: vector v = (staged position, 8-channel group), channel group fastest. */
  protected override xSlots(b: Builder, tid: Value, place: TileOrigin | PixelTileOrigin, c0: Value, cEnd: Value | undefined): Slot[] {
    const { spec, g, args } = this;
    const image = firstImage(place);
    const f = this.flat;
    const groups = spec.ck / 8;
    const imagePitch = f.pitchH * f.pitchW;
    const slots: Slot[] = [];
    for (let j = 0; j < g.xPasses; j++) {
      const v = b.add(tid, j * this.threads, `xv${j}`);
      const cv = b.urem(v, groups);
      const pos = b.udiv(v, groups);
      // Shifted by one image so the lead (padding before image 0) decodes as image -1: rejected below.
      const shifted = b.add(pos, imagePitch - f.lead);
      const n = b.sub(b.udiv(shifted, imagePitch), 1, `x.n${j}`);
      const rem = b.urem(shifted, imagePitch);
      const ih = b.udiv(rem, f.pitchW);
      const iw = b.urem(rem, f.pitchW);
      const img = b.add(image, n);
      // Unsigned compares reject image -1 too; rows and columns past the map are the shared padding.
      let valid = b.and(b.and(b.icmp('ult', n, spec.tile_n), b.icmp('ult', img, args.N)), b.and(b.icmp('ult', ih, args.H), b.icmp('ult', iw, args.W)));
      const inTile = g.xVectors % this.threads !== 0 && (j + 1) * this.threads > g.xVectors ? b.icmp('ult', v, g.xVectors) : undefined;
      if (inTile) valid = b.and(valid, inTile);
      const elem = b.add(b.add(b.add(b.mul(img, args.x_stride_n), b.mul(ih, args.x_stride_h)), b.mul(iw, args.x_stride_w)), b.add(b.mul(cv, 8), c0));
      const global = b.select(valid, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET, `x.goff${j}`);
      const lds = this.layout.swizzle ? this.swizzledRow(b, pos, cv, `x.lds${j}`) : b.add(b.mul(cv, this.layout.planeBytes), b.mul(pos, ROW), `x.lds${j}`);
      slots.push({ global, lds, inTile, ...this.room(b, cEnd, cv, c0, `x.room${j}`) });
    }
    return slots;
  }

  /**
   * Per tap, k-step and m-block, one wgmma per pixel run: A = the m-block's weight rows of the tap
   * (the W stage as the m-block kernel stages it), B = the run's positions shifted by the tap.
   */
  protected override chunkIssuer(b: Builder, at: (off: Value) => Value, xBase: (stage: Value) => Value, wBase: (stage: Value) => Value, wgM: Value) {
    const issue = this.wholeMapTap(b, at, wgM);
    return (stage: Value, acc: Value[][]): Value[][] => {
      const x = issue.x(xBase(stage));
      const w = issue.w(wBase(stage));
      this.wg.fence(b);
      let out = acc;
      for (let tap = 0; tap < this.spec.R * this.spec.S; tap++) out = issue.tap(x, w, tap, tap, out);
      return out;
    };
  }

  /** One tap step of the ring: the halo stage's descriptor once per chunk, the tap's weights in their ring stage (tap 0 of a stage). */
  protected override tapIssuer(b: Builder, at: (off: Value) => Value, wgM: Value): TapIssuer {
    const issue = this.wholeMapTap(b, at, wgM);
    return {
      halo: (xs) => [issue.x(xs)],
      tap: (halo, ws, tap, acc) => {
        const w = issue.w(ws);
        this.wg.fence(b);
        return issue.tap(halo[0]!, w, tap, 0, acc);
      },
    };
  }

  /**
   * Descriptors of an X and a W stage, and one tap's wgmmas: per k-step and m-block one per pixel
   * run, B shifted by the tap's constant offset, A at the weights of W-stage tap `wTap`.
   */
  private wholeMapTap(b: Builder, at: (off: Value) => Value, wgM: Value) {
    const { spec, wg } = this;
    const L = this.layout;
    const f = this.flat;
    // SBO = the next 8 rows (positions, or output channels).
    const { layout, xLbo, wLbo } = this.descriptorLayout();
    const channelOffset = b.mul(wgM, f.channelsPerGroup * L.rowBytes);
    const dtype = spec.dtype === 'bf16' ? 'bf16' : 'f16';
    return {
      x: (xs: Value) => wg.descriptor(b, at(xs), xLbo, 8 * L.rowBytes, layout),
      w: (ws: Value) => wg.descriptor(b, at(b.add(ws, channelOffset)), wLbo, 8 * L.rowBytes, layout),
      tap: (x: Value, w: Value, tap: number, wTap: number, acc: Value[][]): Value[][] => {
        const out = acc.map((a) => [...a]);
        const r = Math.floor(tap / spec.S);
        const s = tap % spec.S;
        for (let kk = 0; kk < spec.ck / 16; kk++) {
          const shift = r * spec.dilation_h * f.pitchW + s * spec.dilation_w;
          const xStep = L.swizzle ? shift * L.rowBytes + 32 * kk : shift * ROW + 2 * kk * L.planeBytes;
          const wStep = this.weightStepBytes(wTap, kk);
          for (let m = 0; m < f.mBlocksPerGroup; m++) {
            const a = b.add(w, BigInt((wStep + m * 64 * L.rowBytes) / 16));
            let start = 0;
            f.runs.forEach((n, run) => {
              const j = m * f.runs.length + run;
              out[j] = wg.mma(b, { n, dtype, a, b: b.add(x, BigInt((xStep + start * L.rowBytes) / 16)), acc: out[j]! });
              start += n;
            });
          }
        }
        return out;
      },
    };
  }

  /**
   * Accumulator i of thread (warp w, lane l) holds output channel 16w + l/4 + 8·((i>>1)&1) of its
   * m-block and pixel column 8·(i>>2) + 2·(l%4) + (i&1) of its run: each value is stored alone
   * (NHWK; split_c: fp32 into its workspace slice), dropped when its position is padding between
   * rows or images, past the map, past N or past K. A fused epilogue goes through the shared
   * `storeAll` (bias and residual reads batched ahead of the stores), one value per store.
   */
  protected override emitEpilogue(b: Builder, accs: Value[][], o: WgmmaTileOrigin): void {
    const { spec, t, args } = this;
    const f = this.flat;
    const split = spec.variant === 'split_c';
    const eBytes = split ? WORKSPACE_ELEMENT_BYTES : ELEMENT_BYTES;
    const outBuf = split ? t.globalBuffer(b, variantArg(args, 'ws'), variantArg(args, 'ws_bytes')) : t.globalBuffer(b, args.y, args.y_bytes);
    const outElem = spec.dtype === 'bf16' ? bfloat : half;
    const slice = emitOutputSliceBase(b, args, o.splitIdx) ?? b.i32(0);
    const warp = b.and(b.lshr(o.tid, 5), 3, 'warp');
    const lane = b.and(o.tid, 31, 'lane');
    const laneColumn = b.mul(b.and(lane, 3), 2, 'lane.column');
    const kWarp = b.add(b.add(o.kBase, b.mul(o.wgM, f.channelsPerGroup)), b.add(b.mul(warp, 16), b.lshr(lane, 2)), 'k.thread');
    const imagePitch = f.pitchH * f.pitchW;
    const epilogue = openStoreEpilogue(t, b, spec);
    // With a bias: each of the thread's channels (two per m-block) loaded once; its pixels share them.
    const biases = epilogue && spec.epilogue?.bias !== 'none'
      ? Array.from({ length: 2 * f.mBlocksPerGroup }, (_, j) => epilogue.loadBias(b, b.add(kWarp, 64 * (j >> 1) + 8 * (j & 1)), 1))
      : undefined;
    // Per pixel column the thread holds (two adjacent ones per accumulator pair): its y element base, or undefined when dropped.
    const columns = new Map<number, { base: Value; ok: Value }>();
    const columnAt = (c: number) => {
      const hit = columns.get(c);
      if (hit) return hit;
      const pos = b.add(laneColumn, c);
      const n = b.udiv(pos, imagePitch);
      const rem = b.urem(pos, imagePitch);
      const oh = b.udiv(rem, f.pitchW);
      const ow = b.urem(rem, f.pitchW);
      const img = b.add(firstImage(o.place), n);
      const ok = b.and(b.and(b.icmp('ult', n, spec.tile_n), b.icmp('ult', img, args.N)), b.and(b.icmp('ult', oh, o.Ho), b.icmp('ult', ow, o.Wo)));
      const base = b.add(slice, b.add(b.mul(img, args.y_stride_n), b.add(b.mul(oh, args.y_stride_h), b.mul(ow, args.y_stride_w))));
      const entry = { base, ok };
      columns.set(c, entry);
      return entry;
    };
    // Fused: every value through the shared store epilogue, its bias and residual reads issued ahead of the stores in batches.
    const fused: (() => EpilogueStore)[] = [];
    for (let m = 0; m < f.mBlocksPerGroup; m++) {
      let start = 0;
      f.runs.forEach((n, run) => {
        const acc = accs[m * f.runs.length + run]!;
        for (let i = 0; i < n / 2; i++) {
          const column = start + 8 * (i >> 2) + (i & 1);
          // Address math emitted when the store is made (fused: as its batch forms), so a thread holds one batch's addresses.
          const make = () => {
            const col = columnAt(column);
            const k = b.add(kWarp, m * 64 + 8 * ((i >> 1) & 1));
            const valid = b.and(col.ok, b.icmp('ult', k, o.K));
            const off = b.select(valid, b.mul(b.add(col.base, k), eBytes), SENTINEL_OFFSET);
            const store = (bb: Builder, v: Value) => t.globalStore(bb, outBuf, off, split ? v : bb.fptrunc(v, outElem), { align: eBytes });
            return { acc: acc[i]!, store, channel: k, element: () => b.add(col.base, k) };
          };
          const bias = biases?.[2 * m + ((i >> 1) & 1)];
          if (epilogue) {
            fused.push(() => {
              const { acc: value, store, channel, element } = make();
              return { acc: value, store, at: { channel, element: element(), ...(bias ? { bias } : {}) } };
            });
          } else {
            const st = make();
            st.store(b, st.acc);
          }
        }
        start += n;
      });
    }
    epilogue?.storeAll(b, fused);
  }
}
