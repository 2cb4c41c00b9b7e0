/**
 * `interpret`: runs one kernel over a grid on the CPU. Workgroups run one after another in a
 * fixed order (x fastest, then y, then z); inside a workgroup every thread runs on its own until
 * it reaches a barrier, a wave-collective operation or its end. Collectives execute when all
 * lanes of their wave wait at the same one; a barrier releases when every thread of the
 * workgroup waits at the same barrier. Anything else (a thread that exited or waits elsewhere)
 * is reported as an error instead of hanging, so the same launch always gives the same bits.
 */
import type { IrFunction } from '../ir.js';
import type { Module } from '../module.js';
import { getTarget } from '../targets/index.js';
import { validateModule } from '../validate.js';
import type { Target, TargetName } from '../targets/target.js';
import type { Type } from '../types.js';
import { typeToString } from '../types.js';
import { END_BARRIER, END_COLLECTIVE, END_JUMP, END_RET, compileKernel, locate, withText } from './compile.js';
import type { Program, Segment } from './compile.js';
import { InterpretError } from './errors.js';
import {
  Machine, S_LANE, S_NTID_X, S_NTID_Y, S_NTID_Z, S_NWG_X, S_NWG_Y, S_NWG_Z, S_THREAD, S_TID_X, S_TID_Y, S_TID_Z, S_WG_X, S_WG_Y, S_WG_Z,
} from './machine.js';
import type { Regs } from './machine.js';
import { Lds, regionBase } from './memory.js';
import type { Region } from './memory.js';
import { wrapI64, wrapSmall } from './numeric.js';
import { rounder } from './scalar.js';
import { LdsDmaWaits } from './lds-dma.js';
import { WARPGROUP, WgmmaState } from './wgmma-state.js';

/** A pointer argument naming a buffer (from `buffers`, or given directly) and a byte offset into it. */
export interface BufferRef {
  readonly buffer: string | ArrayBufferLike | ArrayBufferView;
  readonly byteOffset?: number;
}

/**
 * A kernel argument: numbers/bigints/booleans for scalars; for pointers a typed array or
 * DataView (points at its first byte, inside its ArrayBuffer), an ArrayBuffer (its start), a
 * {@link BufferRef}, or `null` for a null pointer.
 */
export type ArgValue = number | bigint | boolean | null | ArrayBufferLike | ArrayBufferView | BufferRef;

export type Dim3 = readonly [number, number, number];

export interface InterpretOptions {
  /** The GPU whose semantics to use (wave size, atoms, LDS limit, intrinsic family). */
  readonly target: TargetName | Target;
  /** Workgroups per axis. */
  readonly grid: Dim3;
  /** Threads per workgroup per axis. */
  readonly block: Dim3;
  /** Arguments in parameter order, or by parameter name. */
  readonly args: readonly ArgValue[] | Readonly<Record<string, ArgValue>>;
  /** Named buffers that {@link BufferRef}s can refer to. */
  readonly buffers?: Readonly<Record<string, ArrayBufferLike | ArrayBufferView>>;
  /** Dynamic LDS / shared bytes, placed after the static LDS globals (external addrspace(3) globals point there). */
  readonly dynamicShared?: number;
  /** Byte every LDS byte starts as in each workgroup (default 0xFF: reads of never-written LDS give NaN floats). */
  readonly ldsFill?: number;
  /** Report LDS data races between barriers (default true). */
  readonly detectRaces?: boolean;
  /** Stop with an error after this many executed instructions (default 2e9): a hung kernel fails instead of spinning. */
  readonly maxInstructions?: number;
  /**
   * Run only these workgroups, in this order (default: the whole grid). For spot checks of large
   * launches: the others write nothing. Ids still see the full `grid`.
   */
  readonly workgroups?: readonly Dim3[];
}

export interface InterpretResult {
  /** IR instructions executed over all threads (every instruction but phis; a barrier or collective counts once per thread). */
  readonly instructions: number;
  /** Workgroups (and threads) that ran. */
  readonly workgroups: number;
  readonly threads: number;
  /** Wall time of the run, compile included. */
  readonly seconds: number;
}

const RUNNING = 0;
const WAITING = 1;
const DONE = 2;

interface Lane {
  readonly r: Regs;
  seg: number;
  status: number;
}

function checkDim(what: string, d: unknown): Dim3 {
  if (!Array.isArray(d) || d.length !== 3 || !d.every((x) => Number.isInteger(x) && x >= 1)) {
    throw new InterpretError(`${what} must be three positive integers [x, y, z], got ${JSON.stringify(d)}`);
  }
  return d as unknown as Dim3;
}

const isView = (x: unknown): x is ArrayBufferView => ArrayBuffer.isView(x);
const isBuffer = (x: unknown): x is ArrayBufferLike =>
  x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer);

/** Resolves buffers to regions (one per distinct ArrayBuffer) and converts arguments to register values. */
function bindArgs(fn: IrFunction, o: InterpretOptions): { regions: (Region | undefined)[]; values: unknown[] } {
  const regions: (Region | undefined)[] = [undefined, undefined];
  const byBuffer = new Map<ArrayBufferLike, Region>();
  const regionOf = (buf: ArrayBufferLike, label: string): Region => {
    let r = byBuffer.get(buf);
    if (!r) {
      r = { index: regions.length, buffer: buf, view: new DataView(buf), bytes: new Uint8Array(buf), label };
      regions.push(r);
      byBuffer.set(buf, r);
    }
    return r;
  };
  const named = o.buffers ?? {};
  for (const [k, v] of Object.entries(named)) {
    if (!isView(v) && !isBuffer(v)) throw new InterpretError(`buffers.${k} must be an ArrayBuffer or a typed array/DataView`);
    regionOf(isView(v) ? v.buffer : v, `buffer "${k}"`);
  }
  const pointer = (v: ArgValue, label: string): number => {
    if (v === null || v === 0) return 0;
    if (isView(v)) return regionBase(regionOf(v.buffer, label).index) + v.byteOffset;
    if (isBuffer(v)) return regionBase(regionOf(v, label).index);
    if (typeof v === 'object' && v !== null && 'buffer' in v) {
      const ref = v;
      let base: { buf: ArrayBufferLike; off: number };
      if (typeof ref.buffer === 'string') {
        const b = named[ref.buffer];
        if (!b) throw new InterpretError(`${label} refers to buffer "${ref.buffer}", which is not in buffers (${Object.keys(named).join(', ') || 'none given'})`);
        base = isView(b) ? { buf: b.buffer, off: b.byteOffset } : { buf: b, off: 0 };
      } else if (isView(ref.buffer)) base = { buf: ref.buffer.buffer, off: ref.buffer.byteOffset };
      else if (isBuffer(ref.buffer)) base = { buf: ref.buffer, off: 0 };
      else throw new InterpretError(`${label}: buffer must be a name, an ArrayBuffer or a view`);
      const off = ref.byteOffset ?? 0;
      if (!Number.isInteger(off)) throw new InterpretError(`${label}: byteOffset must be an integer, got ${off}`);
      return regionBase(regionOf(base.buf, typeof ref.buffer === 'string' ? `buffer "${ref.buffer}"` : label).index) + base.off + off;
    }
    throw new InterpretError(`${label} is a pointer: pass a typed array, DataView, ArrayBuffer, {buffer, byteOffset} or null, got ${typeof v}`);
  };
  const scalar = (v: ArgValue, t: Type, label: string): unknown => {
    if (t.kind === 'ptr') {
      if (t.addrspace !== 0 && t.addrspace !== 1) throw new InterpretError(`${label}: pointer arguments in addrspace(${t.addrspace}) are not modeled`);
      return pointer(v, label);
    }
    if (t.kind === 'int') {
      const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
      if (typeof x === 'bigint' || (typeof x === 'number' && Number.isInteger(x))) {
        const lo = -(2 ** (t.bits - 1));
        const hi = 2 ** t.bits;
        if (x < lo || x >= hi) throw new InterpretError(`${label} = ${x} does not fit i${t.bits}`);
        if (t.bits === 64) return wrapI64(x);
        if (t.bits > 32) throw new InterpretError(`${label}: i${t.bits} arguments are not modeled`);
        return wrapSmall(x, t.bits);
      }
      throw new InterpretError(`${label} must be an integer for i${t.bits}, got ${String(v)}`);
    }
    if (t.kind === 'float') {
      if (typeof v !== 'number') throw new InterpretError(`${label} must be a number for ${t.name}, got ${typeof v}`);
      return rounder(t.name)(v);
    }
    throw new InterpretError(`${label}: arguments of type ${typeToString(t)} are not modeled`);
  };
  let list: readonly ArgValue[];
  if (Array.isArray(o.args)) {
    list = o.args as readonly ArgValue[];
    if (list.length !== fn.args.length) throw new InterpretError(`@${fn.name} takes ${fn.args.length} arguments (${fn.args.map((a) => a.name).join(', ')}), got ${list.length}`);
  } else {
    const rec = o.args as Readonly<Record<string, ArgValue>>;
    for (const k of Object.keys(rec)) if (!fn.args.some((a) => a.name === k)) throw new InterpretError(`@${fn.name} has no parameter "${k}" (parameters: ${fn.args.map((a) => a.name).join(', ')})`);
    list = fn.args.map((a) => {
      if (!(a.name in rec)) throw new InterpretError(`missing argument "${a.name}" of @${fn.name}`);
      return rec[a.name]!;
    });
  }
  const values = fn.args.map((a, i) => scalar(list[i]!, a.type, `argument "${a.name}"`));
  return { regions, values };
}

/** Runs lane `L` until it waits, returns, or fails. Returns instructions executed. */
function runLane(prog: Program, L: Lane, budget: { left: number }): number {
  const segs = prog.segments;
  const r = L.r;
  let s = L.seg;
  let seg: Segment = segs[s]!;
  let i = 0;
  let count = 0;
  try {
    for (;;) {
      seg = segs[s]!;
      const ops = seg.ops;
      const n = ops.length;
      for (i = 0; i < n; i++) ops[i]!(r);
      count += seg.weight;
      i = -1;
      const end = seg.end;
      if (end.kind === END_JUMP) {
        s = end.next(r);
        if (count > budget.left) throw new InterpretError('instruction budget exhausted (endless loop?); raise maxInstructions if the kernel is really this long');
        continue;
      }
      if (end.kind === END_RET) {
        L.status = DONE;
        break;
      }
      L.status = WAITING;
      L.seg = s;
      break;
    }
  } catch (e) {
    if (!(e instanceof InterpretError)) throw e;
    const inst = i >= 0 ? seg.insts[i] : seg.end.inst;
    const who = `thread (${r[S_TID_X]},${r[S_TID_Y]},${r[S_TID_Z]}) of workgroup (${r[S_WG_X]},${r[S_WG_Y]},${r[S_WG_Z]})`;
    throw e.locate(inst ? `${withText(prog.module, prog.fn, inst)}, ${who}` : who);
  }
  budget.left -= count;
  return count;
}

/** Runs kernel `kernelName` of `module` over the grid; buffers are modified in place. */
export function interpret(module: Module, kernelName: string, options: InterpretOptions): InterpretResult {
  const t0 = performance.now();
  const target = typeof options.target === 'string' ? getTarget(options.target) : options.target;
  const fn = module.getFunction(kernelName);
  if (!fn) {
    const kernels = module.functions.filter((f) => f.blocks.length > 0).map((f) => f.name);
    throw new InterpretError(`no function @${kernelName} in the module (defined: ${kernels.join(', ') || 'none'})`);
  }
  // Invalid IR (a use its definition does not dominate, a phi missing a predecessor) would run as garbage: refuse it first.
  const problems = validateModule(module);
  if (problems.length > 0) throw new InterpretError(`the module is not valid IR: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`);
  const grid = checkDim('grid', options.grid);
  const block = checkDim('block', options.block);
  const threads = block[0] * block[1] * block[2];
  if (threads > target.maxThreadsPerBlock) throw new InterpretError(`block of ${threads} threads exceeds ${target.name}'s ${target.maxThreadsPerBlock}`);
  const dyn = options.dynamicShared ?? 0;
  if (!Number.isInteger(dyn) || dyn < 0) throw new InterpretError(`dynamicShared must be a non-negative integer, got ${dyn}`);
  const fill = options.ldsFill ?? 0xff;
  const { regions, values } = bindArgs(fn, options);
  const machine = new Machine(regions, target.waveSize);
  const prog = compileKernel(module, fn, target, machine);
  const ldsBytes = (dyn > 0 ? prog.dynamicOffset : prog.staticLds) + dyn;
  if (ldsBytes > target.ldsBytes) throw new InterpretError(`kernel needs ${ldsBytes} bytes of LDS; ${target.name} has ${target.ldsBytes}`);
  const template = prog.template.slice();
  prog.argSlots.forEach((s, i) => {
    template[s] = values[i];
  });
  template[S_NTID_X] = block[0];
  template[S_NTID_Y] = block[1];
  template[S_NTID_Z] = block[2];
  template[S_NWG_X] = grid[0];
  template[S_NWG_Y] = grid[1];
  template[S_NWG_Z] = grid[2];

  const ws = target.waveSize;
  const budget = { left: options.maxInstructions ?? 2e9 };
  let executed = 0;
  let ran = 0;
  const detect = options.detectRaces ?? true;
  // One LDS for the launch, reset per workgroup (workgroups never overlap here).
  machine.lds = new Lds(ldsBytes, fill, detect);
  machine.lds.wgmma = new WgmmaState(ldsBytes, threads);
  machine.lds.dma = new LdsDmaWaits(threads);
  let firstWorkgroup = true;
  for (const [gx, gy, gz] of workgroupOrder(grid, options.workgroups)) {
    if (!firstWorkgroup) machine.lds.reset();
    firstWorkgroup = false;
    template[S_WG_X] = gx;
    template[S_WG_Y] = gy;
    template[S_WG_Z] = gz;
    const lanes: Lane[] = [];
    for (let t = 0; t < threads; t++) {
      const r = template.slice();
      r[S_TID_X] = t % block[0];
      r[S_TID_Y] = Math.floor(t / block[0]) % block[1];
      r[S_TID_Z] = Math.floor(t / (block[0] * block[1]));
      r[S_LANE] = t % ws;
      r[S_THREAD] = t;
      lanes.push({ r, seg: 0, status: RUNNING });
    }
    executed += runWorkgroup(prog, lanes, ws, machine, budget);
    ran++;
  }
  return { instructions: executed, workgroups: ran, threads: threads * ran, seconds: (performance.now() - t0) / 1000 };
}

/** The workgroups to run: the whole grid (x fastest, then y, then z), or the caller's list, checked against the grid. */
function* workgroupOrder(grid: Dim3, only: readonly Dim3[] | undefined): Generator<Dim3> {
  if (only) {
    for (const w of only) {
      if (!Array.isArray(w) || w.length !== 3 || !w.every((v, i) => Number.isInteger(v) && v >= 0 && v < grid[i]!)) {
        throw new InterpretError(`workgroup ${JSON.stringify(w)} is not inside the grid [${grid.join(', ')}]`);
      }
      yield w;
    }
    return;
  }
  for (let gz = 0; gz < grid[2]; gz++) for (let gy = 0; gy < grid[1]; gy++) for (let gx = 0; gx < grid[0]; gx++) yield [gx, gy, gz];
}

function describeWait(prog: Program, L: Lane): string {
  if (L.status === DONE) return 'returned';
  const end = prog.segments[L.seg]!.end;
  return `waits at ${locate(prog.fn, end.inst)}`;
}

function runWorkgroup(prog: Program, lanes: Lane[], ws: number, machine: Machine, budget: { left: number }): number {
  let executed = 0;
  const segs = prog.segments;
  const n = lanes.length;
  const waves: Lane[][] = [];
  for (let w = 0; w * ws < n; w++) waves.push(lanes.slice(w * ws, Math.min(n, (w + 1) * ws)));
  const waveRegs = waves.map((wave) => wave.map((L) => L.r));
  const hasWarpgroup = segs.some((s) => s.end.kind === END_COLLECTIVE && s.end.collective.warpgroup);
  const where = (L: Lane) => `thread ${L.r[S_THREAD]} of workgroup (${L.r[S_WG_X]},${L.r[S_WG_Y]},${L.r[S_WG_Z]})`;
  for (;;) {
    let waiting = 0;
    for (let t = 0; t < n; t++) {
      const L = lanes[t]!;
      if (L.status === RUNNING) executed += runLane(prog, L, budget);
      if (L.status === WAITING) waiting++;
    }
    if (waiting === 0) return executed;
    // Wave-collective operations first: a wave at one can finish it without the rest of the workgroup.
    let progressed = false;
    for (let w = 0; w < waves.length; w++) {
      const wave = waves[w]!;
      let first: Lane | undefined;
      for (const L of wave) {
        if (L.status === WAITING && segs[L.seg]!.end.kind === END_COLLECTIVE) {
          first = L;
          break;
        }
      }
      if (!first) continue;
      const end = segs[first.seg]!.end;
      // Warpgroup collectives wait for the loop below.
      if (end.kind !== END_COLLECTIVE || end.collective.warpgroup) continue;
      if (wave.length < ws) {
        throw new InterpretError(`wave-collective ${end.collective.name} at ${locate(prog.fn, end.inst)} needs all ${ws} lanes of a wave; wave ${w} of this workgroup has only ${wave.length} threads`);
      }
      for (const L of wave) {
        if (L.status !== WAITING || L.seg !== first.seg) {
          throw new InterpretError(`divergent wave-collective: ${where(first)} waits at ${locate(prog.fn, end.inst)} but ${where(L)} ${describeWait(prog, L)}`);
        }
      }
      runCollective(prog, end, waveRegs[w]!);
      for (const L of wave) {
        L.status = RUNNING;
        L.seg = end.resume;
      }
      progressed = true;
    }
    // Warpgroup collectives (sm_90 wgmma: 4 consecutive warps). A warp of the group may still have
    // a wave collective of its own to finish first, so a group not all there yet is only an error
    // when nothing else moved.
    let blocked: string | undefined;
    for (let g = 0; hasWarpgroup && g * WARPGROUP < n; g++) {
      let first: Lane | undefined;
      for (let t = g * WARPGROUP; t < Math.min(n, (g + 1) * WARPGROUP); t++) {
        const L = lanes[t]!;
        if (L.status === WAITING) {
          const e = segs[L.seg]!.end;
          if (e.kind === END_COLLECTIVE && e.collective.warpgroup) {
            first = L;
            break;
          }
        }
      }
      if (!first) continue;
      const end = segs[first.seg]!.end;
      if (end.kind !== END_COLLECTIVE) continue;
      const lo = g * WARPGROUP;
      if (lo + WARPGROUP > n) {
        throw new InterpretError(`warpgroup-collective ${end.collective.name} at ${locate(prog.fn, end.inst)} needs ${WARPGROUP} threads (${WARPGROUP / ws} whole waves); the workgroup has ${n} threads, so threads ${lo}..${n - 1} are not a whole group`);
      }
      const group = lanes.slice(lo, lo + WARPGROUP);
      const other = group.find((L) => L.status !== WAITING || L.seg !== first.seg);
      if (other) {
        blocked ??= `divergent warpgroup-collective: ${where(first)} waits at ${locate(prog.fn, end.inst)} but ${where(other)} ${describeWait(prog, other)} (all ${WARPGROUP} threads of its warpgroup must reach it together)`;
        continue;
      }
      runCollective(prog, end, group.map((L) => L.r));
      for (const L of group) {
        L.status = RUNNING;
        L.seg = end.resume;
      }
      progressed = true;
    }
    if (progressed) continue;
    if (blocked) throw new InterpretError(blocked);
    let first: Lane | undefined;
    for (const L of lanes) {
      if (L.status === WAITING) {
        first = L;
        break;
      }
    }
    const end = segs[first!.seg]!.end;
    if (end.kind !== END_BARRIER) throw new InterpretError(`internal: ${where(first!)} waits at a non-barrier`);
    for (const L of lanes) {
      if (L.status !== WAITING || L.seg !== first!.seg) {
        throw new InterpretError(`divergent barrier: ${where(first!)} waits at ${locate(prog.fn, end.inst)} but ${where(L)} ${describeWait(prog, L)}`);
      }
    }
    machine.lds.dma?.barrier(locate(prog.fn, end.inst));
    machine.lds.epoch++;
    machine.lds.wgmma?.barrier();
    for (const L of lanes) {
      L.status = RUNNING;
      L.seg = end.resume;
    }
  }
}

/** Runs a collective, locating its errors at the instruction (the lanes' own run locates theirs). */
function runCollective(prog: Program, end: Extract<Segment['end'], { kind: typeof END_COLLECTIVE }>, regs: readonly Regs[]): void {
  try {
    end.collective.run(regs);
  } catch (e) {
    if (!(e instanceof InterpretError)) throw e;
    const r = regs[0]!;
    throw e.locate(`${withText(prog.module, prog.fn, end.inst)}, workgroup (${r[S_WG_X]},${r[S_WG_Y]},${r[S_WG_Z]})`);
  }
}
