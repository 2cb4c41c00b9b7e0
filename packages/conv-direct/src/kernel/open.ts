/**
 * What both conv builders share (the mma.sync / MFMA builder in mma.ts and the warpgroup-MMA
 * builder in wgmma.ts): the built-kernel record, the kernel's opening (module, ABI parameters,
 * typed argument accessors, the sm_90 grid-dependency prologue, the LDS window), the channel
 * slice, the halo source addressing of the staged input tile and the output slice base.
 */
import { i8, kernargParams, openEpilogue, type Builder, type KernelOptions, type Module, type StoreEpilogue, type Target, type Value } from '@rocke/ir';
import { kernargTable, type KernargEntry, type KernargName } from '../abi.js';
import { ELEMENT_BYTES } from '../problem.js';
import { kernelName, type Spec, type SpecGeometry } from '../spec.js';
import { MAX_TENSOR_BYTES } from '../targets.js';
import { splitUnit } from '../split-slices.js';

/** How chunks move from global memory to LDS. */
export type StagingSchedule =
  /** Loads of chunk i+1 are carried in registers across the MMAs of chunk i, then written to LDS. */
  | 'register-prefetch'
  /** sm_90: cp.async of chunk i+1 into the other LDS stage while chunk i is multiplied. */
  | 'async-copy'
  /** AMD `lds_dma`: activations by register prefetch, weights by direct-to-LDS loads into the other stage. */
  | 'lds-dma-weights'
  /** Depthwise: the tile's one stage (the whole reduction) is loaded, stored to LDS, then used. */
  | 'single-stage';

/** How operand fragments come out of LDS. */
export type FragmentLoad =
  /** One vector load per lane per contiguous run (AMD ds_read_b64/b128). */
  | 'vector'
  /** ldmatrix.x4/x2 with per-lane row addresses (sm_90). */
  | 'ldmatrix'
  /** No register fragments: wgmma reads both operands from shared memory through descriptors (sm_90a). */
  | 'descriptor';

/** A built kernel and everything a host needs to launch it (with `plan()` for the shapes). */
export interface ConvKernel {
  readonly spec: Spec;
  readonly target: Target;
  readonly module: Module;
  /** Kernel symbol (`kernelName(spec)`). */
  readonly name: string;
  /** Threads per workgroup (1-D block). */
  readonly threads: number;
  /** Dynamic LDS / shared-memory bytes per workgroup; the kernel declares no static LDS. */
  readonly dynamicSharedBytes: number;
  /** Kernel parameters in ABI-table order (the host packs `kernargValues()` in the same order). */
  readonly abi: readonly KernargEntry[];
  readonly schedule: StagingSchedule;
  readonly fragmentLoad: FragmentLoad;
  /** Weight LDS layout: MFMA fragment order (slot per lane), rows of ck channels with 16-byte chunks XOR-swizzled, wgmma core matrices ([tap][ck/8][tile_k][8]), or depthwise taps ([tap][tile_k]). */
  readonly weightLayout: 'fragment' | 'swizzled-rows' | 'core-matrix' | 'tap-major';
  /** `lds-staged`: the output tile is transposed through LDS into 16-byte NHWK stores (when it fits); `direct`: each lane stores its accumulator runs. */
  readonly epilogue: 'lds-staged' | 'direct';
}

/** What a builder decides about its kernel: the parts of {@link ConvKernel} beyond the spec and the opening. */
export type KernelShape = Pick<ConvKernel, 'threads' | 'dynamicSharedBytes' | 'schedule' | 'fragmentLoad' | 'weightLayout' | 'epilogue'>;

/** The built-kernel record of a kernel opened by {@link openConvKernel} and finished by its builder. */
export function builtKernel(spec: Spec, t: Target, opened: Pick<OpenConvKernel, 'module' | 'name' | 'abi'>, shape: KernelShape): ConvKernel {
  const { threads, dynamicSharedBytes, ...how } = shape;
  return { spec, target: t, module: opened.module, name: opened.name, threads, dynamicSharedBytes, abi: opened.abi, ...how };
}

/** A spec the builder cannot lower (the reason says why). */
export class ConvKernelError extends Error {
  override readonly name = 'ConvKernelError';
}

/** Byte offset that every staging load of an invalid element uses: past any buffer's range, so it reads zero. */
export const SENTINEL_OFFSET = MAX_TENSOR_BYTES;

type DenseArgName = KernargName<'dense'>;
/** Arguments only some variants have (grouped: cpg, kpg; split_c: ws, ws_bytes, splits). */
export type VariantArgName = Exclude<KernargName, DenseArgName>;

/**
 * The kernel's arguments by name, generated from the variant's kernarg table: every variant's
 * arguments are present, the variant-only ones where the table has them (see {@link variantArg}).
 * A misspelt name is a type error.
 */
export type KernelArgs = { readonly [N in DenseArgName]: Value } & { readonly [N in VariantArgName]?: Value };

/** A variant-only argument; throws when the kernel's table lacks it (a builder bug, not a spec error). */
export function variantArg(args: KernelArgs, name: VariantArgName): Value {
  const v = args[name];
  if (!v) throw new ConvKernelError(`this kernel's ABI has no argument ${name}`);
  return v;
}

/** A conv kernel opened by {@link openConvKernel}: its module, symbol, ABI table and arguments, builder at entry and LDS window. */
export interface OpenConvKernel {
  readonly module: Module;
  readonly name: string;
  readonly abi: readonly KernargEntry[];
  readonly args: KernelArgs;
  readonly b: Builder;
  /** The kernels' one shared-memory array: external and zero-sized, sized by the launch's dynamic shared bytes. */
  readonly lds: Value;
}

/**
 * The start both conv builders share: the module, the kernel with the variant's kernarg table as
 * parameters, and then, on sm_90, `griddepcontrol.wait` and `launch_dependents` before anything
 * else. A conv first waits for the grid ahead of it (which may write x, or, for split_c, be the
 * reduce still reading the workspace), then lets the grid after it launch, so the runtime may run
 * convs and reduces as programmatic dependent launches; launched plainly these are no-ops, and AMD
 * has neither. Last the LDS window, aligned to `ldsAlign` bytes.
 */
export function openConvKernel(spec: Spec, t: Target, options: KernelOptions, ldsAlign: number): OpenConvKernel {
  const name = kernelName(spec);
  const module = t.createModule();
  const abi = kernargTable(spec.variant, spec.epilogue);
  const b = t.kernel(module, name, kernargParams(abi), options);
  const args = Object.fromEntries(abi.map((e) => [e.name, b.arg(e.name)])) as KernelArgs;
  if (t.gridDependency) {
    t.gridDependency.wait(b);
    t.gridDependency.launchDependents(b);
  }
  const lds = module.addGlobal({ name: 'lds', valueType: { kind: 'array', count: 0, elem: i8 }, addrspace: 3, linkage: 'external', align: ldsAlign });
  return { module, name, abi, args, b, lds };
}

/**
 * Deliberate defects the builders can be asked for, so tests can show that the numerics checks
 * catch them. Never set outside tests.
 */
export interface BuildMutation {
  /** Dense and split_c with channel tails: count only whole chunks, dropping the last partial one. */
  readonly dropChannelTail?: boolean;
  /** Weight-ring (per-tap) warpgroup kernels: issue no wgmmas for the last tap of each chunk. */
  readonly dropTap?: boolean;
  /** Tap-folded specs: stage reduction element q as (s, c) = (q % S, q / S) instead of (q / C, q % C). */
  readonly transposeTapFold?: boolean;
  /** Direct-to-LDS weights (`lds_dma`): no vmcnt wait before the barrier that publishes a stage. */
  readonly skipLdsDmaWait?: boolean;
}

/**
 * The input channels a dense or split_c workgroup reduces: all C (tap-folded: the S·C elements of
 * the folded axis; `reduced` is that whole count, a weight row's length), or split s's slice of
 * whole channel runs (ck, or c_tail with tails) as `splitSlice` (../split-slices.ts) divides them:
 * [⌊s·runs/splits⌋, ⌊(s+1)·runs/splits⌋) runs, so uneven counts are fine. `trips` chunks of ck,
 * never zero (max(chunks, 1); validation keeps splits ≤ runs, so no slice is empty), so LLVM needs
 * no zero-trip guard before the prefetch. With channel tails the last chunk may be partial
 * (ceil-divided) and `cEnd` is the slice's end; without, the channel count is a multiple of ck.
 */
export function emitChannelSlice(
  b: Builder,
  args: KernelArgs,
  spec: Spec,
  splitIdx: Value | undefined,
  dropTail = false,
): { c0: Value; cEnd: Value | undefined; trips: Value; reduced: Value } {
  let c0: Value = b.i32(0);
  const reduced = spec.fold_s ? b.mul(args.C, spec.S, 'c.folded') : args.C;
  let count = reduced;
  let c1: Value | undefined;
  if (splitIdx) {
    const unit = splitUnit(spec);
    const splits = variantArg(args, 'splits');
    const runs = b.udiv(args.C, unit, 'c.runs');
    c0 = b.mul(b.udiv(b.mul(splitIdx, runs), splits), unit, 'c.start');
    c1 = b.mul(b.udiv(b.mul(b.add(splitIdx, 1), runs), splits), unit, 'c.end');
    count = b.sub(c1, c0, 'c.per.split');
  }
  const tail = spec.c_tail !== 0;
  const chunks = tail && !dropTail ? b.udiv(b.add(count, spec.ck - 1), spec.ck) : b.udiv(count, spec.ck);
  const cEnd = !tail ? undefined : (c1 ?? reduced);
  return { c0, cEnd, trips: b.umax(chunks, 1, 'chunks'), reduced };
}

/**
 * LDS column (within its row) of halo column `col` of a strided tile, in IR: the columns by phase,
 * (col % stride) * ceil(ldsInW / stride) + col / stride (see `ldsHaloColumn`).
 */
export function emitHaloPhaseColumn(b: Builder, col: Value, ldsInW: number, stride: number): Value {
  const pow2 = Number.isInteger(Math.log2(stride));
  const start = b.mul(pow2 ? b.and(col, stride - 1) : b.urem(col, stride), Math.ceil(ldsInW / stride));
  return b.add(start, pow2 ? b.lshr(col, Math.log2(stride)) : b.udiv(col, stride));
}

/**
 * split_c: the element offset of split s's slice of the workspace [splits, N, Ho, Wo, K] (the y
 * strides describe one slice); undefined for the other variants, which write y itself.
 */
export function emitOutputSliceBase(b: Builder, args: KernelArgs, splitIdx: Value | undefined): Value | undefined {
  return splitIdx ? b.mul(splitIdx, b.mul(args.N, args.y_stride_n)) : undefined;
}

/** Where staging vector `v` sits in the halo tile: its channel vector, LDS pixel, halo column and row, image and input row. */
export interface HaloPosition {
  readonly cv: Value;
  readonly pos: Value;
  readonly col: Value;
  readonly row: Value;
  readonly image: Value;
  readonly ih: Value;
}

/**
 * The position of staging vector `v` of the halo tile (8 channels per vector, channel vector
 * fastest, then halo column, then LDS row: tile_n halo tiles of ldsInH rows stacked, LDS row `row`
 * holding input row ih0 + row % ldsInH of image n + row / ldsInH).
 */
export function emitHaloPosition(b: Builder, spec: Spec, g: SpecGeometry, o: { v: Value; j: number; image: Value; ih0: Value }): HaloPosition {
  const cv = b.urem(o.v, g.xChannelVectors);
  const pos = b.udiv(o.v, g.xChannelVectors);
  const col = b.urem(pos, g.ldsInW);
  const row = b.udiv(pos, g.ldsInW);
  if (spec.tile_n === 1) return { cv, pos, col, row, image: o.image, ih: b.add(o.ih0, row) };
  const image = b.add(o.image, b.udiv(row, g.ldsInH), `x.image${o.j}`);
  return { cv, pos, col, row, image, ih: b.add(o.ih0, b.urem(row, g.ldsInH)) };
}

/** Where one staging vector of the input halo tile comes from. */
export interface HaloSource {
  /** Byte offset in x of channel chunk 0, or the sentinel when the pixel is padding, past the batch or past the tile. */
  readonly global: Value;
  /** The vector's LDS row (tile_n halo tiles stacked) and halo column. */
  readonly row: Value;
  readonly col: Value;
}

/**
 * The input pixel and channel of staging vector `v` of the halo tile ({@link emitHaloPosition}).
 * Both builders stage the halo through this one address computation.
 */
export function emitHaloSource(
  b: Builder,
  args: KernelArgs,
  spec: Spec,
  g: SpecGeometry,
  o: { v: Value; j: number; image: Value; ih0: Value; iw0: Value; cStart: Value; inTile: () => Value | undefined },
): HaloSource & { cv: Value; pos: Value; inTile: Value | undefined } {
  const { cv, pos, col, row, image, ih } = emitHaloPosition(b, spec, g, o);
  const iw = b.add(o.iw0, col);
  // Unsigned compares also reject negative (padding) rows and columns.
  let valid = b.and(b.icmp('ult', ih, args.H), b.icmp('ult', iw, args.W));
  if (spec.tile_n !== 1) valid = b.and(valid, b.icmp('ult', image, args.N));
  // Last, partial pass: whether the thread has a vector at all (emitted here, after the pixel checks).
  const inTile = o.inTile();
  if (inTile) valid = b.and(valid, inTile);
  const elem = b.add(b.add(b.add(b.mul(image, args.x_stride_n), b.mul(ih, args.x_stride_h)), b.mul(iw, args.x_stride_w)), b.add(b.mul(cv, 8), o.cStart));
  const global = b.select(valid, b.mul(elem, ELEMENT_BYTES), SENTINEL_OFFSET, `x.goff${o.j}`);
  return { global, row, col, cv, pos, inTile };
}

/**
 * The spec's fused store epilogue, opened where the stores begin (its arguments are read there):
 * every builder passes each fp32 run through `apply(b, acc, {channel, element})` (the run's first
 * global output channel and its first element of y) before the cast. Undefined without one, so
 * bare kernels emit exactly what they did.
 */
export function openStoreEpilogue(t: Target, b: Builder, spec: Spec): StoreEpilogue | undefined {
  return spec.epilogue ? openEpilogue(t, b, spec.epilogue, spec.dtype) : undefined;
}
