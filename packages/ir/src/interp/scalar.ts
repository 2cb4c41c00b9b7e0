/**
 * Scalar semantics of LLVM operations on the interpreter's value representation (see
 * numeric.ts): one JS function per (operation, type), chosen once at compile time.
 * Poison-producing cases (over-wide shifts, out-of-range float→int) give a fixed value so runs
 * stay deterministic; division by zero is an error because it is undefined behaviour.
 */
import type { CastOp, FcmpPred, FloatBinaryOp, IcmpPred, IntBinaryOp } from '../ir.js';
import type { FloatKind, Type } from '../types.js';
import { typeToString } from '../types.js';
import { InterpretError, fail } from './errors.js';
import { LDS_REGION, REGION, codecOf, regionBase } from './memory.js';
import {
  HALF_VALUES, add64, and64, ashr64, bfloatFromBits, bfloatToBits, cmpS64, cmpU64, halfToBits, lshr64, maskOf, mul64, or64, roundBfloat,
  roundHalf, sdiv64, shl64, srem64, sub64, toSigned, udiv64, u64Number, urem64, wrapI64, wrapSmall, xor64,
} from './numeric.js';
import type { I64 } from './numeric.js';

export type Fn1 = (a: any) => any;
export type Fn2 = (a: any, b: any) => any;

/** Rounding to a float kind. */
export function rounder(k: FloatKind): (x: number) => number {
  return k === 'half' ? roundHalf : k === 'bfloat' ? roundBfloat : k === 'float' ? Math.fround : (x) => x;
}

const divZero = (): never => fail('integer division by zero (undefined behaviour)');

/** Integer widths the interpreter represents. */
export function checkIntBits(bits: number): void {
  if (bits > 32 && bits !== 64) throw new InterpretError(`i${bits} is not modeled (i1..i32 and i64 are)`);
}

export function intBinary(op: IntBinaryOp, bits: number): Fn2 {
  checkIntBits(bits);
  if (bits === 64) {
    const sh = (b: I64) => Number(b);
    switch (op) {
      case 'add': return add64;
      case 'sub': return sub64;
      case 'mul': return mul64;
      case 'udiv': return (a, b) => (b === 0 ? divZero() : udiv64(a, b));
      case 'sdiv': return (a, b) => (b === 0 ? divZero() : sdiv64(a, b));
      case 'urem': return (a, b) => (b === 0 ? divZero() : urem64(a, b));
      case 'srem': return (a, b) => (b === 0 ? divZero() : srem64(a, b));
      case 'shl': return (a, b) => (sh(b) >= 64 || sh(b) < 0 ? 0 : shl64(a, sh(b)));
      case 'lshr': return (a, b) => (sh(b) >= 64 || sh(b) < 0 ? 0 : lshr64(a, sh(b)));
      case 'ashr': return (a, b) => (sh(b) >= 64 || sh(b) < 0 ? 0 : ashr64(a, sh(b)));
      case 'and': return and64;
      case 'or': return or64;
      case 'xor': return xor64;
    }
  }
  const m = maskOf(bits);
  const full = bits === 32;
  switch (op) {
    case 'add': return full ? (a, b) => (a + b) >>> 0 : (a, b) => (a + b) & m;
    case 'sub': return full ? (a, b) => (a - b) >>> 0 : (a, b) => (a - b) & m;
    case 'mul': return full ? (a, b) => Math.imul(a, b) >>> 0 : (a, b) => Math.imul(a, b) & m;
    case 'udiv': return (a, b) => (b === 0 ? divZero() : Math.floor(a / b));
    case 'urem': return (a, b) => (b === 0 ? divZero() : a % b);
    case 'sdiv': return (a, b) => (b === 0 ? divZero() : wrapSmall(Math.trunc(toSigned(a, bits) / toSigned(b, bits)), bits));
    case 'srem': return (a, b) => (b === 0 ? divZero() : wrapSmall(toSigned(a, bits) % toSigned(b, bits), bits));
    case 'shl': return full ? (a, b) => (b >= 32 ? 0 : (a << b) >>> 0) : (a, b) => (b >= bits ? 0 : (a << b) & m);
    case 'lshr': return (a, b) => (b >= bits ? 0 : a >>> b);
    case 'ashr': return (a, b) => (b >= bits ? 0 : (toSigned(a, bits) >> b) & m) >>> 0;
    case 'and': return (a, b) => (a & b) >>> 0;
    case 'or': return (a, b) => (a | b) >>> 0;
    case 'xor': return (a, b) => (a ^ b) >>> 0;
  }
}

export function floatBinary(op: FloatBinaryOp, k: FloatKind): Fn2 {
  const rnd = rounder(k);
  switch (op) {
    case 'fadd': return (a, b) => rnd(a + b);
    case 'fsub': return (a, b) => rnd(a - b);
    case 'fmul': return (a, b) => rnd(a * b);
    case 'fdiv': return (a, b) => rnd(a / b);
    case 'frem': return (a, b) => rnd(a % b);
  }
}

/** icmp on ints (unsigned canonical ≤ 32 bits, i64) and pointers (numbers). Result 1 or 0. */
export function icmpFn(pred: IcmpPred, t: Type): Fn2 {
  if (t.kind === 'int' && t.bits === 64) {
    switch (pred) {
      case 'eq': return (a, b) => (a === b ? 1 : 0);
      case 'ne': return (a, b) => (a !== b ? 1 : 0);
      case 'slt': return (a, b) => (cmpS64(a, b) < 0 ? 1 : 0);
      case 'sle': return (a, b) => (cmpS64(a, b) <= 0 ? 1 : 0);
      case 'sgt': return (a, b) => (cmpS64(a, b) > 0 ? 1 : 0);
      case 'sge': return (a, b) => (cmpS64(a, b) >= 0 ? 1 : 0);
      case 'ult': return (a, b) => (cmpU64(a, b) < 0 ? 1 : 0);
      case 'ule': return (a, b) => (cmpU64(a, b) <= 0 ? 1 : 0);
      case 'ugt': return (a, b) => (cmpU64(a, b) > 0 ? 1 : 0);
      case 'uge': return (a, b) => (cmpU64(a, b) >= 0 ? 1 : 0);
    }
  }
  if (t.kind !== 'int' && t.kind !== 'ptr') throw new InterpretError(`icmp on ${typeToString(t)}`);
  const bits = t.kind === 'int' ? t.bits : 32;
  checkIntBits(bits);
  const s = (x: number) => toSigned(x, bits);
  switch (pred) {
    case 'eq': return (a, b) => (a === b ? 1 : 0);
    case 'ne': return (a, b) => (a !== b ? 1 : 0);
    case 'ult': return (a, b) => (a < b ? 1 : 0);
    case 'ule': return (a, b) => (a <= b ? 1 : 0);
    case 'ugt': return (a, b) => (a > b ? 1 : 0);
    case 'uge': return (a, b) => (a >= b ? 1 : 0);
    case 'slt': return (a, b) => (s(a) < s(b) ? 1 : 0);
    case 'sle': return (a, b) => (s(a) <= s(b) ? 1 : 0);
    case 'sgt': return (a, b) => (s(a) > s(b) ? 1 : 0);
    case 'sge': return (a, b) => (s(a) >= s(b) ? 1 : 0);
  }
}

export function fcmpFn(pred: FcmpPred): Fn2 {
  const nan = (a: number, b: number) => a !== a || b !== b;
  switch (pred) {
    case 'false': return () => 0;
    case 'true': return () => 1;
    case 'oeq': return (a, b) => (a === b ? 1 : 0);
    case 'ogt': return (a, b) => (a > b ? 1 : 0);
    case 'oge': return (a, b) => (a >= b ? 1 : 0);
    case 'olt': return (a, b) => (a < b ? 1 : 0);
    case 'ole': return (a, b) => (a <= b ? 1 : 0);
    case 'one': return (a, b) => (a < b || a > b ? 1 : 0);
    case 'ord': return (a, b) => (nan(a, b) ? 0 : 1);
    case 'ueq': return (a, b) => (a === b || nan(a, b) ? 1 : 0);
    case 'ugt': return (a, b) => (a <= b ? 0 : 1);
    case 'uge': return (a, b) => (a < b ? 0 : 1);
    case 'ult': return (a, b) => (a >= b ? 0 : 1);
    case 'ule': return (a, b) => (a > b ? 0 : 1);
    case 'une': return (a, b) => (a !== b ? 1 : 0);
    case 'uno': return (a, b) => (nan(a, b) ? 1 : 0);
  }
}

const scratch = new DataView(new ArrayBuffer(64));
const f32s = new Float32Array(1);
const u32s = new Uint32Array(f32s.buffer);

/** Encoder/decoder of a 16-bit element type as its bit pattern. */
function bits16(t: Type): { enc: (v: number) => number; dec: (b: number) => number } | undefined {
  if (t.kind === 'int' && t.bits === 16) return { enc: (v) => v, dec: (b) => b };
  if (t.kind === 'float' && t.name === 'half') return { enc: halfToBits, dec: (b) => HALF_VALUES[b]! };
  if (t.kind === 'float' && t.name === 'bfloat') return { enc: bfloatToBits, dec: bfloatFromBits };
  return undefined;
}

/** Direct bit moves for the bitcasts the MMA lowerings use (16-bit elements <-> i32 words, f32 <-> i32). */
function fastBitcast(from: Type, to: Type): Fn1 | undefined {
  const isI32 = (t: Type) => t.kind === 'int' && t.bits === 32;
  const isF32 = (t: Type) => t.kind === 'float' && t.name === 'float';
  if (isF32(from) && isI32(to)) return (x) => ((f32s[0] = x), u32s[0]);
  if (isI32(from) && isF32(to)) return (x) => ((u32s[0] = x), f32s[0]);
  const fe = from.kind === 'vector' ? from.elem : from;
  const te = to.kind === 'vector' ? to.elem : to;
  const fn = from.kind === 'vector' ? from.count : 1;
  const tn = to.kind === 'vector' ? to.count : 1;
  const f16 = bits16(fe);
  const t16 = bits16(te);
  if (f16 && t16 && fn === tn && from.kind === 'vector') {
    return (x: number[]) => {
      const o = new Array<number>(tn);
      for (let i = 0; i < tn; i++) o[i] = t16.dec(f16.enc(x[i]!));
      return o;
    };
  }
  if (f16 && isI32(te) && fn === 2 * tn) {
    const pack = (x: number[], i: number) => (f16.enc(x[2 * i]!) | (f16.enc(x[2 * i + 1]!) << 16)) >>> 0;
    if (to.kind !== 'vector') return (x: number[]) => pack(x, 0);
    return (x: number[]) => {
      const o = new Array<number>(tn);
      for (let i = 0; i < tn; i++) o[i] = pack(x, i);
      return o;
    };
  }
  if (isI32(fe) && t16 && tn === 2 * fn && to.kind === 'vector') {
    return (x: number | number[]) => {
      const o = new Array<number>(tn);
      for (let i = 0; i < fn; i++) {
        const w = from.kind === 'vector' ? (x as number[])[i]! : (x as number);
        o[2 * i] = t16.dec(w & 0xffff);
        o[2 * i + 1] = t16.dec(w >>> 16);
      }
      return o;
    };
  }
  return undefined;
}

/** A cast from `from` to `to` on scalars (vectors are lifted by the caller, except bitcast which takes whole values). */
export function castFn(op: CastOp, from: Type, to: Type): Fn1 {
  const bad = (): never => {
    throw new InterpretError(`${op} from ${typeToString(from)} to ${typeToString(to)} is not modeled`);
  };
  const fs = from.kind === 'vector' && op !== 'bitcast' ? from.elem : from;
  const ts = to.kind === 'vector' && op !== 'bitcast' ? to.elem : to;
  switch (op) {
    case 'trunc':
    case 'zext':
    case 'sext': {
      if (fs.kind !== 'int' || ts.kind !== 'int') return bad();
      checkIntBits(fs.bits);
      checkIntBits(ts.bits);
      const fb = fs.bits;
      const tb = ts.bits;
      if (op === 'trunc') return fb === 64 ? (x) => wrapSmall(x, tb) : (x) => wrapSmall(x, tb);
      if (op === 'zext') return (x) => x;
      return tb === 64 ? (x) => toSigned(x, fb) : (x) => wrapSmall(toSigned(x, fb), tb);
    }
    case 'fptrunc':
    case 'fpext':
      if (fs.kind !== 'float' || ts.kind !== 'float') return bad();
      return rounder(ts.name);
    case 'fptoui':
    case 'fptosi': {
      if (fs.kind !== 'float' || ts.kind !== 'int') return bad();
      checkIntBits(ts.bits);
      const tb = ts.bits;
      return tb === 64
        ? (x: number) => (x === x && Math.abs(x) !== Infinity ? wrapI64(Math.trunc(x)) : 0)
        : (x: number) => (x === x && Math.abs(x) !== Infinity ? wrapSmall(Math.trunc(x), tb) : 0);
    }
    case 'uitofp':
    case 'sitofp': {
      if (fs.kind !== 'int' || ts.kind !== 'float') return bad();
      checkIntBits(fs.bits);
      const rnd = rounder(ts.name);
      const fb = fs.bits;
      if (fb === 64) return op === 'uitofp' ? (x) => rnd(u64Number(x)) : (x) => rnd(Number(x));
      return op === 'uitofp' ? (x) => rnd(x) : (x) => rnd(toSigned(x, fb));
    }
    case 'ptrtoint':
      if (fs.kind !== 'ptr' || ts.kind !== 'int') return bad();
      return ts.bits === 64 ? (x) => wrapI64(x) : (x) => wrapSmall(x, ts.bits);
    case 'inttoptr':
      if (fs.kind !== 'int' || ts.kind !== 'ptr') return bad();
      return (x) => Number(x);
    case 'addrspacecast': {
      if (fs.kind !== 'ptr' || ts.kind !== 'ptr') return bad();
      const generic = (as: number) => as === 0 || as === 1;
      if (generic(fs.addrspace) && generic(ts.addrspace)) return (x) => x;
      const lds = regionBase(LDS_REGION);
      if (fs.addrspace === 3 && generic(ts.addrspace)) return (x) => lds + x;
      if (generic(fs.addrspace) && ts.addrspace === 3) {
        return (x: number) => {
          const off = x - lds;
          if (Math.floor(x / REGION) !== LDS_REGION) fail(`addrspacecast of 0x${x.toString(16)} to LDS: the pointer does not point into LDS`);
          return off;
        };
      }
      return bad();
    }
    case 'bitcast': {
      if (typeToString(from) === typeToString(to) || (from.kind === 'ptr' && to.kind === 'ptr')) return (x) => x;
      const fast = fastBitcast(from, to);
      if (fast) return fast;
      const a = codecOf(from);
      const b = codecOf(to);
      if (a.size !== b.size) return bad();
      return (x) => {
        a.write(scratch, 0, x);
        return b.read(scratch, 0);
      };
    }
  }
}
