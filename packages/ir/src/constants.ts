/** Constant constructors. Constants are immutable values with no identity requirements. */
import { roundToFloat } from './float.js';
import type { ConstFloat, ConstInt, ConstNull, ConstPoison, ConstUndef, ConstVector, ConstZero, Constant } from './ir.js';
import { i1, i32, i64, f32, ptr, typeEquals, typeToString } from './types.js';
import type { FloatType, IntType, Type, VectorType } from './types.js';

/** An integer constant; the value wraps to the width (two's complement), like LLVM. */
export function constInt(type: IntType, value: number | bigint): ConstInt {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`integer constant must be a safe integer (use bigint), got ${value}`);
  return { kind: 'const.int', type, value: BigInt.asIntN(type.bits, BigInt(value)) };
}
export const constI1 = (v: boolean): ConstInt => constInt(i1, v ? -1n : 0n);
export const constI32 = (v: number | bigint): ConstInt => constInt(i32, v);
export const constI64 = (v: number | bigint): ConstInt => constInt(i64, v);

/** A float constant, rounded (nearest even) to the type's precision. */
export function constFloat(type: FloatType, value: number): ConstFloat {
  return { kind: 'const.float', type, value: roundToFloat(value, type.name) };
}
export const constF32 = (v: number): ConstFloat => constFloat(f32, v);

export const nullPtr = (addrspace = 0): ConstNull => ({ kind: 'const.null', type: ptr(addrspace) });
export const poison = (type: Type): ConstPoison => ({ kind: 'const.poison', type });
export const undef = (type: Type): ConstUndef => ({ kind: 'const.undef', type });

/** The zero of any type: `0`, `0.0`, `null`, or `zeroinitializer` for vectors/aggregates. */
export function zero(type: Type): Constant {
  switch (type.kind) {
    case 'int': return constInt(type, 0);
    case 'float': return constFloat(type, 0);
    case 'ptr': return nullPtr(type.addrspace);
    case 'vector': case 'array': case 'struct': return { kind: 'const.zero', type } satisfies ConstZero;
    default: throw new TypeError(`${type.kind} has no zero value`);
  }
}

/** A vector constant from element constants of the vector's element type. */
export function constVector(type: VectorType, elems: readonly Constant[]): ConstVector {
  if (elems.length !== type.count) throw new RangeError(`vector ${typeToString(type)} needs ${type.count} elements, got ${elems.length}`);
  for (const e of elems) if (!typeEquals(e.type, type.elem)) throw new TypeError(`vector element of type ${typeToString(e.type)} in ${typeToString(type)}`);
  return { kind: 'const.vector', type, elems: [...elems] };
}

/** A vector with every element equal to `elem`. */
export function splat(type: VectorType, elem: Constant): ConstVector {
  return constVector(type, Array.from({ length: type.count }, () => elem));
}
