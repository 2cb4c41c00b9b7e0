/**
 * The LDS-halo direct conv on sm_90a warpgroup MMA. Same algorithm as build.ts — per channel
 * chunk the halo tile and every tap's weights are staged once (cp.async, double-buffered) and each
 * tap multiplies a shifted window of the one staged copy — but the MMA is `wgmma` with both
 * operands in shared memory, so a tap's shifted window is just a descriptor whose start moves.
 *
 * Orientation: M = 64 output pixels (an m-block of 8 output rows x 8 columns), N = output
 * channels (the warpgroup's slice of tile_k), K = 16 input channels. Shared layouts are built from
 * 16-byte rows of 8 channels so that every 8x8 core matrix is 128 contiguous bytes:
 *   X: [ck/8 planes][halo rows][halo columns][8]  — core-matrix rows are 8 adjacent pixels of one
 *      output row (stride 2 stores even columns, then odd ones, so they stay adjacent);
 *   W: [tap][ck/8][tile_k][8]                       — core-matrix rows are 8 adjacent output channels.
 */
import { f32, i8, i32, i64, vec, zero, bfloat, half, type Builder, type EpilogueStore, type Target, type Value, type WarpgroupMma } from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import { ldsHaloColumn, specGeometry, stagedSpec, wgmmaLds, type Spec, type SpecGeometry, type WgmmaLds } from '../spec.js';
import { WORKSPACE_ELEMENT_BYTES } from '../validate.js';
import { emitPixelTileOrigin, emitTileOrigin, type PixelTileOrigin, type TileOrigin } from './grid-decode.js';
import {
  ConvKernelError,
  SENTINEL_OFFSET,
  builtKernel,
  emitChannelSlice,
  emitHaloPhaseColumn,
  emitHaloSource,
  emitOutputSliceBase,
  openConvKernel,
  openStoreEpilogue,
  variantArg,
  type BuildMutation,
  type ConvKernel,
  type KernelArgs,
} from './open.js';
import { emitPixelOutput, emitPixelSource } from './pixels.js';
import { emitStagedTileStore, stagedTile } from './staged-store.js';
import { stagesOutputInLds } from '../store-path.js';

const ROW = 16; // bytes of one core-matrix row: 8 channels
const log2 = (n: number): number => Math.log2(n);

/** One 16-byte cp.async per slot, hoisted out of the channel loop. */
export interface Slot {
  /** Global byte offset at channel chunk 0 (the sentinel when the element is outside the tensor). */
  readonly global: Value;
  /** Byte offset inside one stage. */
  readonly lds: number | Value;
  /** Partial last pass: whether this thread has a slot at all. */
  readonly inTile: Value | undefined;
  /** Channel tails: channels from the slot's first one at chunk 0 to the end of the reduced channels (signed). */
  readonly room?: Value;
}

/** Builds the warpgroup-MMA kernel of a validated dense or split_c spec. */
export function buildWgmmaConvKernel(spec: Spec, t: Target, builder: typeof WgmmaConvBuilder = WgmmaConvBuilder, mutation?: BuildMutation): ConvKernel {
  if (!t.warpgroupMma || !t.asyncCopy) throw new ConvKernelError(`${t.name} has no warpgroup MMA with cp.async staging; ${spec.atom} needs sm_90a`);
  return new builder(spec, t, t.warpgroupMma, mutation).build();
}

/** What the epilogue of a tile needs to place its accumulators. */
export interface WgmmaTileOrigin {
  readonly tid: Value;
  readonly wgM: Value;
  readonly wgN: Value;
  readonly place: TileOrigin | PixelTileOrigin;
  readonly kBase: Value;
  readonly Ho: Value;
  readonly Wo: Value;
  readonly K: Value;
  readonly splitIdx: Value | undefined;
  /** A pointer into the kernel's LDS (the staged output tile starts at byte 0). */
  readonly ldsAt: (byteOffset: Value) => Value;
}

/** What the channel loop stages from and issues into. */
export interface ChannelLoopInputs {
  /** Byte offset in the (aligned) shared window -> pointer. */
  readonly at: (off: Value) => Value;
  readonly tid: Value;
  readonly wgM: Value;
  readonly wgN: Value;
  readonly place: TileOrigin | PixelTileOrigin;
  /** First output channel of the tile, first input channel and end of the reduced channels (tails), chunks. */
  readonly kBase: Value;
  readonly c0: Value;
  readonly cEnd: Value | undefined;
  readonly trips: Value;
}

/**
 * The m-block kernel; whole-map tiles (kernel/wgmma-whole-map.ts) override the operand roles:
 * which slots stage X, which wgmmas a chunk issues, and how the accumulators are stored.
 */
export class WgmmaConvBuilder {
  /** The spec whose shared-memory layout the kernel stages (pointwise: its 1x1 stride-1 form, see `stagedSpec`). */
  protected readonly spec: Spec;
  protected readonly g: SpecGeometry;
  protected readonly layout: WgmmaLds;
  protected readonly threads: number;
  /** Output channels per warpgroup (wgmma N) and m-blocks per warpgroup. */
  protected readonly n: number;
  protected readonly blocksPerGroup: number;
  /** The kernel's arguments, set when {@link build} opens the kernel. */
  protected args!: KernelArgs;

  constructor(
    protected readonly kernelSpec: Spec,
    protected readonly t: Target,
    protected readonly wg: WarpgroupMma,
    /** Tests only: a deliberate defect (see `BuildMutation`). */
    protected readonly mutation?: BuildMutation,
  ) {
    const spec = stagedSpec(kernelSpec);
    this.spec = spec;
    this.g = specGeometry(spec);
    this.layout = wgmmaLds(spec);
    this.threads = this.g.threads;
    this.n = spec.tile_k / spec.waves_m;
    this.blocksPerGroup = this.g.nTilesPerWave;
  }

  build(): ConvKernel {
    const { kernelSpec: spec, t } = this;
    const { module, name, abi, args, b, lds } = openConvKernel(spec, t, { workgroupSize: this.threads, ids: { workitem: ['x'], workgroup: ['x'] } }, 128);
    this.args = args;
    this.emitBody(b, lds);
    b.ret();
    return builtKernel(spec, t, { module, name, abi }, {
      threads: this.threads,
      dynamicSharedBytes: this.g.ldsBytes,
      schedule: 'async-copy',
      fragmentLoad: 'descriptor',
      weightLayout: 'core-matrix',
      epilogue: stagesOutputInLds(spec) ? 'lds-staged' : 'direct',
    });
  }

  /** LDS column of halo column `c`: strided tiles store their columns by phase, so a tap's window is contiguous. */
  protected ldsColumn(c: number): number {
    return ldsHaloColumn(c, this.layout.ldsInW, this.spec.stride_w);
  }

  protected emitBody(b: Builder, window: Value): void {
    const { spec, t, args } = this;
    const L = this.layout;
    // Swizzled rows take their XOR pattern from absolute address bits 7..9: start on a 1 KiB boundary
    // (the kernel asks for alignSlack bytes more).
    const lds = L.swizzle ? b.gep(i8, window, [b.trunc(b.and(b.sub(0, b.ptrtoint(window, i64)), 1023), i32)], { name: 'lds.aligned' }) : window;

    // ---- ids and grid decode (as build.ts: channel tile fastest inside a super-tile, split slowest)
    const tid = t.workitemId(b, 'x');
    const group = b.lshr(tid, 7, 'wg');
    const wgM = b.urem(group, spec.waves_m, 'wg.m');
    const wgN = b.udiv(group, spec.waves_m, 'wg.n');
    const { Ho, Wo, K } = args;
    const channelTiles = () => ({ kTiles: b.udiv(b.add(K, spec.tile_k - 1), spec.tile_k, 'k.tiles') });
    const place = spec.variant === 'pointwise' ? emitPixelTileOrigin(b, t, spec, channelTiles) : emitTileOrigin(b, t, spec, channelTiles);
    const { kTile, splitIdx } = place;
    const { c0, cEnd, trips } = emitChannelSlice(b, args, spec, splitIdx);
    const kBase = b.mul(kTile, spec.tile_k, 'k.base');

    const at = (off: Value) => b.gep(i8, lds, [off]);
    const accs = this.emitChannelLoop(b, { at, tid, wgM, wgN, place, kBase, c0, cEnd, trips });

    this.emitEpilogue(b, accs, { tid, wgM, wgN, place, kBase, Ho, Wo, K, splitIdx, ldsAt: at });
  }

  /**
   * The channel loop: stages chunk by chunk (halo and every tap's weights per stage) and issues
   * each staged chunk's wgmmas. Returns the accumulators, one array per m-block.
   */
  protected emitChannelLoop(b: Builder, c: ChannelLoopInputs): Value[][] {
    const { spec, t, wg, args } = this;
    const { at, tid, wgM, wgN, place, kBase, c0, cEnd, trips } = c;
    // ---- staging (hoisted: the loop only adds the chunk's channel offset)
    const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
    const wBuf = t.globalBuffer(b, args.w, args.w_bytes);
    const xSlots = this.xSlots(b, tid, place, c0, cEnd);
    const wSlots = this.wSlots(b, tid, kBase, c0, cEnd);
    const xBase = (stage: Value) => b.mul(stage, this.layout.xStageBytes);
    const wBase = (stage: Value) => b.add(b.mul(stage, this.layout.wStageBytes), this.layout.stages * this.layout.xStageBytes);
    const cp = t.asyncCopy!;
    // Chunks past the last copy from the sentinel (zero-fill): the loop needs no branch around its copies.
    const copyChunk = (chunk: Value, stage: Value) => {
      const off = b.select(b.icmp('ult', chunk, trips), b.mul(chunk, spec.ck * ELEMENT_BYTES), SENTINEL_OFFSET, 'c.off');
      const xb = xBase(stage);
      const wb = wBase(stage);
      const copySlot = (buf: typeof xBuf, s: Slot, base: Value) => {
        // Channel tails: runs past the end of the reduced channels copy from the sentinel (zero-fill).
        const source = () => (s.room ? b.select(b.icmp('slt', b.mul(chunk, spec.ck), s.room), b.add(s.global, off), SENTINEL_OFFSET) : b.add(s.global, off));
        const go = () => cp.copy(b, buf, source(), at(b.add(base, s.lds)));
        if (s.inTile) b.ifThen(s.inTile, go, 'stage.tail');
        else go();
      };
      for (const s of xSlots) copySlot(xBuf, s, xb);
      for (const s of wSlots) copySlot(wBuf, s, wb);
      cp.commit(b);
    };

    // `then` runs between issuing the chunk's wgmmas and waiting for them: the copies are issued
    // while the tensor cores work (into a stage whose wgmmas every warpgroup has waited for); the
    // wait leaves `leave` commit groups in flight.
    const issue = this.chunkIssuer(b, at, xBase, wBase, wgM, wgN);
    const mmaChunk = (stage: Value, acc: Value[][], leave: number, then?: () => void): Value[][] => {
      const out = issue(stage, acc);
      wg.commit(b);
      then?.();
      wg.wait(b, leave);
      return out;
    };

    // ---- the channel loop. With three or more stages one chunk's wgmmas stay in flight across the
    // loop edge (wait_group 1), so the tensor cores are not drained at every chunk; copies then run
    // stages-2 chunks ahead into the stage chunk i-2 used: every warpgroup waited for that chunk
    // before the barrier below. With two stages: wait_group 0, copies one chunk ahead.
    const stages = this.layout.stages;
    const inFlight = stages >= 3 ? 1 : 0;
    const ahead = stages - 1 - inFlight;
    const lengths = this.accLengths();
    const init: Value[] = Array.from({ length: lengths.reduce((a, n) => a + n, 0) }, () => zero(f32));
    const starts = lengths.map((_, j) => lengths.slice(0, j).reduce((a, n) => a + n, 0));
    const unflat = (v: readonly Value[]) => lengths.map((n, j) => v.slice(starts[j], starts[j]! + n));
    for (let c = 0; c < ahead; c++) copyChunk(b.i32(c), b.i32(c));
    const looped = b.forLoop({ from: 0, to: trips, carried: init, name: 'chunk' }, (i, acc) => {
      cp.wait(b, ahead - 1);
      wg.proxyFence(b);
      t.barrier(b);
      const cur = b.urem(i, stages, 'stage');
      const next = b.add(i, ahead);
      return mmaChunk(cur, unflat(acc), inFlight, () => copyChunk(next, b.urem(next, stages))).flat();
    });
    if (inFlight) wg.wait(b, 0); // the last chunk's wgmmas, before the epilogue reads the accumulators
    cp.wait(b, 0); // the zero-fill copies past the end land before the workgroup exits
    return unflat(looped);
  }

  /** Accumulators per thread, as arrays of one wgmma's n/2 each: one per m-block of this warpgroup. */
  protected accLengths(): number[] {
    return Array.from({ length: this.blocksPerGroup }, () => this.n / 2);
  }

  /**
   * The wgmmas of one staged chunk: per tap and k-step, one per m-block of the warpgroup, all
   * sharing the weights' descriptor. Returns a function of the stage and the accumulators that
   * computes the stage's descriptors, fences and issues (the caller commits).
   */
  protected chunkIssuer(b: Builder, at: (off: Value) => Value, xBase: (stage: Value) => Value, wBase: (stage: Value) => Value, wgM: Value, wgN: Value) {
    const { spec, wg } = this;
    const L = this.layout;
    // ---- descriptors: one base per stage and warpgroup; taps and k-steps add constants (16-byte units)
    // The warpgroup's m-block and channel offsets inside a stage are loop-invariant: computed once.
    const blockOffsets = this.blockOffsets(b, wgN);
    const channelOffset = b.mul(wgM, this.n * L.rowBytes);
    // SBO = the next 8-row group: the m-block's next output row (X), 8 output channels on (W).
    const { layout, xLbo, wLbo } = this.descriptorLayout();
    const descs = (stage: Value) => {
      const xs = xBase(stage);
      const ws = wBase(stage);
      const a = blockOffsets.map((off) => wg.descriptor(b, at(b.add(xs, off)), xLbo, spec.stride_h * L.planeColumns * L.rowBytes, layout));
      const w = wg.descriptor(b, at(b.add(ws, channelOffset)), wLbo, 8 * L.rowBytes, layout);
      return { a, w };
    };
    return (stage: Value, acc: Value[][]): Value[][] => {
      const d = descs(stage);
      const out = acc.map((a) => [...a]);
      wg.fence(b);
      for (let r = 0; r < spec.R; r++)
        for (let s = 0; s < spec.S; s++)
          for (let kk = 0; kk < spec.ck / 16; kk++) {
            const tap = r * spec.S + s;
            // A k-step is 16 channels: 2 planes on, or 32 bytes along a swizzled row.
            const window = (r * spec.dilation_h * L.planeColumns + this.ldsColumn(s * spec.dilation_w)) * L.rowBytes;
            const aStep = ((L.swizzle ? 32 * kk : 2 * kk * L.planeBytes) + window) / 16;
            const wStep = this.weightStepBytes(tap, kk) / 16;
            const wDesc = b.add(d.w, BigInt(wStep));
            for (let j = 0; j < this.blocksPerGroup; j++) {
              out[j] = wg.mma(b, { n: this.n, dtype: spec.dtype === 'bf16' ? 'bf16' : 'f16', a: b.add(d.a[j]!, BigInt(aStep)), b: wDesc, acc: out[j]! });
            }
          }
      return out;
    };
  }

  /**
   * The descriptors' layout and leading-byte offsets, both operands K-major: LBO = the next 8
   * channels, one plane (X) or tile_k weight rows (W); unused (16) for swizzled rows.
   */
  protected descriptorLayout(): { layout: { swizzle: '128B' | 'none' }; xLbo: number; wLbo: number } {
    const L = this.layout;
    return { layout: { swizzle: L.swizzle ? '128B' : 'none' }, xLbo: L.swizzle ? 16 : L.planeBytes, wLbo: L.swizzle ? 16 : this.spec.tile_k * ROW };
  }

  /** Byte offset in a W stage of tap `tap`'s k-step `kk` (16 channels: 32 bytes along a swizzled row, or 2 planes of tile_k rows). */
  protected weightStepBytes(tap: number, kk: number): number {
    const { spec } = this;
    return this.layout.swizzle ? tap * spec.tile_k * this.layout.rowBytes + 32 * kk : (tap * (spec.ck / 8) + 2 * kk) * spec.tile_k * ROW;
  }

  /** Byte offset in an X stage of each of this warpgroup's m-blocks (tap 0, channel plane 0). */
  protected blockOffsets(b: Builder, gn: Value): Value[] {
    const { spec } = this;
    const blocksW = spec.tile_w / 8;
    const out: Value[] = [];
    for (let j = 0; j < this.blocksPerGroup; j++) {
      const { image, bh, bw } = this.blockAt(b, b.add(b.mul(gn, this.blocksPerGroup), j));
      // Image i's halo tile starts ldsInH rows below image i-1's (tile_n > 1).
      const haloRow = b.mul(bh, 8 * spec.stride_h);
      const row = b.mul(image ? b.add(b.mul(image, this.layout.ldsInH), haloRow) : haloRow, this.layout.planeColumns);
      // Column of the block's first pixel: stride 1 → 8*bw; stride 2 → even half, index 8*bw.
      const col = b.mul(bw, 8);
      out.push(b.mul(b.add(row, col), this.layout.rowBytes, `x.block${j}`));
    }
    return out;
  }

  /**
   * Byte offset of 16-byte chunk `chunk` of 128-byte row `row` in a 1 KiB-aligned swizzled stage:
   * chunk ^ (row & 7) — @rocke/ir's swizzle128 specialised to a row and chunk. The general form
   * (swizzle128 on the whole offset) is the same function but benchmarks slower on sm_90, so the
   * kernel keeps this one.
   */
  protected swizzledRow(b: Builder, row: Value, chunk: Value, name: string): Value {
    return b.add(b.mul(row, this.layout.rowBytes), b.shl(b.xor(chunk, b.and(row, 7)), 4), name);
  }

  /** M-block `q` of the tile: its image inside the tile (undefined for tile_n 1), block row and block column. */
  protected blockAt(b: Builder, q: Value): { image: Value | undefined; bh: Value; bw: Value } {
    const { spec } = this;
    const blocksW = spec.tile_w / 8;
    const perImage = (spec.tile_h / 8) * blocksW;
    const inImage = spec.tile_n > 1 ? b.urem(q, perImage) : q;
    return { image: spec.tile_n > 1 ? b.udiv(q, perImage) : undefined, bh: b.udiv(inImage, blocksW), bw: b.urem(inImage, blocksW) };
  }

  /** X slots: vector v = (pixel, 8-channel group), channel group fastest (a pixel's ck channels are contiguous in NHWC). */
  protected xSlots(b: Builder, tid: Value, place: TileOrigin | PixelTileOrigin, c0: Value, cEnd: Value | undefined): Slot[] {
    const { spec, g } = this;
    const slots: Slot[] = [];
    for (let j = 0; j < g.xPasses; j++) {
      const v = this.xVector(b, b.add(tid, j * this.threads, `xv${j}`));
      const inTileOf = () => (g.xVectors % this.threads !== 0 && (j + 1) * this.threads > g.xVectors ? b.icmp('ult', v, g.xVectors) : undefined);
      const { global, row, col, cv, inTile } = place.flat
        ? emitPixelSource(b, this.args, this.kernelSpec, g, { v, j, flat: place.flat, cStart: c0, inTile: inTileOf })
        : emitHaloSource(b, this.args, spec, g, { v, j, image: place.image, ih0: place.ih0, iw0: place.iw0, cStart: c0, inTile: inTileOf });
      const ldsCol = spec.stride_w > 1 ? emitHaloPhaseColumn(b, col, g.ldsInW, spec.stride_w) : col;
      const pixel = () => b.add(b.mul(row, this.layout.planeColumns), ldsCol);
      const lds = this.layout.swizzle ? this.swizzledRow(b, pixel(), cv, `x.lds${j}`) : b.add(b.mul(cv, this.layout.planeBytes), b.mul(pixel(), ROW), `x.lds${j}`);
      slots.push({ global, lds, inTile, ...this.room(b, cEnd, cv, c0, `x.room${j}`) });
    }
    return slots;
  }

  /**
   * The X vector (pixel · ck/8 + 8-channel group) thread slot `slot` stages: the slot itself, the
   * channel group fastest (a pixel's channels are contiguous in NHWC).
   */
  protected xVector(_b: Builder, slot: Value): Value {
    return slot;
  }

  /** Channel tails: the slot's room before the end of the reduced channels (see {@link Slot.room}). */
  protected room(b: Builder, cEnd: Value | undefined, group: Value, c0: Value, name: string): { room?: Value } {
    return cEnd ? { room: b.sub(cEnd, b.add(b.mul(group, 8), c0), name) } : {};
  }

  /** W slots: vector v = (tap, output channel, 8-channel group), channel group fastest (contiguous in KRSC). */
  protected wSlots(b: Builder, tid: Value, kBase: Value, c0: Value, cEnd: Value | undefined): Slot[] {
    const { spec } = this;
    const groups = spec.ck / 8;
    const RS = spec.R * spec.S;
    const vectors = RS * spec.tile_k * groups;
    const slots: Slot[] = [];
    for (let j = 0; j < Math.ceil(vectors / this.threads); j++) {
      const v = b.add(tid, j * this.threads, `wv${j}`);
      const cg = b.urem(v, groups);
      const rest = b.udiv(v, groups);
      const k = b.urem(rest, spec.tile_k);
      const tap = b.udiv(rest, spec.tile_k);
      const kOut = b.add(kBase, k);
      const inTile = vectors % this.threads !== 0 && (j + 1) * this.threads > vectors ? b.icmp('ult', v, vectors) : undefined;
      let valid = b.icmp('ult', kOut, this.args.K);
      if (inTile) valid = b.and(valid, inTile);
      const elem = b.add(b.mul(b.add(b.mul(kOut, RS), tap), this.args.C), b.add(b.mul(cg, 8), c0));
      const global = b.select(valid, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET, `w.goff${j}`);
      const lds = this.layout.swizzle
        ? this.swizzledRow(b, b.add(b.mul(tap, spec.tile_k), k), cg, `w.lds${j}`)
        : b.mul(b.add(b.mul(b.add(b.mul(tap, groups), cg), spec.tile_k), k), ROW, `w.lds${j}`);
      slots.push({ global, lds, inTile, ...this.room(b, cEnd, cg, c0, `w.room${j}`) });
    }
    return slots;
  }

  /**
   * Accumulator i of thread (warp w, lane l) of a warpgroup holds pixel 16w + l/4 + 8*((i>>1)&1)
   * of the m-block (output row 2w or 2w+1, column l/4) and channels 8*(i>>2) + 2*(l%4) + {0,1}:
   * two adjacent channels. They go through the staged tile (kernel/staged-store.ts) and leave as
   * 16-byte vectors; output-channel tails store each pair straight from the accumulators (NHWK;
   * split_c writes fp32 to its workspace slice).
   */
  protected emitEpilogue(b: Builder, accs: Value[][], o: WgmmaTileOrigin): void {
    if (stagesOutputInLds(this.kernelSpec)) this.emitStagedEpilogue(b, accs, o);
    else this.emitDirectEpilogue(b, accs, o);
  }

  /** The accumulators' channel pairs into the staged tile (one band: see `outputStaging`), then the shared 16-byte store. */
  private emitStagedEpilogue(b: Builder, accs: Value[][], o: WgmmaTileOrigin): void {
    const { kernelSpec, spec, t, args } = this;
    const tile = stagedTile(kernelSpec);
    const S = tile.elementBytes;
    const warp = b.and(b.lshr(o.tid, log2(32)), 3, 'warp');
    const lane = b.and(o.tid, 31, 'lane');
    // The lane's first pixel (row 2w, column l/4 of an m-block) and first channel, as a byte offset into the tile.
    const lanePixel = b.add(b.mul(b.mul(warp, 2), spec.tile_w), b.lshr(lane, 2));
    const laneChannel = b.add(b.mul(o.wgM, this.n), b.mul(b.and(lane, 3), 2));
    const laneBase = b.mul(b.add(b.mul(lanePixel, tile.stride), laneChannel), S, 'out.lds.lane');
    const writeBand = () => {
      for (let j = 0; j < this.blocksPerGroup; j++) {
        const { image, bh, bw } = this.blockAt(b, b.add(b.mul(o.wgN, this.blocksPerGroup), j));
        // The m-block's first tile pixel: virtual row image * tile_h + 8 bh, column 8 bw.
        const row = image ? b.add(b.mul(image, spec.tile_h), b.mul(bh, 8)) : b.mul(bh, 8);
        const blockPixel = b.add(b.mul(row, spec.tile_w), b.mul(bw, 8));
        const base = b.add(laneBase, b.mul(blockPixel, tile.stride * S), `out.lds.b${j}`);
        for (let h = 0; h < 2; h++)
          for (let cb = 0; cb < this.n / 8; cb++) {
            const pair = b.vector([accs[j]![4 * cb + 2 * h]!, accs[j]![4 * cb + 2 * h + 1]!]);
            const off = (h * spec.tile_w * tile.stride + 8 * cb) * S;
            b.store(tile.convert(b, pair, 2), o.ldsAt(b.add(base, off)), { align: 2 * S });
          }
      }
    };
    emitStagedTileStore(b, { spec: kernelSpec, t, args, tid: o.tid, threads: this.threads, ldsAt: o.ldsAt, place: o.place, kBase: o.kBase, kLimit: o.K, kOffset: undefined, Ho: o.Ho, Wo: o.Wo, splitIdx: o.splitIdx }, writeBand);
  }

  /** Each thread stores its channel pairs straight from the accumulators (output-channel tails: channel by channel). */
  private emitDirectEpilogue(b: Builder, accs: Value[][], o: WgmmaTileOrigin): void {
    const { spec, t, args } = this;
    const split = spec.variant === 'split_c';
    const eBytes = split ? WORKSPACE_ELEMENT_BYTES : ELEMENT_BYTES;
    const outBuf = split ? t.globalBuffer(b, variantArg(args, 'ws'), variantArg(args, 'ws_bytes')) : t.globalBuffer(b, args.y, args.y_bytes);
    const outElem = spec.dtype === 'bf16' ? bfloat : half;
    const slice = emitOutputSliceBase(b, args, o.splitIdx) ?? b.i32(0);
    const baseOf = (n: Value) => b.add(slice, b.mul(n, args.y_stride_n), 'y.image');
    const window = o.place.flat ? undefined : o.place;
    const tileImageBase = spec.tile_n > 1 || !window ? undefined : baseOf(window.image);
    const warp = b.and(b.lshr(o.tid, log2(32)), 3, 'warp');
    const lane = b.and(o.tid, 31, 'lane');
    const kThread = b.add(b.add(o.kBase, b.mul(o.wgM, this.n)), b.mul(b.and(lane, 3), 2), 'k.thread');
    const epilogue = openStoreEpilogue(t, b, spec);
    // Each pair reads its bias with its residual (an L1 hit after the first pixel): held for the
    // whole epilogue, a thread's n/4 bias values would crowd out the accumulators.
    const fused: (() => EpilogueStore)[] = [];
    for (let j = 0; j < this.blocksPerGroup; j++) {
      const { image, bh, bw } = this.blockAt(b, b.add(b.mul(o.wgN, this.blocksPerGroup), j));
      let rowPixel: (h: number) => { pixOk: Value; pixel: Value };
      if (!window) {
        // Pointwise: row 2*warp + h, column lane/4 of the m-block, as flat pixels into the tile.
        const blockPixel = b.add(b.add(b.mul(b.mul(bh, 8), spec.tile_w), b.mul(bw, 8)), b.lshr(lane, 2), `pix.b${j}`);
        rowPixel = (h) => {
          const out = emitPixelOutput(b, args, o.place.flat!, b.add(blockPixel, b.mul(b.add(b.mul(warp, 2), h), spec.tile_w)));
          return { pixOk: out.ok, pixel: out.elem };
        };
      } else {
        const n = image ? b.add(window.image, image) : window.image;
        const imageBase = tileImageBase ?? baseOf(n);
        const ohBlock = b.add(window.oh0, b.mul(bh, 8));
        const ow = b.add(b.add(window.ow0, b.mul(bw, 8)), b.lshr(lane, 2), `ow.b${j}`);
        const wOk = image ? b.and(b.icmp('ult', ow, o.Wo), b.icmp('ult', n, args.N)) : b.icmp('ult', ow, o.Wo);
        rowPixel = (h) => {
          const oh = b.add(ohBlock, b.add(b.mul(warp, 2), h));
          return { pixOk: b.and(wOk, b.icmp('ult', oh, o.Ho)), pixel: b.add(imageBase, b.add(b.mul(oh, args.y_stride_h), b.mul(ow, args.y_stride_w))) };
        };
      }
      for (let h = 0; h < 2; h++) {
        const { pixOk, pixel } = rowPixel(h);
        for (let cb = 0; cb < this.n / 8; cb++) {
          const k = b.add(kThread, cb * 8);
          const lo = accs[j]![4 * cb + 2 * h]!;
          const hi = accs[j]![4 * cb + 2 * h + 1]!;
          if (spec.k_tail) {
            // Output-channel tails: each channel of the pair checked and stored (and fused) alone.
            [lo, hi].forEach((acc, e) => {
              const make = (): EpilogueStore => {
                const ke = e === 0 ? k : b.add(k, 1);
                const valid = b.and(pixOk, b.icmp('ult', ke, o.K));
                const element = b.add(pixel, ke);
                const off = b.select(valid, b.mul(element, eBytes), SENTINEL_OFFSET);
                return { acc, at: { channel: ke, element }, store: (bb, v) => t.globalStore(bb, outBuf, off, split ? v : bb.fptrunc(v, outElem), { align: eBytes }) };
              };
              if (epilogue) fused.push(make);
              else {
                const s = make();
                s.store(b, s.acc);
              }
            });
            continue;
          }
          // K is a multiple of 8 (validated), so k < K covers k + 1 too.
          const make = () => {
            const valid = b.and(pixOk, b.icmp('ult', k, o.K));
            const off = b.select(valid, b.mul(b.add(pixel, k), eBytes), SENTINEL_OFFSET);
            return { acc: b.vector([lo, hi]), store: (bb: Builder, v: Value) => t.globalStore(bb, outBuf, off, split ? v : bb.fptrunc(v, vec(2, outElem)), { align: 2 * eBytes }) };
          };
          if (epilogue) fused.push(() => ({ ...make(), at: { channel: k, element: b.add(pixel, k) } }));
          else {
            const s = make();
            s.store(b, s.acc);
          }
        }
      }
    }
    epilogue?.storeAll(b, fused);
  }
}
