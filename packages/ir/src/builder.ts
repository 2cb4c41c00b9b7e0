/**
 * The instruction builder. It appends to one insertion block at a time, checks operand types
 * as it goes (a mistake is a TypeError naming the instruction, never bad text for llc), folds
 * integer arithmetic on two constants, and offers structured control flow (`forLoop`,
 * `ifThen`, `ifThenElse`) so kernels read like their algorithm.
 */
import { constFloat, constInt, splat } from './constants.js';
import type {
  AtomicOrdering, AtomicRmwOp, Block, CastOp, Constant, FcmpPred, FloatBinaryOp, IcmpPred, InlineAsm, InstFlag,
  Instruction, IntBinaryOp, IrFunction, PhiInst, Value,
} from './ir.js';
import { isTerminator } from './ir.js';
import { mangleType } from './intrinsics.js';
import type { Module } from './module.js';
import { sigToString } from './module.js';
import {
  alignOf, f32, floatBits, i1, i32, i64, isFloatLike, isIntLike, scalarOf, typeEquals, typeToString, vec, voidT,
} from './types.js';
import type { FunctionType, IntType, Type } from './types.js';

/** A value, or a JS number/bigint that becomes a constant of the other operand's type. */
export type Operand = Value | number | bigint;

/** Options for {@link Builder.forLoop}. */
export interface ForLoopOptions {
  /** First induction value (inclusive). A number becomes an `i32` constant. */
  readonly from: Operand;
  /** Bound (exclusive): the body runs while `iv < to` (signed unless `unsigned`). */
  readonly to: Operand;
  /** Positive step; default 1. */
  readonly step?: Operand;
  /** Initial loop-carried values; the body returns their next values in the same order. */
  readonly carried?: readonly Value[];
  /** Name hint for the blocks and the induction variable. */
  readonly name?: string;
  readonly unsigned?: boolean;
}

const intBinary = new Set<string>(['add', 'sub', 'mul', 'udiv', 'sdiv', 'urem', 'srem', 'shl', 'lshr', 'ashr', 'and', 'or', 'xor']);

function describe(v: Value): string {
  return `${v.kind === 'inst' ? `%${v.name ?? v.op}` : v.kind === 'arg' ? `%${v.name}` : v.kind} : ${typeToString(v.type)}`;
}

/** Appends instructions to a function. One builder per function; it holds no global state. */
export class Builder {
  /** The block instructions are appended to. */
  private current: Block;

  constructor(
    readonly module: Module,
    readonly fn: IrFunction,
    block?: Block,
  ) {
    if (!module.functions.includes(fn)) throw new Error(`@${fn.name} does not belong to this module`);
    this.current = block ?? fn.blocks[fn.blocks.length - 1] ?? this.newBlock('entry');
  }

  /** The current insertion block. */
  get block(): Block {
    return this.current;
  }

  /** The function's arguments by name. */
  arg(name: string): Value {
    const a = this.fn.args.find((x) => x.name === name);
    if (!a) throw new Error(`@${this.fn.name} has no parameter %${name} (has ${this.fn.args.map((x) => x.name).join(', ') || 'none'})`);
    return a;
  }

  /** Creates an empty block at the end of the function (does not move the insertion point). */
  newBlock(name: string): Block {
    const b: Block = { kind: 'block', name, parent: this.fn, instructions: [] };
    this.fn.blocks.push(b);
    return b;
  }

  /** Moves the insertion point to the end of `block`. */
  setBlock(block: Block): void {
    if (block.parent !== this.fn) throw new Error(`block ${block.name} belongs to @${block.parent.name}, not @${this.fn.name}`);
    this.current = block;
  }

  /** True when the current block already ends in a terminator. */
  get terminated(): boolean {
    const last = this.current.instructions[this.current.instructions.length - 1];
    return last !== undefined && isTerminator(last);
  }

  private emit<T extends Instruction>(inst: T): T {
    if (this.terminated) throw new Error(`cannot append ${inst.op} to block ${this.current.name} of @${this.fn.name}: it already ends in a terminator`);
    this.current.instructions.push(inst);
    return inst;
  }

  private operand(x: Operand, type: Type, what: string): Value {
    if (typeof x !== 'number' && typeof x !== 'bigint') return x;
    const s = scalarOf(type);
    let scalar: Constant;
    if (s.kind === 'int') scalar = constInt(s, x);
    else if (s.kind === 'float') scalar = constFloat(s, Number(x));
    else throw new TypeError(`${what}: a number cannot stand for a ${typeToString(type)} operand`);
    // Against a vector operand a number means the same value in every element.
    return type.kind === 'vector' ? splat(type, scalar) : scalar;
  }

  /** The type of the first non-number operand, else i32. */
  private pairType(a: Operand, b: Operand): Type {
    if (typeof a === 'object') return a.type;
    if (typeof b === 'object') return b.type;
    return i32;
  }

  private sameType(what: string, a: Value, b: Value): void {
    if (!typeEquals(a.type, b.type)) throw new TypeError(`${what}: operand types differ (${describe(a)} vs ${describe(b)})`);
  }

  /** Both operands of a binary op as Values of one type (numbers take the other operand's type). */
  private operandPair(what: string, a: Operand, b: Operand): [Value, Value] {
    const t = this.pairType(a, b);
    const lhs = this.operand(a, t, what);
    const rhs = this.operand(b, t, what);
    this.sameType(what, lhs, rhs);
    return [lhs, rhs];
  }

  // ------------------------------------------------------------ constants

  /** An `i32` constant. */
  i32(v: number | bigint): Value {
    return constInt(i32, v);
  }

  /** An `i64` constant. */
  i64(v: number | bigint): Value {
    return constInt(i64, v);
  }

  /** A `float` constant (rounded to single precision). */
  f32(v: number): Value {
    return constFloat(f32, v);
  }

  // ------------------------------------------------------------ arithmetic

  /** Any integer binary op; folds when both operands are constants. */
  intOp(op: IntBinaryOp, a: Operand, b: Operand, opts: { flags?: readonly InstFlag[]; name?: string } = {}): Value {
    const [lhs, rhs] = this.operandPair(op, a, b);
    if (!isIntLike(lhs.type)) throw new TypeError(`${op} needs integer operands, got ${describe(lhs)}`);
    const folded = foldInt(op, lhs, rhs);
    if (folded) return folded;
    return this.emit({ kind: 'inst', op, type: lhs.type, name: opts.name, lhs, rhs, flags: [...(opts.flags ?? [])] });
  }

  add(a: Operand, b: Operand, name?: string): Value { return this.intOp('add', a, b, { name }); }
  sub(a: Operand, b: Operand, name?: string): Value { return this.intOp('sub', a, b, { name }); }
  mul(a: Operand, b: Operand, name?: string): Value { return this.intOp('mul', a, b, { name }); }
  udiv(a: Operand, b: Operand, name?: string): Value { return this.intOp('udiv', a, b, { name }); }
  sdiv(a: Operand, b: Operand, name?: string): Value { return this.intOp('sdiv', a, b, { name }); }
  urem(a: Operand, b: Operand, name?: string): Value { return this.intOp('urem', a, b, { name }); }
  srem(a: Operand, b: Operand, name?: string): Value { return this.intOp('srem', a, b, { name }); }
  shl(a: Operand, b: Operand, name?: string): Value { return this.intOp('shl', a, b, { name }); }
  lshr(a: Operand, b: Operand, name?: string): Value { return this.intOp('lshr', a, b, { name }); }
  ashr(a: Operand, b: Operand, name?: string): Value { return this.intOp('ashr', a, b, { name }); }
  and(a: Operand, b: Operand, name?: string): Value { return this.intOp('and', a, b, { name }); }
  or(a: Operand, b: Operand, name?: string): Value { return this.intOp('or', a, b, { name }); }
  xor(a: Operand, b: Operand, name?: string): Value { return this.intOp('xor', a, b, { name }); }

  /** Any float binary op (never folded: rounding stays LLVM's business). */
  floatOp(op: FloatBinaryOp, a: Operand, b: Operand, opts: { flags?: readonly InstFlag[]; name?: string } = {}): Value {
    const [lhs, rhs] = this.operandPair(op, a, b);
    if (!isFloatLike(lhs.type)) throw new TypeError(`${op} needs float operands, got ${describe(lhs)}`);
    return this.emit({ kind: 'inst', op, type: lhs.type, name: opts.name, lhs, rhs, flags: [...(opts.flags ?? [])] });
  }

  fadd(a: Operand, b: Operand, name?: string): Value { return this.floatOp('fadd', a, b, { name }); }
  fsub(a: Operand, b: Operand, name?: string): Value { return this.floatOp('fsub', a, b, { name }); }
  fmul(a: Operand, b: Operand, name?: string): Value { return this.floatOp('fmul', a, b, { name }); }
  fdiv(a: Operand, b: Operand, name?: string): Value { return this.floatOp('fdiv', a, b, { name }); }
  frem(a: Operand, b: Operand, name?: string): Value { return this.floatOp('frem', a, b, { name }); }

  fneg(a: Value, name?: string): Value {
    if (!isFloatLike(a.type)) throw new TypeError(`fneg needs a float operand, got ${describe(a)}`);
    return this.emit({ kind: 'inst', op: 'fneg', type: a.type, name, operand: a, flags: [] });
  }

  /** `llvm.fma.*`: a·b + c with one rounding (scalar or vector floats). */
  fma(a: Value, b: Operand, c: Operand, name?: string): Value {
    if (!isFloatLike(a.type)) throw new TypeError(`fma needs float operands, got ${describe(a)}`);
    const bv = this.operand(b, a.type, 'fma');
    const cv = this.operand(c, a.type, 'fma');
    this.sameType('fma', a, bv);
    this.sameType('fma', a, cv);
    return this.intrinsic(`llvm.fma.${mangleType(a.type)}`, a.type, [a, bv, cv], { name });
  }

  // ------------------------------------------------------------ casts

  /** Any cast; checks the source/destination kinds and widths LLVM requires. Folds trunc/zext/sext of constants. */
  cast(op: CastOp, value: Value, to: Type, name?: string): Value {
    checkCast(op, value.type, to);
    if (value.kind === 'const.int' && to.kind === 'int') {
      if (op === 'trunc' || op === 'sext') return constInt(to, value.value);
      if (op === 'zext') return constInt(to, BigInt.asUintN(value.type.bits, value.value));
    }
    return this.emit({ kind: 'inst', op, type: to, name, value });
  }

  trunc(v: Value, to: Type, name?: string): Value { return this.cast('trunc', v, to, name); }
  zext(v: Value, to: Type, name?: string): Value { return this.cast('zext', v, to, name); }
  sext(v: Value, to: Type, name?: string): Value { return this.cast('sext', v, to, name); }
  fptrunc(v: Value, to: Type, name?: string): Value { return this.cast('fptrunc', v, to, name); }
  fpext(v: Value, to: Type, name?: string): Value { return this.cast('fpext', v, to, name); }
  fptoui(v: Value, to: Type, name?: string): Value { return this.cast('fptoui', v, to, name); }
  fptosi(v: Value, to: Type, name?: string): Value { return this.cast('fptosi', v, to, name); }
  uitofp(v: Value, to: Type, name?: string): Value { return this.cast('uitofp', v, to, name); }
  sitofp(v: Value, to: Type, name?: string): Value { return this.cast('sitofp', v, to, name); }
  bitcast(v: Value, to: Type, name?: string): Value { return this.cast('bitcast', v, to, name); }
  ptrtoint(v: Value, to: Type, name?: string): Value { return this.cast('ptrtoint', v, to, name); }
  inttoptr(v: Value, to: Type, name?: string): Value { return this.cast('inttoptr', v, to, name); }
  addrspacecast(v: Value, to: Type, name?: string): Value { return this.cast('addrspacecast', v, to, name); }

  // ------------------------------------------------------------ memory

  /** `getelementptr [inbounds] sourceType, base, indices...`; number indices become i32 constants. */
  gep(sourceType: Type, base: Value, indices: readonly Operand[], opts: { inbounds?: boolean; name?: string } = {}): Value {
    if (base.type.kind !== 'ptr') throw new TypeError(`gep base must be a pointer, got ${describe(base)}`);
    if (indices.length === 0) throw new TypeError('gep needs at least one index');
    const idx = indices.map((x) => this.operand(x, i32, 'gep index'));
    let t: Type = sourceType;
    idx.forEach((v, n) => {
      if (v.type.kind !== 'int') throw new TypeError(`gep index ${n} must be an integer, got ${describe(v)}`);
      if (n === 0) return;
      if (t.kind === 'array' || t.kind === 'vector') t = t.elem;
      else if (t.kind === 'struct') {
        if (v.kind !== 'const.int') throw new TypeError('gep struct field index must be a constant');
        const f = t.fields[Number(v.value)];
        if (!f) throw new RangeError(`gep struct field ${v.value} out of range for ${typeToString(t)}`);
        t = f;
      } else throw new TypeError(`gep index ${n} steps into non-aggregate ${typeToString(t)}`);
    });
    return this.emit({ kind: 'inst', op: 'gep', type: base.type, name: opts.name, sourceType, base, indices: idx, inbounds: opts.inbounds ?? false });
  }

  /** `load type, ptr, align N` (default: the type's natural alignment). */
  load(type: Type, ptrValue: Value, opts: { align?: number; volatile?: boolean; name?: string } = {}): Value {
    if (ptrValue.type.kind !== 'ptr') throw new TypeError(`load needs a pointer, got ${describe(ptrValue)}`);
    const align = checkAlign(opts.align ?? alignOf(type));
    return this.emit({ kind: 'inst', op: 'load', type, name: opts.name, ptr: ptrValue, align, volatile: opts.volatile ?? false });
  }

  /** `store value, ptr, align N` (default: natural alignment). */
  store(value: Value, ptrValue: Value, opts: { align?: number; volatile?: boolean } = {}): void {
    if (ptrValue.type.kind !== 'ptr') throw new TypeError(`store needs a pointer, got ${describe(ptrValue)}`);
    const align = checkAlign(opts.align ?? alignOf(value.type));
    this.emit({ kind: 'inst', op: 'store', type: voidT, name: undefined, value, ptr: ptrValue, align, volatile: opts.volatile ?? false });
  }

  /** `atomicrmw` (e.g. fadd into a workspace). */
  atomicRmw(operation: AtomicRmwOp, ptrValue: Value, value: Value, opts: { ordering?: AtomicOrdering; syncscope?: string; align?: number; name?: string } = {}): Value {
    if (ptrValue.type.kind !== 'ptr') throw new TypeError(`atomicrmw needs a pointer, got ${describe(ptrValue)}`);
    return this.emit({
      kind: 'inst', op: 'atomicrmw', type: value.type, name: opts.name, operation, ptr: ptrValue, value,
      ordering: opts.ordering ?? 'monotonic', syncscope: opts.syncscope, align: checkAlign(opts.align ?? alignOf(value.type)),
    });
  }

  /** `fence [syncscope("s")] ordering`. */
  fence(ordering: AtomicOrdering, syncscope?: string): void {
    if (ordering === 'monotonic') throw new TypeError('fence ordering must be acquire, release, acq_rel or seq_cst');
    this.emit({ kind: 'inst', op: 'fence', type: voidT, name: undefined, ordering, syncscope });
  }

  // ------------------------------------------------------------ compare / select

  icmp(pred: IcmpPred, a: Operand, b: Operand, name?: string): Value {
    const [lhs, rhs] = this.operandPair('icmp', a, b);
    const s = scalarOf(lhs.type);
    if (s.kind !== 'int' && s.kind !== 'ptr') throw new TypeError(`icmp needs integer or pointer operands, got ${describe(lhs)}`);
    if (lhs.kind === 'const.int' && rhs.kind === 'const.int') return constInt(i1, evalIcmp(pred, lhs.value, rhs.value, lhs.type.bits) ? -1n : 0n);
    return this.emit({ kind: 'inst', op: 'icmp', type: boolTypeFor(lhs.type), name, pred, lhs, rhs });
  }

  fcmp(pred: FcmpPred, a: Operand, b: Operand, name?: string): Value {
    const [lhs, rhs] = this.operandPair('fcmp', a, b);
    if (!isFloatLike(lhs.type)) throw new TypeError(`fcmp needs float operands, got ${describe(lhs)}`);
    return this.emit({ kind: 'inst', op: 'fcmp', type: boolTypeFor(lhs.type), name, pred, lhs, rhs });
  }

  /** `select cond, a, b`; a constant condition picks its operand directly. */
  select(cond: Value, a: Operand, b: Operand, name?: string): Value {
    const [ifTrue, ifFalse] = this.operandPair('select', a, b);
    if (!typeEquals(cond.type, i1) && !(cond.type.kind === 'vector' && typeEquals(cond.type, boolTypeFor(ifTrue.type)))) throw new TypeError(`select condition must be i1, got ${describe(cond)}`);
    if (cond.kind === 'const.int') return cond.value !== 0n ? ifTrue : ifFalse;
    return this.emit({ kind: 'inst', op: 'select', type: ifTrue.type, name, cond, ifTrue, ifFalse });
  }

  /** Unsigned minimum / maximum and signed variants, through icmp + select. */
  umin(a: Operand, b: Operand, name?: string): Value { return this.minmax('ult', a, b, name); }
  umax(a: Operand, b: Operand, name?: string): Value { return this.minmax('ugt', a, b, name); }
  smin(a: Operand, b: Operand, name?: string): Value { return this.minmax('slt', a, b, name); }
  smax(a: Operand, b: Operand, name?: string): Value { return this.minmax('sgt', a, b, name); }
  private minmax(pred: IcmpPred, a: Operand, b: Operand, name?: string): Value {
    const t = this.pairType(a, b);
    const x = this.operand(a, t, pred);
    const y = this.operand(b, t, pred);
    return this.select(this.icmp(pred, x, y), x, y, name);
  }

  // ------------------------------------------------------------ phi / control flow

  /** A phi at the current position (phis must come first in their block). */
  phi(type: Type, incoming: readonly { value: Operand; block: Block }[] = [], name?: string): PhiInst {
    const nonPhi = this.current.instructions.find((i) => i.op !== 'phi');
    if (nonPhi) throw new Error(`phi must precede other instructions in block ${this.current.name}`);
    const p: PhiInst = this.emit({ kind: 'inst', op: 'phi', type, name, incoming: [] });
    for (const x of incoming) this.addIncoming(p, x.value, x.block);
    return p;
  }

  /** Adds an incoming edge to a phi. */
  addIncoming(p: PhiInst, value: Operand, block: Block): void {
    const v = this.operand(value, p.type, 'phi');
    if (!typeEquals(v.type, p.type)) throw new TypeError(`phi of ${typeToString(p.type)} got incoming ${describe(v)}`);
    p.incoming.push({ value: v, block });
  }

  br(dest: Block): void {
    this.emit({ kind: 'inst', op: 'br', type: voidT, name: undefined, dest });
  }

  condBr(cond: Value, ifTrue: Block, ifFalse: Block): void {
    if (!typeEquals(cond.type, i1)) throw new TypeError(`br condition must be i1, got ${describe(cond)}`);
    this.emit({ kind: 'inst', op: 'condbr', type: voidT, name: undefined, cond, ifTrue, ifFalse });
  }

  /** `ret void` or `ret value`; checked against the function's return type. */
  ret(value?: Value): void {
    const want = this.fn.sig.ret;
    if (value === undefined ? want.kind !== 'void' : !typeEquals(value.type, want)) throw new TypeError(`@${this.fn.name} returns ${typeToString(want)}, got ${value ? describe(value) : 'void'}`);
    this.emit({ kind: 'inst', op: 'ret', type: voidT, name: undefined, value });
  }

  unreachable(): void {
    this.emit({ kind: 'inst', op: 'unreachable', type: voidT, name: undefined });
  }

  // ------------------------------------------------------------ calls

  /** Calls a function or inline asm; argument types must match its signature. Number args are matched to the parameter types. */
  call(callee: IrFunction | InlineAsm, args: readonly Operand[], opts: { name?: string; attributes?: readonly string[] } = {}): Value {
    const sig = callee.sig;
    const who = callee.kind === 'asm' ? `asm "${callee.asm}"` : `@${callee.name}`;
    if (args.length !== sig.params.length) throw new TypeError(`${who} takes ${sig.params.length} arguments (${sigToString(sig)}), got ${args.length}`);
    const vals = args.map((a, n) => {
      const v = this.operand(a, sig.params[n]!, `${who} argument ${n}`);
      if (!typeEquals(v.type, sig.params[n]!)) throw new TypeError(`${who} argument ${n} must be ${typeToString(sig.params[n]!)}, got ${describe(v)}`);
      return v;
    });
    return this.emit({ kind: 'inst', op: 'call', type: sig.ret, name: opts.name, callee, args: vals, attributes: [...(opts.attributes ?? [])] });
  }

  /**
   * Calls an intrinsic by name, declaring it on first use (interned by name in the module).
   * The parameter types are the argument types; number arguments are i32 constants.
   */
  intrinsic(name: string, ret: Type, args: readonly Operand[], opts: { name?: string; attributes?: readonly string[] } = {}): Value {
    if (!name.startsWith('llvm.')) throw new Error(`intrinsic names start with "llvm.", got ${JSON.stringify(name)}`);
    const vals = args.map((a) => this.operand(a, i32, `${name} argument`));
    const decl = this.module.declare(name, ret, vals.map((v) => v.type));
    return this.call(decl, vals, opts);
  }

  /** Inline assembly callee (pass it to {@link call}). */
  inlineAsm(asm: string, constraints: string, sig: FunctionType, opts: { sideEffect?: boolean } = {}): InlineAsm {
    return { kind: 'asm', sig, asm, constraints, sideEffect: opts.sideEffect ?? true };
  }

  // ------------------------------------------------------------ vectors / aggregates

  extractElement(vector: Value, index: Operand, name?: string): Value {
    if (vector.type.kind !== 'vector') throw new TypeError(`extractelement needs a vector, got ${describe(vector)}`);
    const idx = this.operand(index, i32, 'extractelement index');
    if (idx.kind === 'const.int' && (idx.value < 0n || idx.value >= BigInt(vector.type.count))) throw new RangeError(`extractelement index ${idx.value} out of range for ${typeToString(vector.type)}`);
    return this.emit({ kind: 'inst', op: 'extractelement', type: vector.type.elem, name, vector, index: idx });
  }

  insertElement(vector: Value, element: Operand, index: Operand, name?: string): Value {
    if (vector.type.kind !== 'vector') throw new TypeError(`insertelement needs a vector, got ${describe(vector)}`);
    const el = this.operand(element, vector.type.elem, 'insertelement');
    if (!typeEquals(el.type, vector.type.elem)) throw new TypeError(`insertelement of ${describe(el)} into ${typeToString(vector.type)}`);
    const idx = this.operand(index, i32, 'insertelement index');
    if (idx.kind === 'const.int' && (idx.value < 0n || idx.value >= BigInt(vector.type.count))) throw new RangeError(`insertelement index ${idx.value} out of range for ${typeToString(vector.type)}`);
    return this.emit({ kind: 'inst', op: 'insertelement', type: vector.type, name, vector, element: el, index: idx });
  }

  /** `shufflevector a, b, mask` (mask entries index `a ++ b`; -1 = poison). */
  shuffleVector(a: Value, b: Value, mask: readonly number[], name?: string): Value {
    if (a.type.kind !== 'vector') throw new TypeError(`shufflevector needs vectors, got ${describe(a)}`);
    this.sameType('shufflevector', a, b);
    const n = a.type.count;
    for (const m of mask) if (!Number.isInteger(m) || m < -1 || m >= 2 * n) throw new RangeError(`shufflevector mask entry ${m} out of range -1..${2 * n - 1}`);
    if (mask.length === 0) throw new RangeError('shufflevector mask must not be empty');
    return this.emit({ kind: 'inst', op: 'shufflevector', type: vec(mask.length, a.type.elem), name, a, b, mask: [...mask] });
  }

  /** Builds a vector from scalars of one type (insertelement chain from poison). */
  vector(elems: readonly Value[], name?: string): Value {
    const first = elems[0];
    if (!first) throw new RangeError('vector() needs at least one element');
    let v: Value = { kind: 'const.poison', type: vec(elems.length, first.type) };
    elems.forEach((e, n) => {
      v = this.insertElement(v, e, n, n === elems.length - 1 ? name : undefined);
    });
    return v;
  }

  /** Splits a vector into its scalars (one extractelement each). */
  elements(v: Value): Value[] {
    if (v.type.kind !== 'vector') throw new TypeError(`elements() needs a vector, got ${describe(v)}`);
    return Array.from({ length: v.type.count }, (_, n) => this.extractElement(v, n));
  }

  extractValue(aggregate: Value, indices: readonly number[], name?: string): Value {
    const type = aggregateMember(aggregate.type, indices);
    return this.emit({ kind: 'inst', op: 'extractvalue', type, name, aggregate, indices: [...indices] });
  }

  insertValue(aggregate: Value, element: Value, indices: readonly number[], name?: string): Value {
    const type = aggregateMember(aggregate.type, indices);
    if (!typeEquals(type, element.type)) throw new TypeError(`insertvalue of ${describe(element)} where ${typeToString(type)} is expected`);
    return this.emit({ kind: 'inst', op: 'insertvalue', type: aggregate.type, name, aggregate, element, indices: [...indices] });
  }

  // ------------------------------------------------------------ structured control flow

  /**
   * A counted loop `for (iv = from; iv < to; iv += step)` with loop-carried values.
   * The body gets the induction variable and the current carried values and returns their
   * next values; `forLoop` returns the carried values after the loop (the initial ones when
   * the loop runs zero times). The body may create blocks; the insertion point continues after the loop.
   */
  forLoop(o: ForLoopOptions, body: (iv: Value, carried: Value[]) => readonly Value[] | void): Value[] {
    const hint = o.name ?? 'loop';
    const ivType = typeof o.from === 'object' ? o.from.type : typeof o.to === 'object' ? o.to.type : i32;
    if (ivType.kind !== 'int') throw new TypeError(`forLoop bounds must be integers, got ${typeToString(ivType)}`);
    const from = this.operand(o.from, ivType, 'forLoop from');
    const to = this.operand(o.to, ivType, 'forLoop to');
    const step = this.operand(o.step ?? 1, ivType, 'forLoop step');
    this.sameType('forLoop bounds', from, to);
    this.sameType('forLoop step', from, step);
    if (step.kind === 'const.int' && step.value <= 0n) throw new RangeError(`forLoop step must be positive, got ${step.value}`);
    const carriedInit = o.carried ?? [];

    const pre = this.current;
    const header = this.newBlock(`${hint}.header`);
    const bodyBlock = this.newBlock(`${hint}.body`);
    const exit = this.newBlock(`${hint}.exit`);
    this.br(header);

    this.setBlock(header);
    const iv = this.phi(ivType, [{ value: from, block: pre }], `${hint}.iv`);
    const phis = carriedInit.map((c, n) => this.phi(c.type, [{ value: c, block: pre }], `${hint}.c${n}`));
    const cond = this.icmp(o.unsigned ? 'ult' : 'slt', iv, to, `${hint}.cond`);
    this.condBr(cond, bodyBlock, exit);

    this.setBlock(bodyBlock);
    const next = body(iv, [...phis]) ?? [];
    if (next.length !== phis.length) throw new Error(`forLoop "${hint}" body returned ${next.length} values for ${phis.length} carried values`);
    const latch = this.current;
    if (this.terminated) throw new Error(`forLoop "${hint}" body must leave its last block open (it ended in a terminator)`);
    const ivNext = this.add(iv, step, `${hint}.next`);
    this.br(header);
    this.addIncoming(iv, ivNext, latch);
    next.forEach((v, n) => this.addIncoming(phis[n]!, v, latch));

    this.setBlock(exit);
    return [...phis];
  }

  /** `if (cond) { then() }`; the insertion point continues after the if. */
  ifThen(cond: Value, then: () => void, name = 'if'): void {
    const thenBlock = this.newBlock(`${name}.then`);
    const merge = this.newBlock(`${name}.end`);
    this.condBr(cond, thenBlock, merge);
    this.setBlock(thenBlock);
    then();
    if (!this.terminated) this.br(merge);
    this.setBlock(merge);
  }

  /**
   * `cond ? then() : otherwise()` where each side returns values of the same types; returns
   * the merged values (phis). Either side may create blocks.
   */
  ifThenElse(cond: Value, then: () => readonly Value[], otherwise: () => readonly Value[], name = 'if'): Value[] {
    const thenBlock = this.newBlock(`${name}.then`);
    const elseBlock = this.newBlock(`${name}.else`);
    const merge = this.newBlock(`${name}.end`);
    this.condBr(cond, thenBlock, elseBlock);
    this.setBlock(thenBlock);
    const tv = then();
    const tEnd = this.current;
    this.br(merge);
    this.setBlock(elseBlock);
    const ev = otherwise();
    const eEnd = this.current;
    this.br(merge);
    if (tv.length !== ev.length) throw new Error(`ifThenElse "${name}": then returned ${tv.length} values, else ${ev.length}`);
    this.setBlock(merge);
    return tv.map((t, n) => {
      const e = ev[n]!;
      if (!typeEquals(t.type, e.type)) throw new TypeError(`ifThenElse "${name}" value ${n}: ${describe(t)} vs ${describe(e)}`);
      return this.phi(t.type, [{ value: t, block: tEnd }, { value: e, block: eEnd }], `${name}.v${n}`);
    });
  }
}

// ---------------------------------------------------------------- helpers

function checkAlign(a: number): number {
  if (!Number.isInteger(a) || a < 1 || (a & (a - 1)) !== 0) throw new RangeError(`alignment must be a power of two, got ${a}`);
  return a;
}

function boolTypeFor(t: Type): Type {
  return t.kind === 'vector' ? vec(t.count, i1) : i1;
}

function aggregateMember(t: Type, indices: readonly number[]): Type {
  if (indices.length === 0) throw new TypeError('extractvalue/insertvalue need at least one index');
  let cur = t;
  for (const i of indices) {
    if (cur.kind === 'struct') {
      const f = cur.fields[i];
      if (!f) throw new RangeError(`field ${i} out of range for ${typeToString(cur)}`);
      cur = f;
    } else if (cur.kind === 'array') {
      if (i < 0 || i >= cur.count) throw new RangeError(`index ${i} out of range for ${typeToString(cur)}`);
      cur = cur.elem;
    } else throw new TypeError(`cannot index into ${typeToString(cur)}`);
  }
  return cur;
}

function bitWidth(t: Type): number {
  switch (t.kind) {
    case 'int': return t.bits;
    case 'float': return floatBits(t.name);
    case 'vector': return bitWidth(t.elem) * t.count;
    default: return -1;
  }
}

function checkCast(op: CastOp, from: Type, to: Type): void {
  const bad = (why: string): never => {
    throw new TypeError(`${op} from ${typeToString(from)} to ${typeToString(to)}: ${why}`);
  };
  if (op !== 'bitcast') {
    const fv = from.kind === 'vector' ? from.count : 0;
    const tv = to.kind === 'vector' ? to.count : 0;
    if (fv !== tv) bad('vector lengths must match');
  }
  const fs = scalarOf(from);
  const ts = scalarOf(to);
  switch (op) {
    case 'trunc': if (fs.kind !== 'int' || ts.kind !== 'int' || fs.bits <= ts.bits) bad('needs a wider integer source'); break;
    case 'zext': case 'sext': if (fs.kind !== 'int' || ts.kind !== 'int' || fs.bits >= ts.bits) bad('needs a narrower integer source'); break;
    case 'fptrunc': if (fs.kind !== 'float' || ts.kind !== 'float' || floatBits(fs.name) <= floatBits(ts.name)) bad('needs a wider float source'); break;
    case 'fpext': if (fs.kind !== 'float' || ts.kind !== 'float' || floatBits(fs.name) >= floatBits(ts.name)) bad('needs a narrower float source'); break;
    case 'fptoui': case 'fptosi': if (fs.kind !== 'float' || ts.kind !== 'int') bad('needs float to integer'); break;
    case 'uitofp': case 'sitofp': if (fs.kind !== 'int' || ts.kind !== 'float') bad('needs integer to float'); break;
    case 'ptrtoint': if (fs.kind !== 'ptr' || ts.kind !== 'int') bad('needs pointer to integer'); break;
    case 'inttoptr': if (fs.kind !== 'int' || ts.kind !== 'ptr') bad('needs integer to pointer'); break;
    case 'addrspacecast': if (fs.kind !== 'ptr' || ts.kind !== 'ptr' || fs.addrspace === ts.addrspace) bad('needs pointers in different address spaces'); break;
    case 'bitcast': {
      if (fs.kind === 'ptr' || ts.kind === 'ptr') bad('pointers are opaque; use addrspacecast/ptrtoint');
      const a = bitWidth(from);
      if (a < 0 || a !== bitWidth(to)) bad('sizes must match');
      break;
    }
  }
}

function evalIcmp(pred: IcmpPred, a: bigint, b: bigint, bits: number): boolean {
  const ua = BigInt.asUintN(bits, a);
  const ub = BigInt.asUintN(bits, b);
  switch (pred) {
    case 'eq': return a === b;
    case 'ne': return a !== b;
    case 'slt': return a < b;
    case 'sle': return a <= b;
    case 'sgt': return a > b;
    case 'sge': return a >= b;
    case 'ult': return ua < ub;
    case 'ule': return ua <= ub;
    case 'ugt': return ua > ub;
    case 'uge': return ua >= ub;
  }
}

/** Folds an integer op on two scalar constants (undefined when not foldable, e.g. division by zero). */
function foldInt(op: IntBinaryOp, lhs: Value, rhs: Value): Constant | undefined {
  if (lhs.kind !== 'const.int' || rhs.kind !== 'const.int' || !intBinary.has(op)) return undefined;
  const t: IntType = lhs.type;
  const bits = t.bits;
  const a = lhs.value;
  const b = rhs.value;
  const ua = BigInt.asUintN(bits, a);
  const ub = BigInt.asUintN(bits, b);
  switch (op) {
    case 'add': return constInt(t, a + b);
    case 'sub': return constInt(t, a - b);
    case 'mul': return constInt(t, a * b);
    case 'and': return constInt(t, a & b);
    case 'or': return constInt(t, a | b);
    case 'xor': return constInt(t, a ^ b);
    case 'udiv': return ub === 0n ? undefined : constInt(t, ua / ub);
    case 'urem': return ub === 0n ? undefined : constInt(t, ua % ub);
    // sdiv MIN/-1 overflows (poison in LLVM): leave it to LLVM.
    case 'sdiv': return b === 0n || (b === -1n && a === -(1n << BigInt(bits - 1))) ? undefined : constInt(t, a / b);
    case 'srem': return b === 0n || (b === -1n && a === -(1n << BigInt(bits - 1))) ? undefined : constInt(t, a % b);
    case 'shl': return ub >= BigInt(bits) ? undefined : constInt(t, a << ub);
    case 'lshr': return ub >= BigInt(bits) ? undefined : constInt(t, ua >> ub);
    case 'ashr': return ub >= BigInt(bits) ? undefined : constInt(t, a >> ub);
  }
}

