/**
 * MMA atoms with their exact lane↔element layouts (README, "MMA atoms"; checked against the AMD
 * CDNA3 / CDNA4 ISA guides' MFMA tables and the PTX ISA's mma.sync fragment tables in targets.test.ts).
 * AMD MFMA (wave64): lanes form `64/m` groups of `m`; lane `l` holds row `l % m` of A and column
 * `l % m` of B, with `kPerLane` consecutive k values starting at `kPerLane * floor(l / m)`.
 * NVIDIA mma.sync m16n8k16 (warp32): `g = lane >> 2`, `t = lane & 3`, PTX ISA fragment tables.
 */
import type { Builder } from '../builder.js';
import { constI32 } from '../constants.js';
import type { Value } from '../ir.js';
import { bfloat, f32, half, i16, i32, struct, typeEquals, typeToString, vec } from '../types.js';
import type { VectorType } from '../types.js';
import type { MatrixCoord, MmaAtom, MmaDtype, TargetName } from './target.js';

const elemOf = (d: MmaDtype) => (d === 'bf16' ? bfloat : half);

/**
 * Arithmetic the layout formulas are written against, so one formula serves both the pure
 * functions (numbers) and the IR emitters (runtime lane values). Divisors are powers of two.
 */
interface LaneMath<T> {
  c(n: number): T;
  add(a: T, b: T): T;
  mul(a: T, k: number): T;
  div(a: T, k: number): T;
  rem(a: T, k: number): T;
}

const numberMath: LaneMath<number> = {
  c: (n) => n,
  add: (a, b) => a + b,
  mul: (a, k) => a * k,
  div: (a, k) => Math.floor(a / k),
  rem: (a, k) => a % k,
};

function irMath(b: Builder): LaneMath<Value> {
  const log2 = (k: number) => {
    const l = Math.log2(k);
    if (!Number.isInteger(l)) throw new RangeError(`layout divisor ${k} is not a power of two`);
    return l;
  };
  return {
    c: (n) => constI32(n),
    add: (x, y) => b.add(x, y),
    mul: (x, k) => (k === 1 ? x : b.mul(x, k)),
    div: (x, k) => (k === 1 ? x : b.lshr(x, log2(k))),
    rem: (x, k) => b.and(x, k - 1),
  };
}

type Formula = <T>(m: LaneMath<T>, lane: T, i: number) => { row: T; col: T };

/** Builds the pure layout function and its IR twin from one formula. */
function layout(name: string, lanes: number, count: number, f: Formula) {
  return {
    at(lane: number, i: number): MatrixCoord {
      if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) throw new RangeError(`atom ${name}: lane ${lane} outside 0..${lanes - 1}`);
      checkElement(name, i, count);
      return f(numberMath, lane, i);
    },
    emit(b: Builder, lane: Value, i: number): { row: Value; col: Value } {
      if (lane.type.kind !== 'int' || lane.type.bits !== 32) throw new TypeError(`atom ${name}: lane must be i32, got ${typeToString(lane.type)}`);
      checkElement(name, i, count);
      return f(irMath(b), lane, i);
    },
  };
}

/**
 * An atom's six layout members (a/b/c and their IR twins aAt/bAt/cAt), one formula per operand;
 * each operand's element count is its vector type's length.
 */
function operandLayouts(
  name: string,
  lanes: number,
  types: { readonly aType: VectorType; readonly bType: VectorType; readonly cType: VectorType },
  formulas: { readonly a: Formula; readonly b: Formula; readonly c: Formula },
): Pick<MmaAtom, 'a' | 'b' | 'c' | 'aAt' | 'bAt' | 'cAt'> {
  const A = layout(name, lanes, types.aType.count, formulas.a);
  const B = layout(name, lanes, types.bType.count, formulas.b);
  const C = layout(name, lanes, types.cType.count, formulas.c);
  return { a: A.at, b: B.at, c: C.at, aAt: A.emit, bAt: B.emit, cAt: C.emit };
}

function checkOperands(atom: MmaAtom, a: Value, b: Value, c: Value): void {
  const bad = (what: string, v: Value, t: VectorType) => {
    throw new TypeError(`atom ${atom.name} on ${atom.target}: ${what} must be ${typeToString(t)}, got ${typeToString(v.type)}`);
  };
  if (!typeEquals(a.type, atom.aType)) bad('A', a, atom.aType);
  if (!typeEquals(b.type, atom.bType)) bad('B', b, atom.bType);
  if (!typeEquals(c.type, atom.cType)) bad('C', c, atom.cType);
}

function checkElement(name: string, i: number, count: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= count) throw new RangeError(`atom ${name}: element ${i} outside 0..${count - 1}`);
}

interface MfmaSpec {
  readonly target: TargetName;
  readonly mn: 16 | 32;
  readonly k: number;
  readonly dtype: MmaDtype;
  readonly intrinsic: string;
  readonly instruction: string;
  /** The `.1k` bf16 forms take the bf16 bits as `<4 x i16>`. */
  readonly bitsAsI16: boolean;
}

/** An AMD MFMA atom (f32 accumulate, cbsz = abid = blgp = 0). */
export function mfmaAtom(s: MfmaSpec): MmaAtom {
  const m = s.mn;
  const groups = 64 / m;
  const kPerLane = s.k / groups;
  const aType = vec(kPerLane, elemOf(s.dtype));
  const cCount = (m * m) / 64;
  const cType = vec(cCount, f32);
  const name = `${m}x${m}x${s.k}.${s.dtype}`;
  const layouts = operandLayouts(
    name,
    64,
    { aType, bType: aType, cType },
    {
      a: (x, l, i) => ({ row: x.rem(l, m), col: x.add(x.mul(x.div(l, m), kPerLane), x.c(i)) }),
      b: (x, l, i) => ({ row: x.add(x.mul(x.div(l, m), kPerLane), x.c(i)), col: x.rem(l, m) }),
      // 16x16: each group of 16 lanes holds 4 consecutive rows. 32x32: row = 8*(i/4) + 4*(lane/32) + i%4.
      c: (x, l, i) => ({
        row: m === 16 ? x.add(x.mul(x.div(l, 16), 4), x.c(i)) : x.add(x.mul(x.div(l, 32), 4), x.c(8 * (i >> 2) + (i & 3))),
        col: x.rem(l, m),
      }),
    },
  );
  const atom: MmaAtom = {
    name,
    target: s.target,
    m,
    n: m,
    k: s.k,
    dtype: s.dtype,
    lanes: 64,
    aType,
    bType: aType,
    cType,
    ...layouts,
    intrinsic: s.intrinsic,
    instruction: s.instruction,
    emit(b: Builder, a: Value, bv: Value, c: Value): Value {
      checkOperands(atom, a, bv, c);
      const opA = s.bitsAsI16 ? b.bitcast(a, vec(kPerLane, i16)) : a;
      const opB = s.bitsAsI16 ? b.bitcast(bv, vec(kPerLane, i16)) : bv;
      return b.intrinsic(s.intrinsic, cType, [opA, opB, c, 0, 0, 0]);
    },
  };
  return Object.freeze(atom);
}

/** NVIDIA `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` (f32 accumulate). */
export function mmaSyncAtom(target: TargetName, dtype: MmaDtype): MmaAtom {
  const et = elemOf(dtype);
  const aType = vec(8, et);
  const bType = vec(4, et);
  const cType = vec(4, f32);
  const intrinsic = dtype === 'bf16' ? 'llvm.nvvm.mma.m16n8k16.row.col.bf16' : 'llvm.nvvm.mma.m16n8k16.row.col.f32.f32';
  const name = `16x8x16.${dtype}`;
  // g = lane >> 2, t = lane & 3; element i of an operand vector = register i >> 1, 16-bit half i & 1 (low half = lower index).
  const layouts = operandLayouts(
    name,
    32,
    { aType, bType, cType },
    {
      a: (x, l, i) => ({
        row: x.add(x.div(l, 4), x.c(8 * ((i >> 1) & 1))),
        col: x.add(x.mul(x.rem(l, 4), 2), x.c((i & 1) + 8 * (i >> 2))),
      }),
      b: (x, l, i) => ({ row: x.add(x.mul(x.rem(l, 4), 2), x.c((i & 1) + 8 * (i >> 1))), col: x.div(l, 4) }),
      c: (x, l, i) => ({ row: x.add(x.div(l, 4), x.c(8 * (i >> 1))), col: x.add(x.mul(x.rem(l, 4), 2), x.c(i & 1)) }),
    },
  );
  const atom: MmaAtom = {
    name,
    target,
    m: 16,
    n: 8,
    k: 16,
    dtype,
    lanes: 32,
    aType,
    bType,
    cType,
    ...layouts,
    intrinsic,
    instruction: `mma.sync.aligned.m16n8k16.row.col.f32.${dtype}.${dtype}.f32`,
    emit(b: Builder, a: Value, bv: Value, c: Value): Value {
      checkOperands(atom, a, bv, c);
      // Registers: bf16 pairs travel as i32, f16 pairs as <2 x half>.
      const regType = dtype === 'bf16' ? i32 : vec(2, half);
      const regs = (v: Value, n: number): Value[] => {
        if (dtype === 'f16') return Array.from({ length: n }, (_, q) => b.shuffleVector(v, v, [2 * q, 2 * q + 1]));
        const asRegs = b.bitcast(v, vec(n, i32));
        return Array.from({ length: n }, (_, q) => b.extractElement(asRegs, q));
      };
      const aRegs = regs(a, 4);
      const bRegs = regs(bv, 2);
      const cs = b.elements(c);
      const ret = struct([f32, f32, f32, f32]);
      const decl = b.module.declare(intrinsic, ret, [...Array(6).fill(regType), f32, f32, f32, f32]);
      const d = b.call(decl, [...aRegs, ...bRegs, ...cs]);
      return b.vector([0, 1, 2, 3].map((q) => b.extractValue(d, [q])));
    },
  };
  return Object.freeze(atom);
}
