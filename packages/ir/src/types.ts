/**
 * LLVM IR types as plain immutable data. Two types are the same type when their printed
 * forms are equal ({@link typeEquals}); the constructors below never share mutable state.
 */

/** Floating-point type names LLVM understands that this package emits. */
export type FloatKind = 'half' | 'bfloat' | 'float' | 'double';

/** An LLVM IR type. `kind` is the discriminant an interpreter switches on. */
export type Type =
  | { readonly kind: 'void' }
  | { readonly kind: 'label' }
  | { readonly kind: 'int'; readonly bits: number }
  | { readonly kind: 'float'; readonly name: FloatKind }
  | { readonly kind: 'ptr'; readonly addrspace: number }
  | { readonly kind: 'vector'; readonly count: number; readonly elem: Type }
  | { readonly kind: 'array'; readonly count: number; readonly elem: Type }
  | { readonly kind: 'struct'; readonly fields: readonly Type[] };

export type IntType = Extract<Type, { kind: 'int' }>;
export type FloatType = Extract<Type, { kind: 'float' }>;
export type PtrType = Extract<Type, { kind: 'ptr' }>;
export type VectorType = Extract<Type, { kind: 'vector' }>;
export type ArrayType = Extract<Type, { kind: 'array' }>;
export type StructType = Extract<Type, { kind: 'struct' }>;

/** Function signature (not a first-class value type: functions are used through `ptr`). */
export interface FunctionType {
  readonly ret: Type;
  readonly params: readonly Type[];
}

/** An integer type of `bits` width (1..128). */
export function int(bits: number): IntType {
  if (!Number.isInteger(bits) || bits < 1 || bits > 128) throw new RangeError(`integer width must be 1..128, got ${bits}`);
  return { kind: 'int', bits };
}
export const voidT: Type = { kind: 'void' };
export const label: Type = { kind: 'label' };
export const i1: IntType = int(1);
export const i8: IntType = int(8);
export const i16: IntType = int(16);
export const i32: IntType = int(32);
export const i64: IntType = int(64);
export const half: FloatType = { kind: 'float', name: 'half' };
export const bfloat: FloatType = { kind: 'float', name: 'bfloat' };
export const f32: FloatType = { kind: 'float', name: 'float' };
export const f64: FloatType = { kind: 'float', name: 'double' };

/** `ptr addrspace(N)`; N = 0 prints as plain `ptr`. */
export function ptr(addrspace = 0): PtrType {
  if (!Number.isInteger(addrspace) || addrspace < 0) throw new RangeError(`address space must be a non-negative integer, got ${addrspace}`);
  return { kind: 'ptr', addrspace };
}

/** `<count x elem>`; elements must be integers, floats or pointers. */
export function vec(count: number, elem: Type): VectorType {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`vector length must be a positive integer, got ${count}`);
  if (elem.kind !== 'int' && elem.kind !== 'float' && elem.kind !== 'ptr') throw new TypeError(`vector element must be int, float or ptr, got ${typeToString(elem)}`);
  return { kind: 'vector', count, elem };
}

/** `[count x elem]` (count may be 0 for dynamically sized LDS). */
export function array(count: number, elem: Type): ArrayType {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`array length must be a non-negative integer, got ${count}`);
  if (elem.kind === 'void' || elem.kind === 'label') throw new TypeError(`array element cannot be ${elem.kind}`);
  return { kind: 'array', count, elem };
}

/** A literal struct `{ a, b, ... }`. */
export function struct(fields: readonly Type[]): StructType {
  for (const f of fields) if (f.kind === 'void' || f.kind === 'label') throw new TypeError(`struct field cannot be ${f.kind}`);
  return { kind: 'struct', fields: [...fields] };
}

/** The LLVM textual form of a type. */
export function typeToString(t: Type): string {
  switch (t.kind) {
    case 'void':
      return 'void';
    case 'label':
      return 'label';
    case 'int':
      return `i${t.bits}`;
    case 'float':
      return t.name;
    case 'ptr':
      return t.addrspace === 0 ? 'ptr' : `ptr addrspace(${t.addrspace})`;
    case 'vector':
      return `<${t.count} x ${typeToString(t.elem)}>`;
    case 'array':
      return `[${t.count} x ${typeToString(t.elem)}]`;
    case 'struct':
      return t.fields.length === 0 ? '{}' : `{ ${t.fields.map(typeToString).join(', ')} }`;
  }
}

/** Structural equality. */
export function typeEquals(a: Type, b: Type): boolean {
  return a === b || typeToString(a) === typeToString(b);
}

/** The element type of a vector, or the type itself for a scalar. */
export function scalarOf(t: Type): Type {
  return t.kind === 'vector' ? t.elem : t;
}

export const isInt = (t: Type): t is IntType => t.kind === 'int';
export const isFloat = (t: Type): t is FloatType => t.kind === 'float';
export const isPtr = (t: Type): t is PtrType => t.kind === 'ptr';
/** Integer or vector of integers. */
export const isIntLike = (t: Type): boolean => scalarOf(t).kind === 'int';
/** Float or vector of floats. */
export const isFloatLike = (t: Type): boolean => scalarOf(t).kind === 'float';

/** Bits of one scalar of this float kind. */
export function floatBits(name: FloatKind): number {
  return name === 'half' || name === 'bfloat' ? 16 : name === 'float' ? 32 : 64;
}

/**
 * Bytes a load or store of `t` touches (LLVM's store size): `<3 x i32>` is 12. Where AMDGPU and
 * NVPTX agree (integers, floats, packed vectors, arrays, structs, 64-bit generic/global/constant
 * pointers); LDS/private pointer widths differ between them and are refused.
 */
export function storeSizeOf(t: Type): number {
  switch (t.kind) {
    case 'int':
      return Math.ceil(t.bits / 8);
    case 'float':
      return floatBits(t.name) / 8;
    case 'ptr': {
      // Generic, global and constant pointers are 64-bit on both AMDGPU and NVPTX; LDS/private
      // pointer widths differ between them (32 vs 64 bit), so their size must come from the caller.
      const bytes = t.addrspace === 0 || t.addrspace === 1 || t.addrspace === 4 ? 8 : undefined;
      if (bytes === undefined) throw new TypeError(`the size of ptr addrspace(${t.addrspace}) depends on the target; pass an explicit size/alignment`);
      return bytes;
    }
    case 'vector':
      return t.elem.kind === 'int' ? Math.ceil((t.elem.bits * t.count) / 8) : storeSizeOf(t.elem) * t.count;
    case 'array':
    case 'struct':
      return sizeOf(t);
    case 'void':
    case 'label':
      throw new TypeError(`${t.kind} has no size`);
  }
}

/**
 * Allocation size in bytes (LLVM's alloc size: the store size rounded up to the alignment), which
 * is the array/GEP stride and the kernel-argument slot size: `<3 x i32>` is 16.
 */
export function sizeOf(t: Type): number {
  switch (t.kind) {
    case 'array':
      return sizeOf(t.elem) * t.count;
    case 'struct': {
      let off = 0;
      let maxAlign = 1;
      for (const f of t.fields) {
        const a = alignOf(f);
        maxAlign = Math.max(maxAlign, a);
        off = Math.ceil(off / a) * a + sizeOf(f);
      }
      return Math.ceil(off / maxAlign) * maxAlign;
    }
    default: {
      const a = alignOf(t);
      return Math.ceil(storeSizeOf(t) / a) * a;
    }
  }
}

/** ABI alignment in bytes: natural, i.e. the store size rounded up to a power of two for scalars and vectors. */
export function alignOf(t: Type): number {
  switch (t.kind) {
    case 'array':
      return alignOf(t.elem);
    case 'struct':
      return t.fields.reduce((m, f) => Math.max(m, alignOf(f)), 1);
    default: {
      // Scalars and vectors align to their store size rounded up to a power of two (<3 x i32>: 16).
      const s = storeSizeOf(t);
      let p = 1;
      while (p < s) p *= 2;
      return p;
    }
  }
}
