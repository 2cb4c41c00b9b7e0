/**
 * Precompiles a kernel once per launch into closures over register slots: every value (argument,
 * constant, global, instruction result) gets a slot in the lane's register file; each block
 * becomes one or more segments of straight-line closures, split where a lane must wait for
 * others (barriers, wave-collective operations); branches run the successor's phis as parallel
 * moves and return the next segment index. Nothing here looks anything up by name at run time.
 */
import type { Block, Constant, GlobalVariable, Instruction, IrFunction, Value } from '../ir.js';
import { operandsOf } from '../ir.js';
import type { Module } from '../module.js';
import { printModule } from '../printer.js';
import type { Target } from '../targets/target.js';
import type { Type } from '../types.js';
import { alignOf, sizeOf, typeToString } from '../types.js';
import { InterpretError } from './errors.js';
import { lowerCall } from './intrinsics.js';
import type { Collective } from './intrinsics.js';
import type { Machine, Op, Regs } from './machine.js';
import { RESERVED_SLOTS, S_THREAD } from './machine.js';
import { codecOf } from './memory.js';
import { normI64, wrapSmall } from './numeric.js';
import { castFn, checkIntBits, fcmpFn, floatBinary, icmpFn, intBinary } from './scalar.js';
import type { Fn1, Fn2 } from './scalar.js';

export const END_JUMP = 0;
export const END_RET = 1;
export const END_BARRIER = 2;
export const END_COLLECTIVE = 3;

export type SegmentEnd =
  | { readonly kind: typeof END_JUMP; readonly inst: Instruction; next: (r: Regs) => number }
  | { readonly kind: typeof END_RET; readonly inst: Instruction }
  | { readonly kind: typeof END_BARRIER; readonly inst: Instruction; readonly resume: number }
  | { readonly kind: typeof END_COLLECTIVE; readonly inst: Instruction; readonly resume: number; readonly collective: Collective };

/** Straight-line code ending in a branch, a return, or a point where the lane waits for others. */
export interface Segment {
  readonly ops: Op[];
  readonly insts: Instruction[];
  end: SegmentEnd;
  /** IR instructions the segment stands for (every one but phis, its end included), for the executed count. */
  weight: number;
}

/** A compiled kernel. */
export interface Program {
  readonly module: Module;
  readonly fn: IrFunction;
  /** Register file with constants and globals in place; arguments are filled per launch. */
  readonly template: Regs;
  readonly argSlots: readonly number[];
  readonly segments: readonly Segment[];
  /** LDS bytes of the static addrspace(3) globals; dynamic LDS starts at `dynamicOffset`. */
  readonly staticLds: number;
  readonly dynamicOffset: number;
}

/** Zero value of a type (also what poison and undef become, so runs are deterministic). */
export function zeroOf(t: Type): unknown {
  switch (t.kind) {
    case 'int':
    case 'float':
    case 'ptr':
      return 0;
    case 'vector':
    case 'array':
      return Array.from({ length: t.count }, () => zeroOf(t.elem));
    case 'struct':
      return t.fields.map(zeroOf);
    default:
      throw new InterpretError(`no value of type ${typeToString(t)}`);
  }
}

/** The interpreter value of a constant. */
export function constantValue(c: Constant): unknown {
  switch (c.kind) {
    case 'const.int':
      checkIntBits(c.type.bits);
      return c.type.bits === 64 ? normI64(c.value) : wrapSmall(c.value, c.type.bits);
    case 'const.float':
      return c.value;
    case 'const.null':
      return 0;
    case 'const.vector':
      return c.elems.map(constantValue);
    default:
      return zeroOf(c.type);
  }
}

/** An error met while compiling `where`: the IR library's TypeError/RangeError become InterpretErrors too. */
function asLocated(e: unknown, where: string): unknown {
  if (e instanceof InterpretError) return e.locate(where);
  if (e instanceof TypeError || e instanceof RangeError) return new InterpretError(e.message, where);
  return e;
}

/**
 * The printed text of `inst` (what `printModule` writes for it, with its `%N` numbering), or
 * undefined when the module cannot be printed. Only used when reporting an error.
 */
export function instructionText(module: Module, fn: IrFunction, inst: Instruction): string | undefined {
  let lines: string[];
  try {
    lines = printModule(module).split('\n');
  } catch {
    return undefined;
  }
  const def = lines.findIndex((l) => l.startsWith('define ') && (l.includes(`@${fn.name}(`) || l.includes(`@"${fn.name}"(`)));
  if (def < 0) return undefined;
  // Definition layout: the define line, then per block an optional blank line, a label line and one line per instruction.
  let at = def + 1;
  for (const [n, b] of fn.blocks.entries()) {
    if (n > 0) at++;
    at++;
    const i = b.instructions.indexOf(inst);
    if (i >= 0) return lines[at + i]?.trim();
    at += b.instructions.length;
  }
  return undefined;
}

/** {@link locate} plus the printed instruction. */
export function withText(module: Module, fn: IrFunction, inst: Instruction): string {
  const text = instructionText(module, fn, inst);
  return text ? `${locate(fn, inst)} \`${text}\`` : locate(fn, inst);
}

/** Where each instruction sits, for error messages. */
export function locate(fn: IrFunction, inst: Instruction): string {
  const at = position(fn, inst);
  const name = inst.name ? ` %${inst.name}` : '';
  const callee = inst.op === 'call' ? ` ${inst.callee.kind === 'asm' ? `asm "${inst.callee.asm}"` : `@${inst.callee.name}`}` : '';
  return `${at} (${inst.op}${callee}${name})`;
}

/** `@k block %b instruction #i` (just `@k` when the instruction is not in `fn`). */
export function position(fn: IrFunction, inst: Instruction): string {
  for (const b of fn.blocks) {
    const i = b.instructions.indexOf(inst);
    if (i >= 0) return `@${fn.name} block %${b.name} instruction #${i}`;
  }
  return `@${fn.name}`;
}

/** LDS layout: static addrspace(3) globals in module order, each at its alignment; external ones (dynamic) after them. */
export function ldsLayout(module: Module): { offsets: Map<GlobalVariable, number>; staticBytes: number; dynamicOffset: number } {
  const offsets = new Map<GlobalVariable, number>();
  let off = 0;
  const lds = module.globals.filter((g) => g.addrspace === 3);
  for (const g of lds.filter((x) => x.linkage !== 'external')) {
    if (g.init && g.init.kind !== 'const.poison' && g.init.kind !== 'const.undef') {
      throw new InterpretError(`LDS global @${g.name} has an initializer; LDS cannot be initialized (use poison)`);
    }
    off = Math.ceil(off / g.align) * g.align;
    offsets.set(g, off);
    off += sizeOf(g.valueType);
  }
  const staticBytes = off;
  let dyn = off;
  for (const g of lds.filter((x) => x.linkage === 'external')) dyn = Math.ceil(dyn / g.align) * g.align;
  for (const g of lds.filter((x) => x.linkage === 'external')) offsets.set(g, dyn);
  return { offsets, staticBytes, dynamicOffset: dyn };
}

/** Compiles kernel `fn` of `module` for `target`; closures capture `machine`. */
export function compileKernel(module: Module, fn: IrFunction, target: Target, machine: Machine): Program {
  if (fn.blocks.length === 0) throw new InterpretError(`@${fn.name} is a declaration, not a kernel definition`);
  const template: Regs = new Array(RESERVED_SLOTS).fill(0);
  const slots = new Map<Value, number>();
  const layout = ldsLayout(module);

  const newSlot = (init: unknown): number => {
    template.push(init);
    return template.length - 1;
  };
  const argSlots = fn.args.map((a) => {
    const s = newSlot(undefined);
    slots.set(a, s);
    return s;
  });
  for (const b of fn.blocks) for (const i of b.instructions) if (i.type.kind !== 'void') slots.set(i, newSlot(undefined));

  const slot = (v: Value): number => {
    const s = slots.get(v);
    if (s !== undefined) return s;
    let init: unknown;
    if (v.kind === 'global') {
      if (v.addrspace !== 3) throw new InterpretError(`global @${v.name} in addrspace(${v.addrspace}) is not modeled (only LDS globals are)`);
      init = layout.offsets.get(v);
    } else if (v.kind === 'function') {
      throw new InterpretError(`@${v.name} used as a value (function pointers are not modeled)`);
    } else if (v.kind === 'arg' || v.kind === 'inst') {
      throw new InterpretError(`value of ${v.kind === 'arg' ? `argument %${v.name}` : `instruction ${v.op}`} does not belong to @${fn.name}`);
    } else init = constantValue(v);
    const n = newSlot(init);
    slots.set(v, n);
    return n;
  };

  const absorbed = absorbedInserts(fn);
  const segments: Segment[] = [];
  const blockEntry = new Map<Block, number>();
  const pendingJumps: { seg: Segment; block: Block; inst: Instruction }[] = [];

  for (const block of fn.blocks) {
    let seg: Segment = { ops: [], insts: [], end: undefined as unknown as SegmentEnd, weight: 0 };
    segments.push(seg);
    blockEntry.set(block, segments.length - 1);
    for (const [at, inst] of block.instructions.entries()) {
      try {
        if (inst.op === 'phi') continue;
        seg.weight++;
        if (inst.op === 'br' || inst.op === 'condbr') {
          pendingJumps.push({ seg, block, inst });
          continue;
        }
        if (inst.op === 'ret') {
          seg.end = { kind: END_RET, inst };
          continue;
        }
        if (inst.op === 'unreachable') {
          seg.ops.push(() => {
            throw new InterpretError('reached `unreachable`');
          });
          seg.insts.push(inst);
          seg.end = { kind: END_RET, inst };
          continue;
        }
        if (inst.op === 'call') {
          const lowered = lowerCall(inst, {
            slot, dest: inst.type.kind === 'void' ? -1 : slot(inst), machine, target, site: () => position(fn, inst),
            before: block.instructions[at - 1], after: block.instructions[at + 1],
          });
          if (lowered.kind === 'op') {
            seg.ops.push(lowered.op);
            seg.insts.push(inst);
          } else if (lowered.kind === 'barrier' || lowered.kind === 'collective') {
            const next: Segment = { ops: [], insts: [], end: undefined as unknown as SegmentEnd, weight: 0 };
            seg.end = lowered.kind === 'barrier'
              ? { kind: END_BARRIER, inst, resume: segments.length }
              : { kind: END_COLLECTIVE, inst, resume: segments.length, collective: lowered.collective };
            segments.push(next);
            seg = next;
          }
          continue;
        }
        const op = lowerInstruction(inst, slot, machine, absorbed);
        if (op) {
          seg.ops.push(op);
          seg.insts.push(inst);
        }
      } catch (e) {
        throw asLocated(e, withText(module, fn, inst));
      }
    }
    if (!seg.end && !pendingJumps.some((p) => p.seg === seg)) throw new InterpretError(`block %${block.name} of @${fn.name} has no terminator`);
  }

  for (const { seg, block, inst } of pendingJumps) {
    try {
      const edge = (dest: Block): ((r: Regs) => number) => {
        const target = blockEntry.get(dest);
        if (target === undefined) throw new InterpretError(`branch to block %${dest.name} that is not in @${fn.name}`);
        const moves = phiMoves(block, dest, slot);
        return moves ? (r) => (moves(r), target) : () => target;
      };
      if (inst.op === 'br') seg.end = { kind: END_JUMP, inst, next: edge(inst.dest) };
      else if (inst.op === 'condbr') {
        const c = slot(inst.cond);
        const t = edge(inst.ifTrue);
        const f = edge(inst.ifFalse);
        seg.end = { kind: END_JUMP, inst, next: (r) => (r[c] ? t(r) : f(r)) };
      }
    } catch (e) {
      throw asLocated(e, withText(module, fn, inst));
    }
  }

  return { module, fn, template, argSlots, segments, staticLds: layout.staticBytes, dynamicOffset: layout.dynamicOffset };
}

/** The phi assignments on edge `from → to`, as one parallel move (reads all sources before writing). */
function phiMoves(from: Block, to: Block, slot: (v: Value) => number): ((r: Regs) => void) | undefined {
  const dst: number[] = [];
  const src: number[] = [];
  for (const inst of to.instructions) {
    if (inst.op !== 'phi') continue;
    const inc = inst.incoming.find((x) => x.block === from);
    if (!inc) throw new InterpretError(`phi${inst.name ? ` %${inst.name}` : ''} in block %${to.name} has no value for predecessor %${from.name}`);
    dst.push(slot(inst));
    src.push(slot(inc.value));
  }
  const n = dst.length;
  if (n === 0) return undefined;
  if (n === 1) {
    const d = dst[0]!;
    const s = src[0]!;
    return (r) => {
      r[d] = r[s];
    };
  }
  const overlapping = dst.some((d) => src.includes(d));
  if (!overlapping) {
    return (r) => {
      for (let i = 0; i < n; i++) r[dst[i]!] = r[src[i]!];
    };
  }
  const tmp = new Array<unknown>(n);
  return (r) => {
    for (let i = 0; i < n; i++) tmp[i] = r[src[i]!];
    for (let i = 0; i < n; i++) r[dst[i]!] = tmp[i];
  };
}

const lift1 = (t: Type, f: Fn1, d: number, a: number): Op => {
  if (t.kind === 'vector') {
    const n = t.count;
    return (r) => {
      const x = r[a];
      const o = new Array(n);
      for (let i = 0; i < n; i++) o[i] = f(x[i]);
      r[d] = o;
    };
  }
  return (r) => {
    r[d] = f(r[a]);
  };
};

const lift2 = (t: Type, f: Fn2, d: number, a: number, b: number): Op => {
  if (t.kind === 'vector') {
    const n = t.count;
    return (r) => {
      const x = r[a];
      const y = r[b];
      const o = new Array(n);
      for (let i = 0; i < n; i++) o[i] = f(x[i], y[i]);
      r[d] = o;
    };
  }
  return (r) => {
    r[d] = f(r[a], r[b]);
  };
};

/** Hand-specialized closures for the hottest scalar ops (no inner call). */
function fastBinary(op: string, t: Type, d: number, a: number, b: number): Op | undefined {
  if (t.kind === 'int' && t.bits === 32) {
    switch (op) {
      case 'add': return (r) => { r[d] = (r[a] + r[b]) >>> 0; };
      case 'sub': return (r) => { r[d] = (r[a] - r[b]) >>> 0; };
      case 'mul': return (r) => { r[d] = Math.imul(r[a], r[b]) >>> 0; };
      case 'and': return (r) => { r[d] = (r[a] & r[b]) >>> 0; };
      case 'or': return (r) => { r[d] = (r[a] | r[b]) >>> 0; };
      case 'xor': return (r) => { r[d] = (r[a] ^ r[b]) >>> 0; };
      case 'shl': return (r) => { const s = r[b]; r[d] = s >= 32 ? 0 : (r[a] << s) >>> 0; };
      case 'lshr': return (r) => { const s = r[b]; r[d] = s >= 32 ? 0 : r[a] >>> s; };
      default: return undefined;
    }
  }
  if (t.kind === 'float' && t.name === 'float') {
    switch (op) {
      case 'fadd': return (r) => { r[d] = Math.fround(r[a] + r[b]); };
      case 'fsub': return (r) => { r[d] = Math.fround(r[a] - r[b]); };
      case 'fmul': return (r) => { r[d] = Math.fround(r[a] * r[b]); };
      default: return undefined;
    }
  }
  return undefined;
}

/** Signed index value of a GEP index (any int width) as a JS number. */
function indexReader(t: Type): (x: unknown) => number {
  if (t.kind !== 'int') throw new InterpretError(`GEP index of type ${typeToString(t)} (vector GEPs are not modeled)`);
  const bits = t.bits;
  checkIntBits(bits);
  if (bits === 64) return (x) => Number(x);
  if (bits === 32) return (x) => (x as number) | 0;
  const sh = 32 - bits;
  return (x) => ((x as number) << sh) >> sh;
}

function lowerGep(inst: Extract<Instruction, { op: 'gep' }>, slot: (v: Value) => number): Op {
  const d = slot(inst);
  const base = slot(inst.base);
  if (inst.base.type.kind !== 'ptr') throw new InterpretError('vector GEPs are not modeled');
  let constOff = 0;
  const dyn: { s: number; stride: number; read: (x: unknown) => number }[] = [];
  let cur: Type = inst.sourceType;
  inst.indices.forEach((idx, n) => {
    let stride: number;
    if (n === 0) stride = sizeOf(cur);
    else if (cur.kind === 'array' || cur.kind === 'vector') {
      cur = cur.elem;
      stride = sizeOf(cur);
    } else if (cur.kind === 'struct') {
      if (idx.kind !== 'const.int') throw new InterpretError('struct GEP index must be a constant');
      const field = Number(idx.value);
      let off = 0;
      for (let f = 0; f <= field; f++) {
        off = Math.ceil(off / alignOf(cur.fields[f]!)) * alignOf(cur.fields[f]!);
        if (f < field) off += sizeOf(cur.fields[f]!);
      }
      constOff += off;
      cur = cur.fields[field]!;
      return;
    } else throw new InterpretError(`GEP indexes into ${typeToString(cur)}`);
    if (idx.kind === 'const.int') constOff += Number(idx.value) * stride;
    else dyn.push({ s: slot(idx), stride, read: indexReader(idx.type) });
  });
  const c = constOff;
  if (dyn.length === 0) return (r) => { r[d] = r[base] + c; };
  if (dyn.length === 1) {
    const { s, stride, read } = dyn[0]!;
    const dynIndex = inst.indices.find((i) => i.kind !== 'const.int')!;
    if (dynIndex.type.kind === 'int' && dynIndex.type.bits === 32) return (r) => { r[d] = r[base] + c + (r[s] | 0) * stride; };
    return (r) => { r[d] = r[base] + c + read(r[s]) * stride; };
  }
  return (r) => {
    let p = r[base] + c;
    for (const x of dyn) p += x.read(r[x.s]) * x.stride;
    r[d] = p;
  };
}

function lowerLoadStore(inst: Extract<Instruction, { op: 'load' | 'store' }>, slot: (v: Value) => number, m: Machine): Op {
  const pt = inst.ptr.type;
  if (pt.kind !== 'ptr') throw new InterpretError('vector-of-pointer memory access is not modeled');
  const p = slot(inst.ptr);
  const valueType = inst.op === 'load' ? inst.type : inst.value.type;
  const codec = codecOf(valueType);
  const size = codec.size;
  const as = pt.addrspace;
  if (as !== 0 && as !== 1 && as !== 3) throw new InterpretError(`memory access through ptr addrspace(${as}) is not modeled`);
  if (inst.op === 'load') {
    const d = slot(inst);
    if (as === 3) return (r) => { const dv = m.ldsAt(r[p], size, false, r[S_THREAD]); r[d] = codec.read(dv, m.off); };
    return (r) => { const dv = m.resolve(r[p], size, false, r[S_THREAD]); r[d] = codec.read(dv, m.off); };
  }
  const v = slot(inst.value);
  if (as === 3) return (r) => { const dv = m.ldsAt(r[p], size, true, r[S_THREAD]); codec.write(dv, m.off, r[v]); };
  return (r) => { const dv = m.resolve(r[p], size, true, r[S_THREAD]); codec.write(dv, m.off, r[v]); };
}

function lowerAtomic(inst: Extract<Instruction, { op: 'atomicrmw' }>, slot: (v: Value) => number, m: Machine): Op {
  const pt = inst.ptr.type;
  const t = inst.value.type;
  if (pt.kind !== 'ptr' || (pt.addrspace !== 0 && pt.addrspace !== 1 && pt.addrspace !== 3)) throw new InterpretError(`atomicrmw through ${typeToString(pt)} is not modeled`);
  const codec = codecOf(t);
  let f: Fn2;
  if (t.kind === 'float') {
    const rnd = floatBinary('fadd', t.name);
    switch (inst.operation) {
      case 'fadd': f = rnd; break;
      case 'fmax': f = (a, b) => (a !== a ? b : b !== b ? a : Math.max(a, b)); break;
      case 'fmin': f = (a, b) => (a !== a ? b : b !== b ? a : Math.min(a, b)); break;
      case 'xchg': f = (_a, b) => b; break;
      default: throw new InterpretError(`atomicrmw ${inst.operation} on ${typeToString(t)}`);
    }
  } else if (t.kind === 'int') {
    const bits = t.bits;
    const lt = icmpFn('slt', t);
    const ult = icmpFn('ult', t);
    switch (inst.operation) {
      case 'xchg': f = (_a, b) => b; break;
      case 'add': case 'sub': case 'and': case 'or': case 'xor': f = intBinary(inst.operation, bits); break;
      case 'max': f = (a, b) => (lt(a, b) ? b : a); break;
      case 'min': f = (a, b) => (lt(a, b) ? a : b); break;
      case 'umax': f = (a, b) => (ult(a, b) ? b : a); break;
      case 'umin': f = (a, b) => (ult(a, b) ? a : b); break;
      default: throw new InterpretError(`atomicrmw ${inst.operation} on ${typeToString(t)}`);
    }
  } else throw new InterpretError(`atomicrmw on ${typeToString(t)}`);
  const p = slot(inst.ptr);
  const v = slot(inst.value);
  const d = slot(inst);
  const size = codec.size;
  const lds = pt.addrspace === 3;
  // Lanes run one at a time, so read-modify-write is atomic; atomics take no part in race detection.
  return (r) => {
    let dv: DataView;
    if (lds) {
      const off = r[p];
      if (!(off >= 0 && off + size <= m.lds.size)) throw new InterpretError(`LDS atomic of ${size} bytes at offset ${off} is outside the ${m.lds.size} bytes of LDS`);
      dv = m.lds.view;
      m.off = off;
    } else dv = m.resolve(r[p], size, true, -1);
    const off = m.off;
    const old = codec.read(dv, off);
    codec.write(dv, off, f(old, r[v]));
    r[d] = old;
  };
}

/**
 * insertelements with a constant index whose only use is the next insertelement of the same
 * block (the chains `Builder.vector` emits): they are folded into the last one of the chain, which
 * builds the vector in one step instead of copying it once per element.
 */
function absorbedInserts(fn: IrFunction): Set<Instruction> {
  const uses = new Map<Value, number>();
  for (const b of fn.blocks) for (const i of b.instructions) for (const v of operandsOf(i)) uses.set(v, (uses.get(v) ?? 0) + 1);
  const out = new Set<Instruction>();
  for (const b of fn.blocks) {
    const here = new Set<Instruction>(b.instructions);
    for (const i of b.instructions) {
      if (i.op !== 'insertelement' || i.index.kind !== 'const.int') continue;
      const prev = i.vector;
      if (prev.kind === 'inst' && prev.op === 'insertelement' && prev.index.kind === 'const.int' && uses.get(prev) === 1 && here.has(prev)) out.add(prev);
    }
  }
  return out;
}

function lowerInsertChain(inst: Extract<Instruction, { op: 'insertelement' }>, slot: (v: Value) => number, absorbed: Set<Instruction>): Op | undefined {
  if (absorbed.has(inst)) return undefined;
  const idx: number[] = [];
  const src: number[] = [];
  let cur = inst;
  for (;;) {
    idx.push(Number((cur.index as { value: bigint }).value));
    src.push(slot(cur.element));
    const prev = cur.vector;
    if (prev.kind === 'inst' && prev.op === 'insertelement' && absorbed.has(prev)) cur = prev;
    else break;
  }
  idx.reverse();
  src.reverse();
  const d = slot(inst);
  const base = slot(cur.vector);
  const n = (inst.type as { count: number }).count;
  const k = idx.length;
  const covers = new Set(idx).size === n;
  if (covers) {
    return (r) => {
      const o = new Array(n);
      for (let j = 0; j < k; j++) o[idx[j]!] = r[src[j]!];
      r[d] = o;
    };
  }
  return (r) => {
    const o = (r[base] as unknown[]).slice();
    for (let j = 0; j < k; j++) o[idx[j]!] = r[src[j]!];
    r[d] = o;
  };
}

function lowerInstruction(inst: Instruction, slot: (v: Value) => number, m: Machine, absorbed: Set<Instruction>): Op | undefined {
  switch (inst.op) {
    case 'add': case 'sub': case 'mul': case 'udiv': case 'sdiv': case 'urem': case 'srem':
    case 'shl': case 'lshr': case 'ashr': case 'and': case 'or': case 'xor': {
      const d = slot(inst);
      const a = slot(inst.lhs);
      const b = slot(inst.rhs);
      const st = inst.type.kind === 'vector' ? inst.type.elem : inst.type;
      if (st.kind !== 'int') throw new InterpretError(`${inst.op} on ${typeToString(inst.type)}`);
      return fastBinary(inst.op, inst.type, d, a, b) ?? lift2(inst.type, intBinary(inst.op, st.bits), d, a, b);
    }
    case 'fadd': case 'fsub': case 'fmul': case 'fdiv': case 'frem': {
      const d = slot(inst);
      const a = slot(inst.lhs);
      const b = slot(inst.rhs);
      const st = inst.type.kind === 'vector' ? inst.type.elem : inst.type;
      if (st.kind !== 'float') throw new InterpretError(`${inst.op} on ${typeToString(inst.type)}`);
      return fastBinary(inst.op, inst.type, d, a, b) ?? lift2(inst.type, floatBinary(inst.op, st.name), d, a, b);
    }
    case 'fneg':
      return lift1(inst.type, (x: number) => -x, slot(inst), slot(inst.operand));
    case 'trunc': case 'zext': case 'sext': case 'fptrunc': case 'fpext': case 'fptoui': case 'fptosi':
    case 'uitofp': case 'sitofp': case 'bitcast': case 'ptrtoint': case 'inttoptr': case 'addrspacecast': {
      const f = castFn(inst.op, inst.value.type, inst.type);
      const d = slot(inst);
      const a = slot(inst.value);
      if (inst.op === 'bitcast') return (r) => { r[d] = f(r[a]); };
      if (inst.op === 'zext' && inst.type.kind !== 'vector') return (r) => { r[d] = r[a]; };
      return lift1(inst.type, f, d, a);
    }
    case 'gep':
      return lowerGep(inst, slot);
    case 'load':
    case 'store':
      return lowerLoadStore(inst, slot, m);
    case 'atomicrmw':
      return lowerAtomic(inst, slot, m);
    case 'icmp': {
      const d = slot(inst);
      const a = slot(inst.lhs);
      const b = slot(inst.rhs);
      const lt = inst.lhs.type.kind === 'vector' ? inst.lhs.type.elem : inst.lhs.type;
      if (lt.kind === 'int' && lt.bits === 32 && inst.type.kind !== 'vector') {
        switch (inst.pred) {
          case 'eq': return (r) => { r[d] = r[a] === r[b] ? 1 : 0; };
          case 'ne': return (r) => { r[d] = r[a] !== r[b] ? 1 : 0; };
          case 'ult': return (r) => { r[d] = r[a] < r[b] ? 1 : 0; };
          case 'ule': return (r) => { r[d] = r[a] <= r[b] ? 1 : 0; };
          case 'ugt': return (r) => { r[d] = r[a] > r[b] ? 1 : 0; };
          case 'uge': return (r) => { r[d] = r[a] >= r[b] ? 1 : 0; };
          case 'slt': return (r) => { r[d] = (r[a] | 0) < (r[b] | 0) ? 1 : 0; };
          case 'sle': return (r) => { r[d] = (r[a] | 0) <= (r[b] | 0) ? 1 : 0; };
          case 'sgt': return (r) => { r[d] = (r[a] | 0) > (r[b] | 0) ? 1 : 0; };
          case 'sge': return (r) => { r[d] = (r[a] | 0) >= (r[b] | 0) ? 1 : 0; };
        }
      }
      return lift2(inst.type, icmpFn(inst.pred, lt), d, a, b);
    }
    case 'fcmp':
      return lift2(inst.type, fcmpFn(inst.pred), slot(inst), slot(inst.lhs), slot(inst.rhs));
    case 'select': {
      const d = slot(inst);
      const c = slot(inst.cond);
      const t = slot(inst.ifTrue);
      const f = slot(inst.ifFalse);
      if (inst.cond.type.kind === 'vector') {
        const n = inst.cond.type.count;
        return (r) => {
          const cv = r[c];
          const tv = r[t];
          const fv = r[f];
          const o = new Array(n);
          for (let i = 0; i < n; i++) o[i] = cv[i] ? tv[i] : fv[i];
          r[d] = o;
        };
      }
      return (r) => { r[d] = r[c] ? r[t] : r[f]; };
    }
    case 'extractelement': {
      const d = slot(inst);
      const v = slot(inst.vector);
      const n = (inst.vector.type as { count: number }).count;
      if (inst.index.kind === 'const.int') {
        const i = Number(inst.index.value);
        return (r) => { r[d] = r[v][i]; };
      }
      const ix = slot(inst.index);
      const read = indexReader(inst.index.type);
      return (r) => {
        const i = read(r[ix]);
        if (!(i >= 0 && i < n)) throw new InterpretError(`extractelement index ${i} out of range 0..${n - 1}`);
        r[d] = r[v][i];
      };
    }
    case 'insertelement': {
      if (inst.index.kind === 'const.int') return lowerInsertChain(inst, slot, absorbed);
      const d = slot(inst);
      const v = slot(inst.vector);
      const e = slot(inst.element);
      const n = (inst.vector.type as { count: number }).count;
      const ix = slot(inst.index);
      const read = indexReader(inst.index.type);
      return (r) => {
        const i = read(r[ix]);
        if (!(i >= 0 && i < n)) throw new InterpretError(`insertelement index ${i} out of range 0..${n - 1}`);
        const o = (r[v] as unknown[]).slice();
        o[i] = r[e];
        r[d] = o;
      };
    }
    case 'shufflevector': {
      const d = slot(inst);
      const a = slot(inst.a);
      const b = slot(inst.b);
      const n = (inst.a.type as { count: number }).count;
      const mask = inst.mask;
      const zero = zeroOf((inst.type as { elem: Type }).elem);
      return (r) => {
        const x = r[a];
        const y = r[b];
        r[d] = mask.map((k) => (k < 0 ? zero : k < n ? x[k] : y[k - n]));
      };
    }
    case 'extractvalue': {
      const d = slot(inst);
      const a = slot(inst.aggregate);
      const idx = inst.indices;
      if (idx.length === 1) {
        // The common case (a field of an MMA result struct): no loop.
        const i = idx[0]!;
        return (r) => { r[d] = r[a][i]; };
      }
      return (r) => {
        let x = r[a];
        for (const i of idx) x = x[i];
        r[d] = x;
      };
    }
    case 'insertvalue': {
      const d = slot(inst);
      const a = slot(inst.aggregate);
      const e = slot(inst.element);
      const idx = inst.indices;
      const put = (agg: unknown[], k: number, v: unknown): unknown[] => {
        const o = agg.slice();
        o[idx[k]!] = k === idx.length - 1 ? v : put(agg[idx[k]!] as unknown[], k + 1, v);
        return o;
      };
      return (r) => { r[d] = put(r[a], 0, r[e]); };
    }
    case 'fence':
      // Lanes of a workgroup only meet at barriers, and memory is sequentially consistent here.
      return undefined;
    default:
      throw new InterpretError(`instruction ${inst.op} is not modeled`);
  }
}
