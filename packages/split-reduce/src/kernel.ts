/**
 * The split-reduce kernel, written once against @rocke/ir's Target interface:
 *
 *   y[i] = rne(((ws[0][i] + ws[1][i]) + ws[2][i]) + ... + ws[splits-1][i]),   0 <= i < count
 *
 * in fp32, always in that order (no reassociation, no fast-math, IEEE denormals), then rounded to
 * the output dtype with round-to-nearest-even (`fptrunc`). Slice `s` is its own buffer view of
 * `ws_bytes` bytes at `ws + s*slice_stride*4`, so 32-bit buffer offsets only ever span one slice
 * of one launch and the whole workspace may exceed 4 GiB.
 *
 * Workgroups whose tile lies wholly inside `count` take the vector path when ws, y and the slice
 * stride are aligned for it: 16-byte loads (`vectorWidth` 8 = two per group), `slicesPerStep`
 * slices in flight, vector stores. The last, partial workgroup (and every workgroup of a
 * misaligned view) takes the scalar path: 4-byte loads that read zero past `ws_bytes` and 2-byte
 * stores dropped past `y_bytes` — correct for any count, including count < vectorWidth.
 *
 * With an `epilogue` (split_c's fused epilogue) each finished fp32 sum goes through @rocke/ir's
 * store epilogue before the cast: after the whole fixed-order fold, so results stay bit-identical
 * run to run. Its bias and residual reads are issued before the fold, next to slice 0's loads, so
 * their memory latency overlaps the fold's instead of following it. A vector group reads its bias run when its channels cannot wrap past K (K and
 * channel0 multiples of the vector width), else the group takes the scalar path.
 */
import {
  bfloat, f32, getTarget, half, i16, i32, i64, i8, kernargArgs, kernargParams, openEpilogue, printModule, ptr, vec,
  type Builder, type EpiloguePosition, type GlobalBuffer, type KernelParam, type Module, type StoreEpilogue, type Target, type Type, type Value,
} from '@rocke/ir';
import { CHANNEL_ARGS, KERNARG_TABLE, kernargTable } from './abi.js';
import { SplitReduceError } from './errors.js';
import { DTYPE_BYTES, ELEMENTS_PER_LOAD, kernelName, tileElements, WS_ELEMENT_BYTES, type Dtype, type SplitReduceSpec } from './spec.js';
import { validate } from './validate.js';

const OUTPUT_TYPES: Readonly<Record<Dtype, Type>> = { fp16: half, bf16: bfloat };

/** The IR parameters of the kernel, generated from the ABI table (of `spec`'s epilogue; none: the bare fold's). */
export function kernelParams(spec?: SplitReduceSpec): KernelParam[] {
  return kernargParams(kernargTable(spec?.epilogue), { accessAttributes: true });
}

/** Builds the kernel module for a spec. An invalid spec is a {@link SplitReduceError} carrying validate()'s reason. */
export function buildSplitReduce(input: SplitReduceSpec): Module {
  const v = validate(input);
  if (!v.ok) throw new SplitReduceError(`invalid split-reduce spec: ${v.reason}`);
  const spec = v.spec;
  const t = getTarget(spec.target);
  const m = t.createModule();
  const b = t.kernel(m, kernelName(spec), kernelParams(spec), {
    workgroupSize: spec.threads,
    ids: { workitem: ['x'], workgroup: ['x'] },
    // Bit-exact folds need IEEE denormals whatever the backend's default mode is.
    attributes: [{ key: 'denormal-fp-math-f32', value: 'ieee,ieee' }],
  });
  emitBody(t, b, spec);
  return m;
}

/** The kernel's symbol and LLVM IR text (deterministic: same spec, same bytes). */
export function emitSplitReduce(spec: SplitReduceSpec): { kernelName: string; ir: string } {
  const m = buildSplitReduce(spec);
  return { kernelName: kernelName(spec), ir: printModule(m) };
}

function emitBody(t: Target, b: Builder, spec: SplitReduceSpec): void {
  const { threads, vectorWidth: vw } = spec;
  const groups = spec.outputsPerThread / vw;
  const tile = tileElements(spec);
  const outType = OUTPUT_TYPES[spec.dtype];
  const outBytes = DTYPE_BYTES[spec.dtype];

  // sm_90 runs it as a programmatic dependent of the conv: wait for the conv's workspace writes
  // before the first read, then let the grid after this one launch (launched plainly: no-ops).
  if (t.gridDependency) {
    t.gridDependency.wait(b);
    t.gridDependency.launchDependents(b);
  }
  const args = kernargArgs(b, KERNARG_TABLE);
  const { ws, count } = args;
  const wsBytes = args.ws_bytes;
  // A split count below 1 (never planned) folds slice 0 alone rather than looping out of range.
  const splits = b.smax(args.splits, 1, 'splits');
  const stride = args.slice_stride;
  const strideBytes = b.shl(stride, 2, 'slice.stride.bytes');
  const yBuf = t.globalBuffer(b, args.y, args.y_bytes);
  const finish = epilogueAt(t, b, spec);

  const tid = t.workitemId(b, 'x');
  const tileBase = b.mul(t.workgroupId(b, 'x'), tile, 'tile.base');
  const threadBase = b.add(tileBase, b.mul(tid, vw), 'thread.base');
  // First element of each of this thread's vector groups (coalesced: consecutive threads, consecutive vectors).
  const groupStart = Array.from({ length: groups }, (_, g) => (g === 0 ? threadBase : b.add(threadBase, g * threads * vw, `group${g}.start`)));

  /** Slice `s` as its own buffer view. */
  const slice = (s: Value | null): GlobalBuffer => {
    const base = s === null ? ws : b.gep(i8, ws, [b.mul(b.zext(s, i64), strideBytes)], { name: 'slice.base' });
    return t.globalBuffer(b, base, wsBytes);
  };
  const wsOffset = (element: Value): Value => b.mul(element, WS_ELEMENT_BYTES);
  const yOffset = (element: Value): Value => b.mul(element, outBytes);

  /**
   * Loads every value at `offsets` from slice 0, then adds slices 1..splits-1 in order. `perStep`
   * slices are loaded before any of them is added (their memory latencies overlap); a remainder
   * loop takes the last (splits-1) % perStep slices one at a time. The additions are the same
   * sequence either way.
   */
  const fold = (offsets: readonly Value[], type: Type, align: number, perStep: number): Value[] => {
    const loadAll = (buf: GlobalBuffer) => offsets.map((off) => t.globalLoad(b, buf, off, type, { align }));
    const addInOrder = (acc: readonly Value[], slices: readonly Value[][]) =>
      slices.reduce((sum, loaded) => sum.map((a, n) => b.fadd(a, loaded[n]!)), [...acc]);
    const first = loadAll(slice(null));
    let stepped = first;
    let rest: Value = b.i32(1);
    if (perStep > 1) {
      rest = b.add(b.mul(b.udiv(b.sub(splits, 1), perStep), perStep), 1, 'slice.rest');
      stepped = b.forLoop({ from: b.i32(1), to: rest, step: perStep, carried: first, name: 'slices' }, (s, acc) =>
        addInOrder(acc, Array.from({ length: perStep }, (_, u) => loadAll(slice(u === 0 ? s : b.add(s, u))))));
    }
    return b.forLoop({ from: rest, to: splits, carried: stepped, name: 'slice' }, (s, acc) => addInOrder(acc, [loadAll(slice(s))]));
  };

  const tileWhole = b.icmp('ule', b.add(tileBase, tile), count, 'tile.whole');
  // Vector accesses need 16-byte aligned slice starts (ws view and stride) and vector-aligned y;
  // views at any other offset stay correct through the scalar path.
  const lowBits = (p: Value, bytes: number): Value => b.and(b.ptrtoint(p, i64), bytes - 1);
  let misaligned = b.or(b.or(b.and(stride, ELEMENTS_PER_LOAD - 1), lowBits(ws, 16)), lowBits(args.y, vw * outBytes));
  if (finish.vectorMisaligned) misaligned = b.or(misaligned, finish.vectorMisaligned(lowBits));
  const aligned = b.icmp('eq', misaligned, 0, 'aligned');
  b.ifThen(b.and(tileWhole, aligned), () => {
    const loadsPerGroup = vw / ELEMENTS_PER_LOAD;
    const offsets = groupStart.flatMap((start) =>
      Array.from({ length: loadsPerGroup }, (_, l) => wsOffset(l === 0 ? start : b.add(start, l * ELEMENTS_PER_LOAD))));
    // The epilogue's bias and residual reads go out with slice 0's: their latency overlaps the fold's.
    const ahead = groupStart.map((start) => finish.read(start, vw));
    const sums = fold(offsets, vec(ELEMENTS_PER_LOAD, f32), 16, spec.slicesPerStep);
    groupStart.forEach((start, g) => {
      const parts = sums.slice(g * loadsPerGroup, (g + 1) * loadsPerGroup);
      const wide = parts.length === 1 ? parts[0]! : b.shuffleVector(parts[0]!, parts[1]!, [0, 1, 2, 3, 4, 5, 6, 7]);
      const narrow = b.fptrunc(finish.apply(wide, start, ahead[g]!), vec(vw, outType), 'rounded');
      // Stored as dwords: every target stores i32 vectors the same way.
      t.globalStore(b, yBuf, yOffset(start), b.bitcast(narrow, vec(vw / 2, i32)), { align: vw * outBytes });
    });
    b.ret();
  }, 'vector');

  // Partial tile or misaligned views: one element at a time, the buffer ranges doing the bounds checks.
  const elements = groupStart.flatMap((start) => Array.from({ length: vw }, (_, j) => (j === 0 ? start : b.add(start, j))));
  const aheadOne = elements.map((e) => finish.read(e, 1));
  const sums = fold(elements.map(wsOffset), f32, 4, 1);
  elements.forEach((e, n) => {
    const rounded = b.fptrunc(finish.apply(sums[n]!, e, aheadOne[n]!), outType);
    t.globalStore(b, yBuf, yOffset(e), b.bitcast(rounded, i16), { align: outBytes });
  });
  b.ret();
}

/** The fused epilogue at element `element` of this launch, and what its vector path needs aligned. */
interface Finish {
  /** The bias and residual of the `n` elements from `element`, read now (before the fold) for {@link Finish.apply}. */
  read(element: Value, n: number): Pick<EpiloguePosition, 'bias' | 'residual'>;
  apply(sum: Value, element: Value, ahead: Pick<EpiloguePosition, 'bias' | 'residual'>): Value;
  /** Bits that must be zero for vector groups: bias and residual alignment, K and channel0 multiples of the width. */
  vectorMisaligned?: (lowBits: (p: Value, bytes: number) => Value) => Value;
}

/** The defined fields of a position's early reads (a position omits what the epilogue does not read). */
function readsOf(bias: Value[] | undefined, residual: Value[] | undefined): Pick<EpiloguePosition, 'bias' | 'residual'> {
  return { ...(bias ? { bias } : {}), ...(residual ? { residual } : {}) };
}

function epilogueAt(t: Target, b: Builder, spec: SplitReduceSpec): Finish {
  const e = spec.epilogue;
  if (!e) return { read: () => ({}), apply: (sum) => sum };
  const ep: StoreEpilogue = openEpilogue(t, b, e, spec.dtype);
  const vw = spec.vectorWidth;
  const outBytes = DTYPE_BYTES[spec.dtype];
  if (e.bias === 'none') {
    // No channel to find: the residual is read at the element itself.
    const zero = b.i32(0);
    return {
      read: (element, n) => readsOf(undefined, ep.loadResidual(b, element, n)),
      apply: (sum, element, ahead) => ep.apply(b, sum, { channel: zero, element, ...ahead }),
      vectorMisaligned: e.residual ? (low) => low(b.arg('residual'), vw * outBytes) : undefined,
    };
  }
  const position = kernargArgs(b, CHANNEL_ARGS);
  const channels = b.smax(position.channels, 1, 'channels');
  const { channel0 } = position;
  const biasBytes = e.bias === 'fp32' ? 4 : outBytes;
  const channelOf = (element: Value) => b.urem(b.add(channel0, element), channels, 'channel');
  return {
    read: (element, n) => readsOf(ep.loadBias(b, channelOf(element), n), ep.loadResidual(b, element, n)),
    apply: (sum, element, ahead) => ep.apply(b, sum, { channel: channelOf(element), element, ...ahead }),
    vectorMisaligned: (low) => {
      let bits = b.or(b.zext(b.and(b.or(channels, channel0), vw - 1), i64), low(b.arg('bias'), Math.min(16, vw * biasBytes)));
      if (e.residual) bits = b.or(bits, low(b.arg('residual'), vw * outBytes));
      return bits;
    },
  };
}
