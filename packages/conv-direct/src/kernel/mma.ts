/**
 * The LDS-halo direct forward convolution on per-wave MMA atoms (AMD MFMA, NVIDIA mma.sync),
 * written once and lowered through an @rocke/ir target (gfx950, gfx942, sm_90). Per workgroup: one
 * output tile of tile_h x tile_w pixels x tile_k channels. Per channel chunk of ck channels: the
 * input tile with its halo and the weights of every tap are staged in LDS; then every tap (r, s)
 * is an MMA GEMM over shifted windows of that one staged copy. The target supplies the atom (with
 * its lane layouts), global memory with zero-when-out-of-range semantics, barriers, and — where it
 * has them — ldmatrix, cp.async and direct-to-LDS loads.
 */
import {
  bfloat,
  f32,
  half,
  i16,
  i32,
  i8,
  vec,
  voidT,
  zero,
  type Builder,
  type EpilogueStore,
  type GlobalBuffer,
  type MmaAtom,
  type Target,
  type Value,
} from '@rocke/ir';
import { ELEMENT_BYTES } from '../problem.js';
import { residency } from '../residency.js';
import { haloExtent, ldsHaloColumn, specGeometry, stagedSpec, streamLds, type Spec, type SpecGeometry } from '../spec.js';
import { ATOMS } from '../targets.js';
import { WORKSPACE_ELEMENT_BYTES } from '../validate.js';
import { stagesOutputInLds } from '../store-path.js';
import { activationCoord, isLaneContiguous, matrixOrigins, outputCoord, vectorRuns, weightCoord, type Run, type StorageCoord } from './fragments.js';
import { emitPixelTileOrigin, emitStreamOrigin, emitTileOrigin, type PixelTileOrigin, type TileOrigin } from './grid-decode.js';
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
  type StagingSchedule,
} from './open.js';
import { emitPixelOutput, emitPixelSource } from './pixels.js';
import { emitStagedTileStore, stagedTile } from './staged-store.js';
import { usesAsyncCopy, weightPieceElems } from './schedule.js';
import { emitFoldedRunOffset, emitFoldedSource, type FoldedSlot } from './tap-fold.js';

/** Grouped staging: a weight piece outside the tile gets this in-group channel, never below cpg after any chunk. */
const OFF_DIAGONAL = 0x40000000;

/** The @rocke/ir atom of a spec: e.g. `32x32x16` + bf16 -> `32x32x16.bf16`, `m16n8k16` + fp16 -> `16x8x16.f16`. */
export function irAtomName(spec: Spec): string {
  const a = ATOMS[spec.atom];
  return `${a.m}x${a.n}x${a.k}.${spec.dtype === 'bf16' ? 'bf16' : 'f16'}`;
}

const log2 = (n: number): number => Math.log2(n);
const isPow2 = (n: number): boolean => Number.isInteger(log2(n));

/** Builds the mma.sync / MFMA kernel of a validated spec. */
export function buildMmaConvKernel(spec: Spec, t: Target, mutation?: BuildMutation): ConvKernel {
  return new MmaConvBuilder(spec, t, mutation).build();
}

/**
 * One piece of a weight staging slot (grouped: a slot's channels may straddle groups, so it loads
 * in pieces of channels that share one group; channel tails: pieces of c_tail channels). `rel`
 * (grouped or tails) is the piece's channel at chunk 0 — within its group, or within the row for
 * dense tails — or a huge value when the piece is outside the tile: the piece is live at chunk i
 * exactly when `rel + i*ck < wLimit` (unsigned; wLimit: cpg, or the end of the reduced channels).
 */
interface WeightPiece {
  readonly global: Value;
  readonly rel: Value | undefined;
  readonly elems: number;
}

/** One hoisted staging slot: where its 16 (or fragA*2) bytes come from and go. */
interface StagingSlot {
  /** Byte offset in the global tensor of channel chunk 0, or the sentinel. */
  readonly global: Value;
  /** Byte offset in one LDS stage of the array. */
  readonly lds: Value;
  /**
   * Last, partial pass only: whether this thread's slot is inside the stage. Slots past it skip
   * the LDS write (several threads writing one shared scratch tail would be a data race).
   */
  readonly inTile: Value | undefined;
  /** Weights only: the pieces that make up the slot (one for dense and split_c without tails). */
  readonly pieces?: readonly WeightPiece[];
  /**
   * X with channel tails only: channels from the slot's first one at chunk 0 to the end of the
   * reduced channels (signed; the vector's run p is live at chunk i when i*ck + p*c_tail < room).
   */
  readonly room?: Value;
  /** X of a tap-folded spec only: the hoisted source its runs are addressed from (tap-fold.ts). */
  readonly fold?: FoldedSlot;
  /**
   * Weights staged by direct-to-LDS loads only: byte offset in one LDS stage of the slot of lane 0
   * of this thread's wave (the wave's M0 base; lane l's slot follows at l slots).
   */
  readonly waveLds?: Value;
}

/** The channels one workgroup reduces and produces (dense / split_c / grouped). */
interface ChannelPlan {
  /** First output channel of the tile inside its (merged) block, and the block's channel count. */
  readonly kBase: Value;
  readonly kLimit: Value;
  /** Grouped: global output channel of the merged block's first channel (dense: none, 0). */
  readonly kOffset: Value | undefined;
  /** Global input channel of x read at chunk 0. */
  readonly xChannel0: Value;
  /** Input channel of chunk 0 within the block whose weights are read (dense: global). */
  readonly wChannel0: Value;
  /** Elements per weight row (C, or cpg for grouped). */
  readonly wRowElems: Value;
  /** Channel tails: global input channel one past the last this tile reduces (C, the split's end, the merged block's end). */
  readonly xEnd: Value | undefined;
  /** Bound of a weight piece's `rel` (grouped: cpg; dense with tails: the end of the reduced channels). */
  readonly wLimit: Value | undefined;
  readonly trips: Value;
  readonly grouped: { readonly cpg: Value; readonly kpg: Value } | undefined;
}

class MmaConvBuilder {
  /** The spec whose LDS geometry the kernel stages (pointwise: its 1x1 stride-1 form, see `stagedSpec`). */
  private readonly spec: Spec;
  private readonly g: SpecGeometry;
  private readonly atom: MmaAtom;
  private readonly elem;
  private readonly threads: number;
  private readonly wave: number;
  private readonly ldmatrix: boolean;
  private readonly schedule: StagingSchedule;
  private readonly weightLayout: 'fragment' | 'swizzled-rows';
  /** Bytes of one X stage (with tail) and one W stage (with tail). */
  private readonly xStageBytes: number;
  private readonly wStageBytes: number;
  private readonly stages: number;
  /** Whether the output tile goes through LDS (16-byte global stores, kernel/staged-store.ts). */
  private readonly stagedEpilogue: boolean;
  /** Vector elements of one weight staging slot, and of the pieces it loads in. */
  private readonly wSlotElems: number;
  private readonly wPieceElems: number;
  /** The kernel's arguments, set when {@link build} opens the kernel. */
  private args!: KernelArgs;

  constructor(
    private readonly kernelSpec: Spec,
    private readonly t: Target,
    private readonly mutation: BuildMutation | undefined,
  ) {
    const spec = stagedSpec(kernelSpec);
    this.spec = spec;
    this.g = specGeometry(spec);
    this.atom = t.atom(irAtomName(spec));
    this.elem = spec.dtype === 'bf16' ? bfloat : half;
    this.threads = this.g.threads;
    this.wave = t.waveSize;
    if (this.wave !== this.g.waveSize) throw new ConvKernelError(`${t.name} waves have ${this.wave} lanes, the spec geometry assumes ${this.g.waveSize}`);
    const aOrigins = matrixOrigins(weightCoord(this.atom), this.atom.lanes, this.atom.aType.count);
    const bOrigins = matrixOrigins(activationCoord(this.atom), this.atom.lanes, this.atom.bType.count);
    this.ldmatrix = t.matrixLoad !== undefined && aOrigins !== null && bOrigins !== null;
    this.weightLayout = this.ldmatrix ? 'swizzled-rows' : 'fragment';
    if (!this.ldmatrix && !isLaneContiguous(weightCoord(this.atom), this.atom.lanes, this.atom.aType.count)) {
      throw new ConvKernelError(`atom ${this.atom.name}: A fragments are neither lane-contiguous nor ldmatrix tiles`);
    }
    this.stages = spec.double_buffer ? 2 : 1;
    this.xStageBytes = ELEMENT_BYTES * (this.g.ldsXElems + this.g.ldsXTail);
    this.wStageBytes = ELEMENT_BYTES * (this.g.ldsWElems + this.g.ldsWTail);
    this.wSlotElems = this.weightLayout === 'fragment' ? this.atom.aType.count : 8;
    this.wPieceElems = weightPieceElems(spec, this.wSlotElems);
    // cp.async moves whole 16-byte chunks: grouped weights in smaller pieces use register prefetch.
    const async = usesAsyncCopy(spec);
    if (async && (t.asyncCopy === undefined || this.weightLayout !== 'swizzled-rows')) throw new ConvKernelError(`${t.name}: the spec asks for cp.async staging, which this target object lacks`);
    this.schedule = async ? 'async-copy' : kernelSpec.lds_dma ? 'lds-dma-weights' : 'register-prefetch';
    if (kernelSpec.lds_dma && (this.weightLayout !== 'fragment' || !t.ldsDma?.sizes.includes(this.wSlotElems * ELEMENT_BYTES) || this.wPieceElems !== this.wSlotElems || !spec.double_buffer)) {
      throw new ConvKernelError(`${t.name}: the spec asks for direct-to-LDS weight staging of whole ${this.wSlotElems * ELEMENT_BYTES}-byte fragment slots into a second stage, which this target or spec does not admit`);
    }
    // Output-channel tails store channel by channel: such kernels store directly.
    this.stagedEpilogue = stagesOutputInLds(spec);
    if (this.weightLayout === 'swizzled-rows' && !isPow2(spec.ck / 8)) throw new ConvKernelError(`ck ${spec.ck}: swizzled weight rows need ck/8 to be a power of two`);
  }

  build(): ConvKernel {
    const { kernelSpec: spec, t } = this;
    const { module, name, abi, args, b, lds } = openConvKernel(spec, t, {
      workgroupSize: this.threads,
      ...(spec.waves_per_eu !== null ? { wavesPerEu: spec.waves_per_eu } : {}),
      // sm_90: when shared memory admits one block per SM, say so (.minnctapersm 1). Otherwise ptxas
      // 13 squeezes 256-thread kernels to 128 registers (two blocks' worth), even spilling, for an
      // occupancy the LDS never allows.
      ...(t.vendor === 'nvidia' && residency(spec).limits.shared <= 1 ? { minBlocksPerSm: 1 } : {}),
      ids: { workitem: ['x'], workgroup: ['x'] },
    }, 16);
    this.args = args;
    if (spec.stream) this.emitStreamBody(b, lds);
    else this.emitBody(b, lds);
    b.ret();
    return builtKernel(spec, t, { module, name, abi }, {
      threads: this.threads,
      dynamicSharedBytes: this.g.ldsBytes,
      schedule: this.schedule,
      fragmentLoad: this.ldmatrix ? 'ldmatrix' : 'vector',
      weightLayout: this.weightLayout,
      epilogue: this.stagedEpilogue ? 'lds-staged' : 'direct',
    });
  }

  private emitBody(b: Builder, lds: Value): void {
    const { spec, t, g, atom, args } = this;

    // ---- ids and grid decode (channel tile fastest inside a super-tile)
    const tid = t.workitemId(b, 'x');
    const lane = b.and(tid, this.wave - 1, 'lane');
    const waveId = b.lshr(tid, log2(this.wave), 'wave');
    const wm = b.urem(waveId, spec.waves_m, 'wave.m');
    const wn = b.udiv(waveId, spec.waves_m, 'wave.n');
    const { Ho, Wo } = args;
    const grouped = spec.variant === 'grouped';
    const merge = spec.group_merge;
    const channelTiles = () => {
      // Grouped: output-channel tiles of each merged block of `merge` groups (merge*kpg channels), blocks one after another.
      const mergedK = grouped ? b.mul(variantArg(args, 'kpg'), merge, 'merged.k') : args.K;
      const ktPerBlock = b.udiv(b.add(mergedK, spec.tile_k - 1), spec.tile_k, 'k.tiles.per.block');
      return { mergedK, ktPerBlock, kTiles: grouped ? b.mul(b.udiv(args.groups, merge), ktPerBlock, 'k.tiles') : ktPerBlock };
    };
    const place = spec.variant === 'pointwise' ? emitPixelTileOrigin(b, t, spec, channelTiles) : emitTileOrigin(b, t, spec, channelTiles);
    const { kTile, splitIdx, ktPerBlock, mergedK } = place;
    const ch = grouped ? this.groupedChannels(b, kTile, ktPerBlock, mergedK) : this.denseChannels(b, kTile, splitIdx);

    // ---- buffers
    const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
    const wBuf = t.globalBuffer(b, args.w, args.w_bytes);

    // ---- hoisted staging metadata (no compare/select inside the dense channel loop)
    const xSlots = this.xStagingSlots(b, tid, place, ch);
    const wSlots = this.wStagingSlots(b, tid, ch);
    const trips = ch.trips;

    // ---- LDS bases
    const xBase = (stage: Value | number) => (typeof stage === 'number' ? b.i32(stage * this.xStageBytes) : b.mul(stage, this.xStageBytes));
    const wBase = (stage: Value | number) =>
      typeof stage === 'number' ? b.i32(this.stages * this.xStageBytes + stage * this.wStageBytes) : b.add(b.mul(stage, this.wStageBytes), this.stages * this.xStageBytes);
    const ldsAt = (byteOffset: Value) => b.gep(i8, lds, [byteOffset]);

    // ---- per-lane fragment offsets (hoisted)
    const frag = this.fragmentOffsets(b, lane, wm, wn);

    const steps = this.chunkSteps(b, { ch, xSlots, wSlots, xBuf, wBuf, xBase, wBase, ldsAt });
    const mmaStage = (stage: Value | number, acc: Value[]) => this.emitMmas(b, ldsAt, xBase(stage), wBase(stage), frag, acc);
    const accs = this.emitChannelLoop(b, { ...steps, trips, mmaStage });

    // ---- epilogue
    const eo: EpilogueInputs = { lane, wm, wn, place, kBase: ch.kBase, kLimit: ch.kLimit, kOffset: ch.kOffset, Ho, Wo, splitIdx };
    if (this.stagedEpilogue) this.emitStagedEpilogue(b, accs, eo, tid, ldsAt);
    else this.emitEpilogue(b, accs, eo);
  }

  /**
   * The streaming pointwise schedule (`stream`): the workgroup stages its channel tile's weights
   * for every chunk once (resident stages after the X stages, spec.ts `streamLds`), then loops over
   * its pixel tiles one grid stride apart. Each tile runs the channel loop over X only, and its last
   * chunk starts the next tile's first chunk (cp.async into the other X stage, or the register
   * prefetch) before its MMAs and its output store, so those reads overlap the tile's stores. The
   * output tile is staged in its own LDS region, so the store never waits for the next tile's copy.
   */
  private emitStreamBody(b: Builder, lds: Value): void {
    const { spec, t, args } = this;
    const tid = t.workitemId(b, 'x');
    const lane = b.and(tid, this.wave - 1, 'lane');
    const waveId = b.lshr(tid, log2(this.wave), 'wave');
    const wm = b.urem(waveId, spec.waves_m, 'wave.m');
    const wn = b.udiv(waveId, spec.waves_m, 'wave.n');
    const tilePixels = spec.tile_h * spec.tile_w;
    const origin = emitStreamOrigin(b, t, spec, () => ({ kTiles: b.udiv(b.add(args.K, spec.tile_k - 1), spec.tile_k, 'k.tiles') }));
    const ch = this.denseChannels(b, origin.kTile, undefined);
    const xBuf = t.globalBuffer(b, args.x, args.x_bytes);
    const wBuf = t.globalBuffer(b, args.w, args.w_bytes);
    const layout = streamLds(this.kernelSpec);
    const xBase = (stage: Value | number) => (typeof stage === 'number' ? b.i32(stage * this.xStageBytes) : b.mul(stage, this.xStageBytes));
    // Resident weights: chunk c's stage (the one-tile kernel's W stage `c`).
    const wBase = (chunk: Value | number) =>
      typeof chunk === 'number' ? b.i32(this.stages * this.xStageBytes + chunk * this.wStageBytes) : b.add(b.mul(chunk, this.wStageBytes), this.stages * this.xStageBytes);
    const ldsAt = (byteOffset: Value) => b.gep(i8, lds, [byteOffset]);
    const frag = this.fragmentOffsets(b, lane, wm, wn);
    const steps = (xSlots: readonly StagingSlot[], wSlots: readonly StagingSlot[]) => this.chunkSteps(b, { ch, xSlots, wSlots, xBuf, wBuf, xBase, wBase, ldsAt });
    const placeOf = (tile: Value): PixelTileOrigin => ({ kTile: origin.kTile, splitIdx: undefined, flat: { p0: b.mul(tile, tilePixels, 'p0'), pixels: origin.pixels } });
    const xSlotsOf = (tile: Value) => this.xStagingSlots(b, tid, placeOf(tile), ch);
    const tileOf = (j: Value) => b.add(origin.slot, b.mul(j, origin.slots), 'stream.tile');
    const mma = (stage: Value | number, chunk: Value, acc: Value[]) => this.emitMmas(b, ldsAt, xBase(stage), wBase(chunk), frag, acc);
    const epilogue = (tile: Value, accs: Value[]) => {
      const eo: EpilogueInputs = { lane, wm, wn, place: placeOf(tile), kBase: ch.kBase, kLimit: ch.kLimit, kOffset: ch.kOffset, Ho: args.Ho, Wo: args.Wo, splitIdx: undefined };
      if (this.stagedEpilogue) this.emitStagedEpilogue(b, accs, eo, tid, (o) => ldsAt(b.add(o, layout.outOffset)));
      else this.emitEpilogue(b, accs, eo);
    };

    // ---- the tile's weights, every chunk, once (the first tile's barrier orders them before any MMA)
    const weights = steps([], this.wStagingSlots(b, tid, ch));
    b.forLoop({ from: 0, to: ch.trips, name: 'w.chunk' }, (c) => {
      weights.storeChunk(weights.loadChunk(c), c);
    });

    const nAcc = this.g.mTilesPerWave * this.g.nTilesPerWave;
    const accInit: Value[] = Array.from({ length: nAcc }, () => zero(this.atom.cType));
    const last = b.sub(ch.trips, 1, 'chunk.last');
    if (this.schedule === 'async-copy') {
      // Chunk q of the workgroup's sequence (tile j, chunk c: q = j·trips + c) sits in X stage q & 1.
      steps(xSlotsOf(origin.slot), []).copyChunk(b.i32(0), 0);
      b.forLoop({ from: 0, to: origin.tiles, name: 'tile' }, (j) => {
        const tile = tileOf(j);
        const q0 = b.mul(j, ch.trips, 'q0');
        const x = steps(xSlotsOf(tile), []);
        const looped = b.forLoop({ from: 0, to: last, carried: accInit, name: 'chunk' }, (c, acc) => {
          const cur = b.and(b.add(q0, c), 1, 'stage');
          t.asyncCopy!.wait(b, 0);
          t.barrier(b);
          x.copyChunk(b.add(c, 1), b.xor(cur, 1));
          return mma(cur, c, acc);
        });
        const cur = b.and(b.add(q0, last), 1, 'stage.last');
        t.asyncCopy!.wait(b, 0);
        t.barrier(b);
        // The next tile's first chunk (past the last tile: the sentinel, nothing read).
        steps(xSlotsOf(b.add(tile, origin.slots)), []).copyChunk(b.i32(0), b.xor(cur, 1));
        epilogue(tile, mma(cur, last, looped));
      });
      t.asyncCopy!.wait(b, 0);
      return;
    }
    const xVals = (tile: Value, chunk: Value) => steps(xSlotsOf(tile), []).loadChunk(chunk);
    b.forLoop({ from: 0, to: origin.tiles, carried: xVals(origin.slot, b.i32(0)), name: 'tile' }, (j, pre) => {
      const tile = tileOf(j);
      const x = steps(xSlotsOf(tile), []);
      const stage = (vals: readonly Value[]) => {
        t.barrier(b);
        x.storeChunk(vals, 0);
        t.barrier(b);
      };
      const looped = b.forLoop({ from: 0, to: last, carried: [...accInit, ...pre], name: 'chunk' }, (c, carried) => {
        stage(carried.slice(nAcc));
        const next = x.loadChunk(b.add(c, 1));
        return [...mma(0, c, carried.slice(0, nAcc)), ...next];
      });
      stage(looped.slice(nAcc));
      // The next tile's first chunk waits in registers while this tile's last chunk and store run.
      const next = xVals(b.add(tile, origin.slots), b.i32(0));
      epilogue(tile, mma(0, last, looped.slice(0, nAcc)));
      return next;
    });
  }

  /**
   * The staging steps of one chunk: register loads (and their LDS stores) or cp.async copies of
   * every X and W slot, at the chunk's channel offset. Channel tails and grouped pieces off the
   * block diagonal load from the sentinel (zero).
   */
  private chunkSteps(b: Builder, c: StagingInputs): Omit<ChunkSteps, 'trips' | 'mmaStage'> {
    const { spec, t } = this;
    const { ch, xSlots, wSlots, xBuf, wBuf, xBase, wBase, ldsAt } = c;
    const chunkBytes = (chunk: Value) => b.mul(chunk, spec.ck * ELEMENT_BYTES, 'c.off');
    const xVec = vec(8, this.elem);
    const pieceVec = vec(this.wPieceElems, this.elem);
    // Byte offset of a weight piece at `chunk`; pieces off the block diagonal or past the channel tail read zero.
    const pieceOffset = (pc: WeightPiece, chunk: Value, off: Value): Value => {
      const at = b.add(pc.global, off);
      if (!pc.rel || !ch.wLimit) return at;
      const rel = b.add(pc.rel, b.mul(chunk, spec.ck));
      return b.select(b.icmp('ult', rel, ch.wLimit), at, SENTINEL_OFFSET);
    };
    // Byte offsets of a weight slot's pieces at `chunk`. Tap-folded slots keep only their first piece
    // and address the consecutive others from it here, in the loop: one hoisted offset and channel
    // per piece would hold two registers per element of a c_tail-1 slot.
    // (Thunks, so that each piece's offset is emitted right before its load.)
    const pieceOffsets = (s: StagingSlot, chunk: Value, off: Value): (() => Value)[] => {
      if (!this.kernelSpec.fold_s) return s.pieces!.map((pc) => () => pieceOffset(pc, chunk, off));
      const first = s.pieces![0]!;
      const at = b.add(first.global, off);
      const rel = b.add(first.rel!, b.mul(chunk, spec.ck));
      return Array.from({ length: this.wSlotElems / this.wPieceElems }, (_, p) => () => {
        const e = p * this.wPieceElems;
        return b.select(b.icmp('ult', e === 0 ? rel : b.add(rel, e), ch.wLimit!), e === 0 ? at : b.add(at, e * ELEMENT_BYTES), SENTINEL_OFFSET);
      });
    };
    // Byte offset of run p (c_tail channels) of an X slot at `chunk`: the sentinel past the channel tail.
    const xRunOffset = (s: StagingSlot, chunk: Value, at: Value, p: number): Value => {
      if (!s.room) return at;
      const first = b.add(b.mul(chunk, spec.ck), p * spec.c_tail);
      return b.select(b.icmp('slt', first, s.room), p === 0 ? at : b.add(at, p * spec.c_tail * ELEMENT_BYTES), SENTINEL_OFFSET);
    };
    // Tap-folded runs: each run's own tap column and channel (tap-fold.ts); chunk offsets are folded-axis offsets.
    const foldedRun = (s: StagingSlot, chunk: Value, p: number) => emitFoldedRunOffset(b, this.args, this.kernelSpec, s.fold!, chunk, p, ch.xEnd!, this.mutation);
    const xLoad = (s: StagingSlot, chunk: Value, off: Value): Value => {
      if (s.fold) {
        if (spec.c_tail === 8) return t.globalLoad(b, xBuf, foldedRun(s, chunk, 0), xVec, { align: 16 });
        return concat(b, Array.from({ length: 8 / spec.c_tail }, (_, p) => this.loadRun(b, xBuf, foldedRun(s, chunk, p), spec.c_tail)), 8);
      }
      const at = b.add(s.global, off);
      if (!s.room || spec.c_tail === 8) return t.globalLoad(b, xBuf, xRunOffset(s, chunk, at, 0), xVec, { align: 16 });
      const parts = Array.from({ length: 8 / spec.c_tail }, (_, p) => this.loadRun(b, xBuf, xRunOffset(s, chunk, at, p), spec.c_tail));
      return concat(b, parts, 8);
    };
    const loadChunk = (chunk: Value): Value[] => {
      let off = chunkBytes(chunk);
      // sm_90 register prefetch: the loads of the one or two chunks past the last read nothing (the
      // guarded loads skip the sentinel; offsets are unsigned, so sentinel + sentinel stays in u32)
      // instead of the next channels. AMD keeps its loop body free of compares and selects (tested).
      if (t.vendor === 'nvidia') off = b.select(b.icmp('ult', chunk, ch.trips), off, SENTINEL_OFFSET, 'c.off.live');
      return [
        ...xSlots.map((s) => xLoad(s, chunk, off)),
        ...(this.schedule === 'lds-dma-weights' ? [] : wSlots).map((s) => {
          const parts = pieceOffsets(s, chunk, off).map((at) =>
            this.wPieceElems === 1 ? this.loadRun(b, wBuf, at(), 1) : t.globalLoad(b, wBuf, at(), pieceVec, { align: 2 * this.wPieceElems }),
          );
          return concat(b, parts, this.wSlotElems);
        }),
      ];
    };
    const guarded = (s: StagingSlot, f: () => void) => (s.inTile ? b.ifThen(s.inTile, f, 'stage.tail') : f());
    const storeChunk = (vals: readonly Value[], stage: Value | number) => {
      const xb = xBase(stage);
      const wb = wBase(stage);
      xSlots.forEach((s, j) => guarded(s, () => b.store(vals[j]!, ldsAt(b.add(xb, s.lds)), { align: 16 })));
      if (this.schedule === 'lds-dma-weights') return;
      wSlots.forEach((s, j) => guarded(s, () => b.store(vals[xSlots.length + j]!, ldsAt(b.add(wb, s.lds)), { align: 2 * this.wSlotElems })));
    };
    // Direct-to-LDS weights: one load per slot, the wave's 64 slots back to back from its M0 base
    // (the guard of a partial last pass is uniform over a wave: the slots come in whole waves).
    const dmaChunk = (chunk: Value, stage: Value | number) => {
      const dma = t.ldsDma!;
      const off = chunkBytes(chunk);
      const wb = wBase(stage);
      for (const s of wSlots) guarded(s, () => dma.load(b, wBuf, pieceOffsets(s, chunk, off)[0]!(), ldsAt(b.add(wb, s.waveLds!)), this.wSlotElems * ELEMENT_BYTES));
    };
    const copyChunk = (chunk: Value, stage: Value | number) => {
      const cp = t.asyncCopy!;
      const off = chunkBytes(chunk);
      const xb = xBase(stage);
      const wb = wBase(stage);
      for (const s of xSlots) guarded(s, () => cp.copy(b, xBuf, s.fold ? foldedRun(s, chunk, 0) : xRunOffset(s, chunk, b.add(s.global, off), 0), ldsAt(b.add(xb, s.lds))));
      for (const s of wSlots) guarded(s, () => cp.copy(b, wBuf, pieceOffset(s.pieces![0]!, chunk, off), ldsAt(b.add(wb, s.lds))));
      cp.commit(b);
    };
    return { loadChunk, storeChunk, copyChunk, dmaChunk };
  }

  /**
   * A run of `elems` channels (1, 2 or 4) as `<elems x dtype>`, loaded as integers of the same
   * size: the AMD backend cannot select buffer loads of scalar 16-bit floats.
   */
  private loadRun(b: Builder, buf: GlobalBuffer, byteOffset: Value, elems: number): Value {
    const int = elems === 1 ? i16 : elems === 2 ? i32 : vec(elems / 2, i32);
    return b.bitcast(this.t.globalLoad(b, buf, byteOffset, int, { align: elems * ELEMENT_BYTES }), vec(elems, this.elem));
  }

  /**
   * The channel loop over `trips` chunks, by schedule: cp.async into two stages (last chunk
   * peeled), register prefetch into two stages, or register prefetch into one. Returns the
   * accumulators.
   */
  private emitChannelLoop(b: Builder, c: ChunkSteps): Value[] {
    const { spec, t, g, atom } = this;
    const { trips, loadChunk, storeChunk, copyChunk, dmaChunk, mmaStage } = c;
    const iglp = () => {
      if (spec.iglp !== null && t.vendor === 'amd') b.intrinsic('llvm.amdgcn.iglp.opt', voidT, [spec.iglp]);
    };
    const nAcc = g.mTilesPerWave * g.nTilesPerWave;
    const accInit: Value[] = Array.from({ length: nAcc }, () => zero(atom.cType));
    if (this.schedule === 'async-copy') {
      // The last chunk is peeled: no copy past it, which would read the next channels (or pixels)
      // for nothing and make the wait before the epilogue stall on it — a whole load latency on
      // one-trip grids (grouped, split_c on small maps). Peeling keeps the loop body branch-free.
      copyChunk(b.i32(0), 0);
      const last = b.sub(trips, 1, 'chunk.last');
      const looped = b.forLoop({ from: 0, to: last, carried: accInit, name: 'chunk' }, (i, acc) => {
        const cur = b.and(i, 1, 'stage');
        t.asyncCopy!.wait(b, 0);
        t.barrier(b);
        copyChunk(b.add(i, 1), b.xor(cur, 1));
        return mmaStage(cur, acc);
      });
      t.asyncCopy!.wait(b, 0);
      t.barrier(b);
      return mmaStage(b.and(last, 1, 'stage.last'), looped);
    }
    if (spec.double_buffer) {
      // lds-dma-weights: the weights of chunk i+1 fly into the other stage during the MMAs of chunk
      // i; the wave waits for them (vmcnt 0, which its next activations' loads need anyway) before
      // the barrier that publishes the stage.
      const dma = this.schedule === 'lds-dma-weights' ? t.ldsDma! : undefined;
      storeChunk(loadChunk(b.i32(0)), 0);
      if (dma) dmaChunk(b.i32(0), 0);
      const pre = loadChunk(b.i32(1));
      const out = b.forLoop({ from: 0, to: trips, carried: [...accInit, ...pre], name: 'chunk' }, (i, carried) => {
        iglp();
        const cur = b.and(i, 1, 'stage');
        if (!this.mutation?.skipLdsDmaWait) dma?.wait(b);
        t.barrier(b);
        storeChunk(carried.slice(nAcc), b.xor(cur, 1));
        if (dma) dmaChunk(b.add(i, 1), b.xor(cur, 1));
        const next = loadChunk(b.add(i, 2));
        return [...mmaStage(cur, carried.slice(0, nAcc)), ...next];
      });
      // The loads of the chunk past the last are still in flight: they must land before LDS is reused or left.
      dma?.wait(b);
      return out.slice(0, nAcc);
    }
    const pre = loadChunk(b.i32(0));
    const out = b.forLoop({ from: 0, to: trips, carried: [...accInit, ...pre], name: 'chunk' }, (i, carried) => {
      iglp();
      t.barrier(b);
      storeChunk(carried.slice(nAcc), 0);
      t.barrier(b);
      const next = loadChunk(b.add(i, 1));
      return [...mmaStage(0, carried.slice(0, nAcc)), ...next];
    });
    return out.slice(0, nAcc);
  }

  /**
   * LDS column of halo column `c` (compile time). Strided tiles store their columns by phase
   * ({@link ldsHaloColumn}), so the window of a tap is contiguous: output pixels one pixel stride
   * apart instead of `stride`, which keeps the 8 rows of an `ldmatrix` on distinct bank groups (two
   * pixel strides of 16-byte multiples always put rows 0 and 4 on one bank group: a 2-way conflict).
   */
  private ldsColumn(c: number): number {
    return ldsHaloColumn(c, this.g.ldsInW, this.spec.stride_w);
  }

  /** Elements between the LDS pixels of horizontally adjacent output pixels (one pixel: columns are stored by phase). */
  private get pixelStride(): number {
    return this.g.cStride;
  }

  /**
   * X staging: one 16-byte vector of 8 channels per slot, pixel-major with the padded pixel stride.
   * tile_n > 1: the tile_n halo tiles stacked along rows, LDS row `row` holding input row
   * ih0 + row % ldsInH of image n + row / ldsInH (zero past the batch).
   */
  private xStagingSlots(b: Builder, tid: Value, place: TilePlace, ch: ChannelPlan): StagingSlot[] {
    const { g, spec } = this;
    const slots: StagingSlot[] = [];
    const uneven = g.xVectors % this.threads !== 0;
    const cStart = ch.xChannel0;
    for (let j = 0; j < g.xPasses; j++) {
      const v = b.add(tid, j * this.threads, `xv${j}`);
      const inTileOf = () => (uneven ? b.icmp('ult', v, g.xVectors) : undefined);
      if (this.kernelSpec.fold_s && !place.flat) {
        // The folded tile has no halo along W (stride 1): LDS pixel = vector's pixel.
        const f = emitFoldedSource(b, this.args, this.kernelSpec, g, { v, j, image: place.image, ih0: place.ih0, ow0: place.ow0, inTile: inTileOf });
        const lds = b.mul(b.add(b.mul(f.pos, g.cStride), b.mul(f.cv, 8)), ELEMENT_BYTES, `x.lds${j}`);
        slots.push({ global: f.fold.base, lds, inTile: f.inTile, fold: f.fold });
        continue;
      }
      const { global, row, col, cv, pos, inTile } = place.flat
        ? emitPixelSource(b, this.args, this.kernelSpec, g, { v, j, flat: place.flat, cStart, inTile: inTileOf })
        : emitHaloSource(b, this.args, spec, g, { v, j, image: place.image, ih0: place.ih0, iw0: place.iw0, cStart, inTile: inTileOf });
      // Strided: halo columns by phase (see ldsColumn); rows of rowPixels LDS pixels.
      let ldsPos = pos;
      if (spec.stride_w > 1) {
        const rowStart = g.rowPixels === g.ldsInW ? b.sub(pos, col) : b.mul(row, g.rowPixels);
        ldsPos = b.add(rowStart, emitHaloPhaseColumn(b, col, g.ldsInW, spec.stride_w));
      }
      // threads is a multiple of the 8-channel vectors per pixel, so pass j is pass 0 moved by threads/XCV pixels.
      const lds =
        j > 0 && this.threads % g.xChannelVectors === 0 && spec.stride_w === 1
          ? b.add(slots[0]!.lds, j * (this.threads / g.xChannelVectors) * g.cStride * ELEMENT_BYTES)
          : b.mul(b.add(b.mul(ldsPos, g.cStride), b.mul(cv, 8)), ELEMENT_BYTES, `x.lds${j}`);
      const room = ch.xEnd ? b.sub(ch.xEnd, b.add(b.mul(cv, 8), cStart), `x.room${j}`) : undefined;
      slots.push({ global, lds, inTile, ...(room ? { room } : {}) });
    }
    return slots;
  }

  /** Dense and split_c: tile k of all K channels; split s reduces its slice of whole channel runs (split-slices.ts). */
  private denseChannels(b: Builder, kTile: Value, splitIdx: Value | undefined): ChannelPlan {
    // Tap-folded: the reduced axis (and a weight row, after its (k, r)) is S·C long.
    const { c0, cEnd, trips, reduced } = emitChannelSlice(b, this.args, this.kernelSpec, splitIdx, this.mutation?.dropChannelTail);
    const kBase = b.mul(kTile, this.spec.tile_k, 'k.base');
    return { kBase, kLimit: this.args.K, kOffset: undefined, xChannel0: c0, wChannel0: c0, wRowElems: reduced, xEnd: cEnd, wLimit: cEnd, trips, grouped: undefined };
  }

  /**
   * Grouped: tile `kt` of merged block `mb` (gm adjacent groups: gm*cpg input, gm*kpg output
   * channels). Only the channel chunks that overlap the input channels of the tile's own groups are
   * visited; off-diagonal weights inside them are zeroed at staging.
   */
  private groupedChannels(b: Builder, kTile: Value, ktPerBlock: Value, mergedK: Value): ChannelPlan {
    const { spec } = this;
    const cpg = variantArg(this.args, 'cpg');
    const kpg = variantArg(this.args, 'kpg');
    const mergedC = b.mul(cpg, spec.group_merge, 'merged.c');
    const block = b.udiv(kTile, ktPerBlock, 'merged.block');
    const kBase = b.mul(b.urem(kTile, ktPerBlock), spec.tile_k, 'k.base');
    const kEnd = b.umin(b.add(kBase, spec.tile_k), mergedK);
    const firstGroup = b.udiv(kBase, kpg, 'group.first');
    const lastGroup = b.udiv(b.sub(kEnd, 1), kpg, 'group.last');
    const chunkLo = b.udiv(b.mul(firstGroup, cpg), spec.ck, 'chunk.lo');
    const chunkHi = b.udiv(b.add(b.mul(b.add(lastGroup, 1), cpg), spec.ck - 1), spec.ck, 'chunk.hi');
    const wChannel0 = b.mul(chunkLo, spec.ck, 'c.lo');
    const kOffset = b.mul(block, mergedK, 'k.block');
    const xChannel0 = b.add(b.mul(block, mergedC), wChannel0, 'x.c0');
    // Channel tails: x channels past the merged block read zero (the weights there are zero too, but x may hold non-finite values).
    const xEnd = spec.c_tail !== 0 ? b.mul(b.add(block, 1), mergedC, 'x.end') : undefined;
    const trips = b.umax(b.sub(chunkHi, chunkLo), 1, 'chunks');
    return { kBase, kLimit: mergedK, kOffset, xChannel0, wChannel0, wRowElems: cpg, xEnd, wLimit: cpg, trips, grouped: { cpg, kpg } };
  }

  /** W staging: MFMA fragment slots (AMD) or 16-byte chunks of swizzled ck-channel rows (sm_90). */
  private wStagingSlots(b: Builder, tid: Value, ch: ChannelPlan): StagingSlot[] {
    const { spec, g, atom } = this;
    const RS = spec.R * spec.S;
    const slots: StagingSlot[] = [];
    const vectors = this.weightLayout === 'fragment' ? g.wSlots : (spec.tile_k * RS * spec.ck) / 8;
    const passes = Math.ceil(vectors / this.threads);
    const uneven = vectors % this.threads !== 0;
    for (let j = 0; j < passes; j++) {
      const v = b.add(tid, j * this.threads, `wv${j}`);
      let kOut: Value;
      let tap: Value;
      let c: Value;
      let ldsIdx: Value;
      if (this.weightLayout === 'fragment') {
        const fl = b.urem(v, this.wave);
        const rest = b.udiv(v, this.wave);
        const ka = b.urem(rest, g.kAtoms);
        const rest2 = b.udiv(rest, g.kAtoms);
        const mt = b.urem(rest2, g.mTiles);
        tap = b.udiv(rest2, g.mTiles);
        const first = atom.aAt(b, fl, 0);
        kOut = b.add(ch.kBase, b.add(b.mul(mt, atom.m), first.row));
        c = b.add(b.mul(ka, atom.k), first.col);
        ldsIdx = b.mul(v, this.wSlotElems);
      } else {
        const chunksPerRow = spec.ck / 8;
        const c8 = b.urem(v, chunksPerRow);
        const row = b.udiv(v, chunksPerRow);
        const krow = b.urem(row, spec.tile_k);
        tap = b.udiv(row, spec.tile_k);
        kOut = b.add(ch.kBase, krow);
        c = b.mul(c8, 8);
        ldsIdx = b.add(b.mul(row, spec.ck), b.mul(b.xor(c8, swizzleOf(b, krow, chunksPerRow)), 8));
      }
      let valid = b.icmp('ult', kOut, ch.kLimit);
      const inTile = uneven ? b.icmp('ult', v, vectors) : undefined;
      if (inTile) valid = b.and(valid, inTile);
      const kGlobal = ch.kOffset ? b.add(ch.kOffset, kOut) : kOut;
      const row = b.mul(b.add(b.mul(kGlobal, RS), tap), ch.wRowElems);
      const pieces: WeightPiece[] = [];
      // Tap-folded: the first piece only (see chunkSteps' pieceOffsets).
      for (let p = 0; p < (this.kernelSpec.fold_s ? 1 : this.wSlotElems / this.wPieceElems); p++) {
        const cl = b.add(b.add(ch.wChannel0, c), p * this.wPieceElems);
        if (ch.grouped || ch.wLimit) {
          // Channel within the row's own group at chunk 0 (negative or >= cpg: off the diagonal); dense tails: within the row.
          const rel = ch.grouped ? b.sub(cl, b.mul(b.udiv(kOut, ch.grouped.kpg), ch.grouped.cpg)) : cl;
          const global = b.mul(b.add(row, rel), ELEMENT_BYTES, `w.goff${j}.${p}`);
          pieces.push({ global, rel: b.select(valid, rel, OFF_DIAGONAL, `w.rel${j}.${p}`), elems: this.wPieceElems });
        } else {
          const global = b.select(valid, b.mul(b.add(row, cl), ELEMENT_BYTES), SENTINEL_OFFSET, `w.goff${j}`);
          pieces.push({ global, rel: undefined, elems: this.wPieceElems });
        }
      }
      // Fragment slots are linear in the slot index; swizzled rows too when a pass spans whole 8-row swizzle periods.
      const rowsPerPass = this.threads / (spec.ck / 8);
      const linear = this.weightLayout === 'fragment' || (Number.isInteger(rowsPerPass) && rowsPerPass % 8 === 0);
      const lds = j > 0 && linear ? b.add(slots[0]!.lds, j * this.threads * this.wSlotElems * ELEMENT_BYTES) : b.mul(ldsIdx, ELEMENT_BYTES, `w.lds${j}`);
      const waveLds = this.schedule === 'lds-dma-weights' ? this.waveSlotBase(b, tid, j) : undefined;
      slots.push({ global: pieces[0]!.global, lds, inTile, pieces, ...(waveLds ? { waveLds } : {}) });
    }
    return slots;
  }

  /**
   * Byte offset in a weight stage of the fragment slot of lane 0 of `tid`'s wave in pass `j`: slot
   * `j*threads + wave*64`. The wave index goes through readfirstlane once, so the M0 bases are
   * scalar arithmetic (llc cannot tell that tid / 64 is uniform and would read each base back).
   */
  private waveSlotBase(b: Builder, tid: Value, j: number): Value {
    const slotBytes = this.wSlotElems * ELEMENT_BYTES;
    const waveIdx = b.intrinsic('llvm.amdgcn.readfirstlane.i32', i32, [b.lshr(tid, log2(this.wave))], { name: 'wave.uniform' });
    const wave = b.mul(waveIdx, this.wave * slotBytes, 'w.wave.slots');
    return j === 0 ? wave : b.add(wave, j * this.threads * slotBytes, `w.wave.slots${j}`);
  }

  /** Per-lane (and per-wave) byte offsets of the fragments inside one LDS stage, computed once. */
  private fragmentOffsets(b: Builder, lane: Value, wm: Value, wn: Value): FragmentOffsets {
    const { spec, g, atom } = this;
    const E = ELEMENT_BYTES;
    const pix = this.pixelStride; // elements between horizontally adjacent output pixels
    // Rows of the wave's output band start ROWS_W*stride input rows apart.
    const rowBytes = g.rowPixels * g.cStride * E;
    let xWave: Value;
    if (spec.tile_n === 1) xWave = b.mul(wn, g.rowsPerWave * spec.stride_h * rowBytes, 'x.wave');
    else if (g.waveImages === 1) {
      // A band inside one image: its image's halo tile, then the band's first input row in it.
      const perImage = spec.tile_h / g.rowsPerWave;
      const img = b.udiv(wn, perImage, 'wave.image');
      xWave = b.add(b.mul(img, g.ldsInH * rowBytes), b.mul(b.urem(wn, perImage), g.rowsPerWave * spec.stride_h * rowBytes), 'x.wave');
    } else xWave = b.mul(wn, g.waveImages * g.ldsInH * rowBytes, 'x.wave');
    const mBase = b.mul(wm, g.mTilesPerWave, 'm.tile0');
    if (!this.ldmatrix) {
      const bCoord = activationCoord(atom);
      const runs = vectorRuns(bCoord, atom.lanes, atom.bType.count, 8);
      const xRuns = runs.map((r) => {
        const c = atom.bAt(b, lane, r.start);
        // pixel col -> strided window position; channel row -> contiguous.
        return { run: r, lane: b.add(xWave, b.mul(b.add(b.mul(c.col, pix), c.row), E)) };
      });
      const wLane = b.add(b.mul(mBase, g.kAtoms * this.wave * this.wSlotElems * E), b.mul(lane, this.wSlotElems * E), 'w.lane');
      return { kind: 'vector', xRuns, wLane };
    }
    // ldmatrix: lane l addresses row (l & 7) of matrix (l >> 3).
    const mat = b.lshr(lane, 3, 'mat');
    const r8 = b.and(lane, 7, 'mat.row');
    const pick = (vals: readonly number[]) => {
      let out: Value = b.i32(vals[0]!);
      for (let j = 1; j < vals.length; j++) out = b.select(b.icmp('eq', mat, j), vals[j]!, out);
      return out;
    };
    const bOrigins = matrixOrigins(activationCoord(atom), atom.lanes, atom.bType.count)!;
    const aOrigins = matrixOrigins(weightCoord(atom), atom.lanes, atom.aType.count)!;
    // B: pairs of column blocks per ldmatrix.x4 (matrices: block cb regs..., then block cb+1 regs...).
    const perFrag = bOrigins.length;
    const bMats: StorageCoord[] = [...bOrigins, ...bOrigins.map((o) => ({ strided: o.strided + atom.n, contig: o.contig }))];
    const xOffsetOf = (o: StorageCoord) => o.strided * pix + o.contig;
    const x4 = b.add(xWave, b.mul(b.add(b.mul(r8, pix), pick(bMats.map(xOffsetOf))), E), 'x.ldm4');
    const x2 = b.add(xWave, b.mul(b.add(b.mul(r8, pix), pick(bOrigins.map(xOffsetOf))), E), 'x.ldm2');
    // A: one ldmatrix.x4 per fragment; rows are output channels, 16-byte chunks XOR-swizzled by row.
    const chunksPerRow = spec.ck / 8;
    const rowOf = b.add(pick(aOrigins.map((o) => o.strided)), r8, 'a.row');
    const chunkOf = pick(aOrigins.map((o) => o.contig / 8));
    const sw = b.xor(chunkOf, swizzleOf(b, rowOf, chunksPerRow));
    const wWave = b.mul(mBase, atom.m * spec.ck * E, 'w.wave');
    const wLanes: Value[] = [];
    for (let ka = 0; ka < g.kAtoms; ka++) {
      const chunk = b.xor(sw, (ka * atom.k) / 8);
      wLanes.push(b.add(wWave, b.mul(b.add(b.mul(rowOf, spec.ck), b.mul(chunk, 8)), E), `w.ldm.ka${ka}`));
    }
    return { kind: 'ldmatrix', x4, x2, perFrag, wLanes };
  }

  /** All MMAs of one staged chunk (filter column outermost, so the input rows are shared by the R taps). */
  private emitMmas(b: Builder, ldsAt: (o: Value) => Value, xb: Value, wb: Value, f: FragmentOffsets, acc: Value[]): Value[] {
    const { spec, g, atom } = this;
    const E = ELEMENT_BYTES;
    const out = [...acc];
    const pix = this.pixelStride;
    // Input rows of one band (one image's rows of the wave), read once per band and shared by the R taps.
    const inRows = haloExtent(g.bandRows, spec.stride_h, spec.R, spec.dilation_h);
    const bType = atom.bType;
    const aType = atom.aType;
    for (let ka = 0; ka < g.kAtoms; ka++) {
      for (let s = 0; s < spec.S; s++) {
        // Activation fragments by input row and column block, shared by the R taps of this column.
        const bf: Value[][] = [];
        for (let i = 0; i < g.waveImages * inRows; i++) {
          // Band i / inRows sits in its own image's halo tile, ldsInH rows after the previous one.
          const ir = Math.floor(i / inRows) * g.ldsInH + (i % inRows);
          const row: Value[] = [];
          const base = (ir * g.rowPixels + this.ldsColumn(s * spec.dilation_w)) * g.cStride + ka * atom.k; // elements, compile time
          if (f.kind === 'vector') {
            for (let cb = 0; cb < g.colBlocks; cb++) {
              const off = (base + cb * atom.n * pix) * E;
              const parts = f.xRuns.map(({ run, lane }) => b.load(vec(run.length, this.elem), ldsAt(b.add(b.add(xb, lane), off)), { align: run.length * E }));
              row.push(concat(b, parts, bType.count));
            }
          } else {
            for (let cb = 0; cb < g.colBlocks; cb += 2) {
              const pair = cb + 1 < g.colBlocks;
              const off = (base + cb * atom.n * pix) * E;
              const regs = this.t.matrixLoad!(b, ldsAt(b.add(b.add(xb, pair ? f.x4 : f.x2), off)), pair ? 4 : 2);
              for (let h = 0; h < (pair ? 2 : 1); h++) {
                const mine = regs.slice(h * f.perFrag, (h + 1) * f.perFrag);
                row.push(b.bitcast(b.vector(mine), bType));
              }
            }
          }
          bf.push(row);
        }
        for (let r = 0; r < spec.R; r++) {
          const tap = r * spec.S + s;
          const af: Value[] = [];
          for (let mt = 0; mt < g.mTilesPerWave; mt++) {
            if (f.kind === 'vector') {
              const off = (((tap * g.mTiles + mt) * g.kAtoms + ka) * this.wave * this.wSlotElems) * E;
              // wLane includes the wave's first m tile: (m.tile0 * kAtoms * wave * frag) elements.
              af.push(b.load(aType, ldsAt(b.add(b.add(wb, f.wLane), off)), { align: this.wSlotElems * E }));
            } else {
              const off = ((tap * spec.tile_k + mt * atom.m) * spec.ck) * E;
              const regs = this.t.matrixLoad!(b, ldsAt(b.add(b.add(wb, f.wLanes[ka]!), off)), 4);
              af.push(b.bitcast(b.vector(regs), aType));
            }
          }
          for (let row = 0; row < g.rowsPerWave; row++) {
            for (let cb = 0; cb < g.colBlocks; cb++) {
              const bv = bf[Math.floor(row / g.bandRows) * inRows + (row % g.bandRows) * spec.stride_h + r * spec.dilation_h]![cb]!;
              for (let mt = 0; mt < g.mTilesPerWave; mt++) {
                const idx = (mt * g.rowsPerWave + row) * g.colBlocks + cb;
                out[idx] = atom.emit(b, af[mt]!, bv, out[idx]!);
              }
            }
          }
        }
      }
    }
    return out;
  }

  /** The output buffer: y, or split_c's fp32 workspace. */
  private outputBuffer(b: Builder): GlobalBuffer {
    const { t, args } = this;
    return this.spec.variant === 'split_c' ? t.globalBuffer(b, variantArg(args, 'ws'), variantArg(args, 'ws_bytes')) : t.globalBuffer(b, args.y, args.y_bytes);
  }

  /**
   * Output through LDS (kernel/staged-store.ts): every lane writes its accumulators' runs into the
   * staged tile (converted, or fp32 under a fused epilogue), band by band, and the workgroup stores
   * the tile as 16-byte vectors. A band holds rows [p * bandRows, (p + 1) * bandRows) of every wave's rows.
   */
  private emitStagedEpilogue(b: Builder, accs: Value[], o: EpilogueInputs, tid: Value, ldsAt: (o: Value) => Value): void {
    const { spec, g, atom, t, args } = this;
    const tile = stagedTile(spec);
    const S = tile.elementBytes;
    const runs = vectorRuns(outputCoord(atom), atom.lanes, atom.cType.count, 16 / S);
    const laneRuns = runs.map((r) => {
      const c = atom.cAt(b, o.lane, r.start);
      // Band pixel (row-major over the band's rows x tile_w) and tile channel of the run's first element.
      const pix = b.add(b.mul(b.mul(o.wn, tile.bandRows), spec.tile_w), c.col);
      const kt = b.add(b.mul(o.wm, g.mTilesPerWave * atom.m), c.row);
      return { run: r, base: b.mul(b.add(b.mul(pix, tile.stride), kt), S, 'out.lds') };
    });
    const writeBand = (pass: number) => {
      for (let mt = 0; mt < g.mTilesPerWave; mt++)
        for (let row = pass * tile.bandRows; row < (pass + 1) * tile.bandRows; row++)
          for (let cb = 0; cb < g.colBlocks; cb++) {
            const acc = accs[(mt * g.rowsPerWave + row) * g.colBlocks + cb]!;
            const off = (((row - pass * tile.bandRows) * spec.tile_w + cb * atom.n) * tile.stride + mt * atom.m) * S;
            for (const { run, base } of laneRuns) {
              const lanes = Array.from({ length: run.length }, (_, e) => run.start + e);
              const val = tile.convert(b, lanes.length === 1 ? b.extractElement(acc, lanes[0]!) : b.shuffleVector(acc, acc, lanes), lanes.length);
              b.store(val, ldsAt(b.add(base, off)), { align: S * run.length });
            }
          }
    };
    emitStagedTileStore(b, { spec, t, args, tid, threads: this.threads, ldsAt, place: o.place, kBase: o.kBase, kLimit: o.kLimit, kOffset: o.kOffset, Ho: o.Ho, Wo: o.Wo, splitIdx: o.splitIdx }, writeBand);
  }

  /**
   * Output-channel tails: run `run` of accumulator `acc` (channels k, k+1, ... of one pixel at
   * element offset `elem`) as one store per channel, each checked against the channel count; a
   * fused epilogue reads each channel's bias and residual alone, as the store writes it.
   */
  private channelStores(b: Builder, outBuf: GlobalBuffer, acc: Value, run: Run, o: { k: Value; ok: Value; kLimit: Value; elem: Value; kOffset: Value | undefined; fused: boolean }): (() => EpilogueStore)[] {
    const split = this.spec.variant === 'split_c';
    const eBytes = split ? WORKSPACE_ELEMENT_BYTES : ELEMENT_BYTES;
    return Array.from({ length: run.length }, (_, e) => () => {
      const ke = e === 0 ? o.k : b.add(o.k, e);
      const valid = b.and(o.ok, b.icmp('ult', ke, o.kLimit));
      const element = e === 0 ? o.elem : b.add(o.elem, e);
      const off = b.select(valid, b.mul(element, eBytes), SENTINEL_OFFSET);
      const val = b.extractElement(acc, run.start + e);
      const store = (bb: Builder, v: Value) => this.t.globalStore(bb, outBuf, off, split ? v : bb.fptrunc(v, this.spec.dtype === 'bf16' ? bfloat : half), { align: eBytes });
      // The global channel only where an epilogue reads its bias (bare kernels emit no dead add).
      const channel = o.fused && o.kOffset ? b.add(o.kOffset, ke) : ke;
      return { acc: val, at: { channel, element }, store };
    });
  }

  /** Converts and stores the accumulators (NHWK, bounds-checked through the sentinel); split_c writes fp32 partials to ws. */
  private emitEpilogue(b: Builder, accs: Value[], o: EpilogueInputs): void {
    const { spec, g, atom, t, args } = this;
    const split = spec.variant === 'split_c';
    const coord = outputCoord(atom);
    const runs = vectorRuns(coord, atom.lanes, atom.cType.count, split ? 4 : 8);
    const outBuf = this.outputBuffer(b);
    const eBytes = split ? WORKSPACE_ELEMENT_BYTES : ELEMENT_BYTES;
    const sliceBase = emitOutputSliceBase(b, args, o.splitIdx) ?? b.i32(0);
    const window = o.place.flat ? undefined : o.place;
    const oneImage = window !== undefined && spec.tile_n === 1;
    const imageBase = window && oneImage ? b.add(sliceBase, b.mul(window.image, args.y_stride_n), 'y.image') : undefined;
    const kWave = b.add(o.kBase, b.mul(o.wm, g.mTilesPerWave * atom.m), 'k.wave');
    const imageK = imageBase && o.kOffset ? b.add(imageBase, o.kOffset, 'y.image.k') : imageBase;
    const hWave = window && oneImage ? b.add(window.oh0, b.mul(o.wn, g.rowsPerWave), 'oh.wave') : undefined;
    const laneRuns = runs.map((r) => ({ run: r, c: atom.cAt(b, o.lane, r.start) }));
    const outElem = spec.dtype === 'bf16' ? bfloat : half;
    const epilogue = openStoreEpilogue(t, b, spec);
    // tile_n > 1: the wave's row `row` is virtual row v = wn*rowsPerWave + row, row v % tile_h of image n + v / tile_h.
    const rowAt = (window: TileOrigin, row: number): { oh: Value; hOk: Value; rowImageK: Value } => {
      if (hWave && imageK) {
        const oh = b.add(hWave, row);
        return { oh, hOk: b.icmp('ult', oh, o.Ho), rowImageK: imageK };
      }
      const v = b.add(b.mul(o.wn, g.rowsPerWave), row, 'out.vrow');
      const image = b.add(window.image, b.udiv(v, spec.tile_h), 'out.image');
      const oh = b.add(window.oh0, b.urem(v, spec.tile_h));
      const hOk = b.and(b.icmp('ult', oh, o.Ho), b.icmp('ult', image, args.N));
      const base = b.add(sliceBase, b.mul(image, args.y_stride_n), 'y.image');
      return { oh, hOk, rowImageK: o.kOffset ? b.add(base, o.kOffset, 'y.image.k') : base };
    };
    /**
     * Where channel k of the run at column `col` of the wave's row `row` goes: whether its pixel is
     * in the output (`pixelOk`), and with k too (`valid`), and its element of y. Emitted lazily, in
     * the order the stores ask for them.
     */
    type RunTarget = { pixelOk: () => Value; valid: () => Value; elem: () => Value };
    const windowTarget = (window: TileOrigin, r: ReturnType<typeof rowAt>, cb: number, col: Value, k: Value): RunTarget => {
      const ow = b.add(b.add(window.ow0, cb * atom.n), col);
      const elem = () => b.add(b.add(r.rowImageK, b.add(b.mul(r.oh, args.y_stride_h), b.mul(ow, args.y_stride_w))), k);
      return {
        pixelOk: () => b.and(r.hOk, b.icmp('ult', ow, o.Wo)),
        valid: () => b.and(r.hOk, b.and(b.icmp('ult', ow, o.Wo), b.icmp('ult', k, o.kLimit))),
        elem,
      };
    };
    // Pointwise: the wave's row `row` starts (wn*rowsPerWave + row)*tile_w flat pixels into the tile.
    const flatTarget = (rowOffset: Value, cb: number, col: Value, k: Value): RunTarget => {
      const out = emitPixelOutput(b, args, o.place.flat!, b.add(b.add(rowOffset, cb * atom.n), col));
      return { pixelOk: () => out.ok, valid: () => b.and(out.ok, b.icmp('ult', k, o.kLimit)), elem: () => b.add(out.elem, k) };
    };
    /** With a bias: each lane run's bias, loaded once per m-tile (a run's channels are the same at every pixel). */
    const channelOf = (mt: number, c: { row: Value }) => {
      const k = b.add(b.add(kWave, mt * atom.m), c.row);
      return o.kOffset ? b.add(o.kOffset, k) : k;
    };
    const fused: (() => EpilogueStore)[] = [];
    for (let mt = 0; mt < g.mTilesPerWave; mt++) {
      // Output-channel tails read each channel's bias alone: a run's vector read would end past K.
      const biases = epilogue && spec.epilogue?.bias !== 'none' && !spec.k_tail ? laneRuns.map(({ run, c }) => epilogue.loadBias(b, channelOf(mt, c), run.length)) : undefined;
      for (let row = 0; row < g.rowsPerWave; row++) {
        const windowRow = window ? rowAt(window, row) : undefined;
        const flatRow = window ? undefined : b.mul(b.add(b.mul(o.wn, g.rowsPerWave), row), spec.tile_w, 'out.row');
        for (let cb = 0; cb < g.colBlocks; cb++) {
          const acc = accs[(mt * g.rowsPerWave + row) * g.colBlocks + cb]!;
          for (const [r, { run, c }] of laneRuns.entries()) {
            const k = b.add(b.add(kWave, mt * atom.m), c.row);
            const at = window && windowRow ? windowTarget(window, windowRow, cb, c.col, k) : flatTarget(flatRow!, cb, c.col, k);
            if (spec.k_tail) {
              const stores = this.channelStores(b, outBuf, acc, run, { k, ok: at.pixelOk(), kLimit: o.kLimit, elem: at.elem(), kOffset: o.kOffset, fused: epilogue !== undefined });
              if (epilogue) fused.push(...stores);
              else for (const make of stores) {
                const s = make();
                s.store(b, s.acc);
              }
              continue;
            }
            const make = () => {
              const valid = at.valid();
              const elem = at.elem();
              const off = b.select(valid, b.mul(elem, eBytes), SENTINEL_OFFSET);
              const lanes = Array.from({ length: run.length }, (_, e) => run.start + e);
              const val = lanes.length === 1 ? b.extractElement(acc, lanes[0]!) : b.shuffleVector(acc, acc, lanes);
              const store = (bb: Builder, v: Value) => t.globalStore(bb, outBuf, off, split ? v : bb.fptrunc(v, lanes.length === 1 ? outElem : vec(lanes.length, outElem)), { align: eBytes * run.length });
              return { acc: val, elem, store };
            };
            // The block's channel k is global channel kOffset + k (grouped: the group block's first channel).
            if (epilogue) fused.push(() => {
              const s = make();
              return { acc: s.acc, store: s.store, at: { channel: o.kOffset ? b.add(o.kOffset, k) : k, element: s.elem, ...(biases ? { bias: biases[r] } : {}) } };
            });
            else {
              const s = make();
              s.store(b, s.acc);
            }
          }
        }
      }
    }
    epilogue?.storeAll(b, fused);
  }
}

/** What {@link MmaConvBuilder.chunkSteps} stages from and to. */
interface StagingInputs {
  readonly ch: ChannelPlan;
  readonly xSlots: readonly StagingSlot[];
  readonly wSlots: readonly StagingSlot[];
  readonly xBuf: GlobalBuffer;
  readonly wBuf: GlobalBuffer;
  readonly xBase: (stage: Value | number) => Value;
  readonly wBase: (stage: Value | number) => Value;
  readonly ldsAt: (byteOffset: Value) => Value;
}

/** The staging and MMA steps of one chunk, as the channel loop composes them. */
interface ChunkSteps {
  readonly trips: Value;
  readonly loadChunk: (chunk: Value) => Value[];
  readonly storeChunk: (vals: readonly Value[], stage: Value | number) => void;
  readonly copyChunk: (chunk: Value, stage: Value | number) => void;
  /** Direct-to-LDS weight loads of a chunk into a stage (schedule `lds-dma-weights`). */
  readonly dmaChunk: (chunk: Value, stage: Value | number) => void;
  readonly mmaStage: (stage: Value | number, acc: Value[]) => Value[];
}

/** Where a tile sits: a window of one image (or tile_n images) or, pointwise, a run of flat pixels. */
type TilePlace = TileOrigin | PixelTileOrigin;

interface EpilogueInputs {
  /** Lane within the wave, the wave's indices along tile_k (m) and tile_h (n). */
  lane: Value;
  wm: Value;
  wn: Value;
  place: TilePlace;
  /** First output channel of the tile within its block, the block's channel count, and the block's first global channel. */
  kBase: Value;
  kLimit: Value;
  kOffset: Value | undefined;
  Ho: Value;
  Wo: Value;
  splitIdx: Value | undefined;
}

type FragmentOffsets =
  | { kind: 'vector'; xRuns: { run: Run; lane: Value }[]; wLane: Value }
  | { kind: 'ldmatrix'; x4: Value; x2: Value; perFrag: number; wLanes: Value[] };

/** XOR swizzle of a weight row's 16-byte chunk index: `ldmatrix` reads of 8 consecutive rows hit 8 distinct 16-byte bank groups. */
export function weightSwizzle(row: number, chunksPerRow: number): number {
  const rowsPerLine = Math.max(1, 8 / chunksPerRow);
  return Math.floor(row / rowsPerLine) % chunksPerRow;
}

function swizzleOf(b: Builder, row: Value, chunksPerRow: number): Value {
  const rowsPerLine = Math.max(1, 8 / chunksPerRow);
  return b.and(b.lshr(row, log2(rowsPerLine)), chunksPerRow - 1);
}

/** Concatenates vector parts into one `<count x T>` vector. */
function concat(b: Builder, parts: Value[], count: number): Value {
  if (parts.length === 1) return parts[0]!;
  const elems = parts.flatMap((p) => b.elements(p));
  if (elems.length !== count) throw new ConvKernelError(`fragment parts hold ${elems.length} elements, expected ${count}`);
  return b.vector(elems);
}
