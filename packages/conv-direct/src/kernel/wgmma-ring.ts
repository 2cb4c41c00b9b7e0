/**
 * The warpgroup-MMA kernel with its weights streamed per tap (`weight_ring`, see spec.ts
 * `weightRing`). The halo tile of a chunk is staged once, in one of two stages, as in wgmma.ts; the
 * weights are not staged with it for every tap at once but one tap at a time, each tap step's
 * tile_k x ck weights in a stage of their own small ring. A strided tile's halo is large next to
 * its output (a 16x16 tile at stride 2 reads 33x33 pixels), so with every tap's weights beside it
 * only short chunks fit; with one tap's weights per ring stage the halo gets the LDS.
 *
 * The loop runs over chunks with the taps unrolled, so a tap's window stays a constant descriptor
 * offset. Tap step i (tap i % taps of chunk i / taps):
 *   wait for step i's weights (cp.async groups are FIFO: everything older has landed too), barrier;
 *   issue step i's wgmmas on halo stage chunk % 2 and ring stage i % stages;
 *   copy step i + ahead's weights into ring stage (i + ahead) % stages, and at tap 1 the next
 *   chunk's halo into the other halo stage; commit them as one group;
 *   wait until only step i's wgmmas are in flight.
 * The stages refilled at step i were last read by step i − 2 or earlier, which every warpgroup has
 * waited for before the barrier (spec.ts `weightRing` derives stages = ahead + 2 and ahead ≤ taps − 1).
 */
import { f32, zero, type Builder, type Value } from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import type { WeightRing } from '../spec.js';
import { SENTINEL_OFFSET } from './open.js';
import { WgmmaConvBuilder, type ChannelLoopInputs, type Slot } from './wgmma.js';

const ROW = 16; // bytes of one core-matrix row: 8 channels

/** The wgmmas of one tap step (see {@link WeightRingBuilder.tapIssuer}). */
export interface TapIssuer {
  /** The operand descriptors of a halo stage (once per chunk). */
  readonly halo: (xs: Value) => Value[];
  /** Fences and issues tap `tap`'s k-steps on the ring stage at `ws`; the caller commits. */
  readonly tap: (halo: readonly Value[], ws: Value, tap: number, acc: Value[][]) => Value[][];
}

/**
 * Streams the weights per tap when the spec has a ring (`layout.ring`); without one it is the
 * all-tap kernel it extends. Whole-map tiles (wgmma-whole-map.ts) extend it too, with their own
 * operand roles in {@link tapIssuer}.
 */
export class WeightRingBuilder extends WgmmaConvBuilder {
  private get ring(): WeightRing {
    return this.layout.ring!;
  }

  protected override emitChannelLoop(b: Builder, c: ChannelLoopInputs): Value[][] {
    if (!this.layout.ring) return super.emitChannelLoop(b, c);
    const { spec, t, wg, args } = this;
    const L = this.layout;
    const { stages, ahead } = this.ring;
    const taps = spec.R * spec.S;
    const { at, tid, wgM, wgN, place, kBase, c0, cEnd, trips } = c;
    const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
    const wBuf = t.globalBuffer(b, args.w, args.w_bytes);
    const xSlots = this.xSlots(b, tid, place, c0, cEnd);
    const wSlots = this.wSlots(b, tid, kBase, c0, cEnd);
    const xBase = (stage: Value) => b.mul(stage, L.xStageBytes);
    const wBase = (stage: Value) => b.add(b.mul(stage, L.wStageBytes), L.stages * L.xStageBytes);
    // KRSC: tap t's weights of an output channel start t*C elements after tap 0's.
    const tapBytes = b.mul(args.C, ELEMENT_BYTES, 'w.tap.bytes');
    const cp = t.asyncCopy!;
    const copySlot = (buf: typeof xBuf, s: Slot, chunk: Value, off: Value, base: Value) => {
      // Channel tails: runs past the end of the reduced channels copy from the sentinel (zero-fill).
      const source = () => (s.room ? b.select(b.icmp('slt', b.mul(chunk, spec.ck), s.room), b.add(s.global, off), SENTINEL_OFFSET) : b.add(s.global, off));
      const go = () => cp.copy(b, buf, source(), at(b.add(base, s.lds)));
      if (s.inTile) b.ifThen(s.inTile, go, 'stage.tail');
      else go();
    };
    // Chunks past the last copy from the sentinel (zero-fill): no branch around the copies.
    const chunkOffset = (chunk: Value, extra?: Value) => {
      const off = b.mul(chunk, spec.ck * ELEMENT_BYTES);
      return b.select(b.icmp('ult', chunk, trips), extra ? b.add(off, extra) : off, SENTINEL_OFFSET, 'c.off');
    };
    const copyHalo = (chunk: Value, stage: Value) => {
      const off = chunkOffset(chunk);
      for (const s of xSlots) copySlot(xBuf, s, chunk, off, xBase(stage));
    };
    const copyTap = (chunk: Value, tap: number, stage: Value) => {
      const off = chunkOffset(chunk, tap === 0 ? undefined : b.mul(tapBytes, tap));
      for (const s of wSlots) copySlot(wBuf, s, chunk, off, wBase(stage));
    };
    const issue = this.tapIssuer(b, at, wgM, wgN);

    const lengths = this.accLengths();
    const init: Value[] = Array.from({ length: lengths.reduce((a, n) => a + n, 0) }, () => zero(f32));
    const starts = lengths.map((_, j) => lengths.slice(0, j).reduce((a, n) => a + n, 0));
    const unflat = (v: readonly Value[]) => lengths.map((n, j) => v.slice(starts[j], starts[j]! + n));
    // Prologue: group j holds step j's weights (ahead ≤ taps − 1: all of chunk 0), group 0 also chunk 0's halo.
    copyHalo(b.i32(0), b.i32(0));
    for (let j = 0; j < ahead; j++) {
      copyTap(b.i32(0), j, b.i32(j));
      cp.commit(b);
    }
    const looped = b.forLoop({ from: 0, to: trips, carried: init, name: 'chunk' }, (chunk, flat) => {
      const first = b.mul(chunk, taps, 'step.first');
      const halo = xBase(b.and(chunk, 1, 'halo.stage'));
      const descriptors = issue.halo(halo);
      let acc = unflat(flat);
      for (let tap = 0; tap < taps; tap++) {
        const step = tap === 0 ? first : b.add(first, tap);
        cp.wait(b, ahead - 1);
        wg.proxyFence(b);
        t.barrier(b);
        const ring = wBase(b.urem(step, stages, 'ring.stage'));
        if (!(this.mutation?.dropTap && tap === taps - 1)) acc = issue.tap(descriptors, ring, tap, acc);
        wg.commit(b);
        const next = tap + ahead; // step + ahead: tap next % taps of chunk + floor(next / taps)
        const nextChunk = next < taps ? chunk : b.add(chunk, Math.floor(next / taps));
        copyTap(nextChunk, next % taps, b.urem(b.add(step, ahead), stages, 'ring.next'));
        if (tap === 1) copyHalo(b.add(chunk, 1), b.xor(b.and(chunk, 1), 1));
        cp.commit(b);
        wg.wait(b, 1);
      }
      return acc.flat();
    });
    wg.wait(b, 0); // the last step's wgmmas, before the epilogue reads the accumulators
    cp.wait(b, 0); // the zero-fill copies past the end land before the workgroup exits
    return unflat(looped);
  }

  /**
   * The wgmmas of one tap step: `halo(stage base)` makes the m-blocks' descriptors of a halo stage
   * (once per chunk), `tap(...)` fences and issues tap `tap`'s k-steps on a ring stage.
   */
  protected tapIssuer(b: Builder, at: (off: Value) => Value, wgM: Value, wgN: Value): TapIssuer {
    const { spec, wg } = this;
    const L = this.layout;
    const blockOffsets = this.blockOffsets(b, wgN);
    const channelOffset = b.mul(wgM, this.n * L.rowBytes);
    const { layout, xLbo, wLbo } = this.descriptorLayout();
    const dtype = spec.dtype === 'bf16' ? 'bf16' : 'f16';
    return {
      halo: (xs: Value) => blockOffsets.map((off) => wg.descriptor(b, at(b.add(xs, off)), xLbo, spec.stride_h * L.planeColumns * L.rowBytes, layout)),
      tap: (a: readonly Value[], ws: Value, tap: number, acc: Value[][]): Value[][] => {
        const w = wg.descriptor(b, at(b.add(ws, channelOffset)), wLbo, 8 * L.rowBytes, layout);
        const out = acc.map((x) => [...x]);
        const r = Math.floor(tap / spec.S);
        const s = tap % spec.S;
        const window = (r * spec.dilation_h * L.planeColumns + this.ldsColumn(s * spec.dilation_w)) * L.rowBytes;
        wg.fence(b);
        for (let kk = 0; kk < spec.ck / 16; kk++) {
          const aStep = ((L.swizzle ? 32 * kk : 2 * kk * L.planeBytes) + window) / 16;
          const wDesc = b.add(w, BigInt(this.weightStepBytes(0, kk) / 16));
          for (let j = 0; j < this.blocksPerGroup; j++) out[j] = wg.mma(b, { n: this.n, dtype, a: b.add(a[j]!, BigInt(aStep)), b: wDesc, acc: out[j]! });
        }
        return out;
      },
    };
  }

  /**
   * Core-matrix planes: 8 consecutive slots take 8 consecutive pixels of one 8-channel group, so
   * each 8-thread phase of a cp.async writes 128 contiguous bytes of one plane at any halo size
   * (the channel group fastest puts a phase's threads planeBytes apart, conflicting or not by
   * planeBytes mod 128 and the column order), and the phases of a warp read the same global sectors. Swizzled rows keep the channel group fastest (one pixel's row per phase). The
   * threads are a multiple of 8 x ck/8, so the slots of a pass are a permutation of its vectors.
   */
  protected override xVector(b: Builder, slot: Value): Value {
    if (!this.layout.ring || this.layout.swizzle) return super.xVector(b, slot);
    const groups = this.spec.ck / 8;
    const pixel = b.add(b.and(slot, 7), b.mul(b.udiv(slot, 8 * groups), 8));
    return b.add(b.mul(pixel, groups), b.urem(b.lshr(slot, 3), groups), 'xv.phase');
  }

  /**
   * W slots of one tap: vector v = (output channel, 8-channel group). Swizzled rows: the channel
   * group fastest, as wgmma.ts (8 threads fill one 128-byte row). Core-matrix planes
   * [ck/8][tile_k][8]: 8 consecutive threads take 8 consecutive output channels of one group, so
   * each 8-thread phase of a cp.async writes 128 contiguous bytes (channel group fastest would put
   * its threads tile_k·16 bytes apart, on one bank group), and the next 8 threads read the other
   * 16 bytes of the same 32-byte global sectors.
   */
  protected override wSlots(b: Builder, tid: Value, kBase: Value, c0: Value, cEnd: Value | undefined): Slot[] {
    if (!this.layout.ring) return super.wSlots(b, tid, kBase, c0, cEnd);
    const { spec } = this;
    const groups = spec.ck / 8;
    const RS = spec.R * spec.S;
    const vectors = spec.tile_k * groups;
    const slots: Slot[] = [];
    for (let j = 0; j < Math.ceil(vectors / this.threads); j++) {
      const v = b.add(tid, j * this.threads, `wv${j}`);
      let cg: Value;
      let k: Value;
      if (this.layout.swizzle) {
        cg = b.urem(v, groups);
        k = b.udiv(v, groups);
      } else {
        cg = b.urem(b.lshr(v, 3), groups);
        k = b.add(b.and(v, 7), b.mul(b.udiv(v, 8 * groups), 8));
      }
      const kOut = b.add(kBase, k);
      const inTile = vectors % this.threads !== 0 && (j + 1) * this.threads > vectors ? b.icmp('ult', v, vectors) : undefined;
      let valid = b.icmp('ult', kOut, this.args.K);
      if (inTile) valid = b.and(valid, inTile);
      const elem = b.add(b.mul(b.mul(kOut, RS), this.args.C), b.add(b.mul(cg, 8), c0));
      const global = b.select(valid, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET, `w.goff${j}`);
      const lds = this.layout.swizzle ? this.swizzledRow(b, k, cg, `w.lds${j}`) : b.mul(b.add(b.mul(cg, spec.tile_k), k), ROW, `w.lds${j}`);
      slots.push({ global, lds, inTile, ...this.room(b, cEnd, cg, c0, `w.room${j}`) });
    }
    return slots;
  }
}
