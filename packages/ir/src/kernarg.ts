/**
 * The one kernel-argument layout of the workspace: the kernel builders make their IR parameters
 * from a kernarg table, and the hosts (conv-direct's and split-reduce's launch plans,
 * @rocke/hip-runtime's packer) lay the values out with {@link kernargLayout}, so parameters and
 * packed bytes cannot drift apart.
 *
 * The rule (docs/kernel-abi.md): arguments in declaration order, each at the next offset aligned to
 * its ABI alignment, in a slot of its allocation size. Both ABIs the kernels are compiled for follow
 * it: the AMDGPU explicit kernarg segment (the kernels declare `amdgpu-no-implicitarg-ptr`, so
 * nothing follows the explicit arguments) and the PTX `.param` space of an sm_90 kernel. They differ
 * only at the tail: llc reports the AMDGPU segment rounded up to 4 bytes, while `cuLaunchKernel`
 * takes the packed buffer's size without tail padding (and HIP reads each argument at its offset),
 * so a launch passes {@link KernargLayout.size} and code-object metadata shows `segmentSize`.
 */
import type { Builder } from './builder.js';
import type { Value } from './ir.js';
import { alignOf, f32, i32, i64, ptr, sizeOf, typeToString } from './types.js';
import type { Type } from './types.js';

/** The host-visible kinds of a kernel argument: a 64-bit global pointer or a 32/64-bit scalar. */
export type KernargType = 'ptr' | 'i32' | 'i64' | 'f32';

/** The IR parameter type of each kind (pointers are `ptr addrspace(1)`). */
export const KERNARG_IR_TYPES: Readonly<Record<KernargType, Type>> = Object.freeze({ ptr: ptr(1), i32, i64, f32 });

/** One row of a kernel's kernarg table (families keep theirs `as const`, so names are literal types). */
export interface KernargEntry {
  readonly name: string;
  readonly type: KernargType;
  /** Pointers only: whether the kernel reads or writes through it. */
  readonly access?: 'read' | 'write';
  readonly doc: string;
}

/** Where one argument sits. `T` is the type it was declared with: an IR type or a {@link KernargType}. */
export interface KernargSlot<T extends Type | KernargType = Type | KernargType> {
  readonly name: string;
  readonly type: T;
  /** Byte offset in the argument buffer. */
  readonly offset: number;
  /** Bytes the slot occupies (allocation size: `<3 x i32>` takes 16). */
  readonly size: number;
  readonly align: number;
}

export interface KernargLayout<T extends Type | KernargType = Type | KernargType> {
  readonly slots: readonly KernargSlot<T>[];
  /** Bytes a launch passes: the end of the last slot, no tail padding (what `cuLaunchKernel` requires). */
  readonly size: number;
  /** The AMDGPU `.kernarg_segment_size` llc reports: `size` rounded up to 4 bytes. */
  readonly segmentSize: number;
  /** Largest slot alignment (at least 1). */
  readonly align: number;
}

/** The IR type of a declared argument type. */
export function kernargIrType(type: Type | KernargType): Type {
  if (typeof type !== 'string') return type;
  const t = KERNARG_IR_TYPES[type];
  if (!t) throw new TypeError(`unknown kernarg type '${String(type)}' (expected ${Object.keys(KERNARG_IR_TYPES).join(', ')})`);
  return t;
}

/** Lays out kernel parameters (`{name, type}` in order; `type` a {@link KernargType} or an IR type). */
export function kernargLayout(params: readonly { readonly name: string; readonly type: KernargType }[]): KernargLayout<KernargType>;
export function kernargLayout(params: readonly { readonly name: string; readonly type: Type }[]): KernargLayout<Type>;
export function kernargLayout<T extends Type | KernargType>(params: readonly { readonly name: string; readonly type: T }[]): KernargLayout<T> {
  let offset = 0;
  let maxAlign = 1;
  const slots = params.map((p) => {
    const ir = kernargIrType(p.type);
    if (ir.kind === 'void' || ir.kind === 'label') throw new TypeError(`kernel parameter ${p.name} cannot have type ${typeToString(ir)}`);
    const align = alignOf(ir);
    const size = sizeOf(ir);
    offset = Math.ceil(offset / align) * align;
    const slot: KernargSlot<T> = { name: p.name, type: p.type, offset, size, align };
    offset += size;
    maxAlign = Math.max(maxAlign, align);
    return slot;
  });
  return { slots, size: offset, segmentSize: Math.ceil(offset / 4) * 4, align: maxAlign };
}

/**
 * The IR parameters of a kernarg table: pointers `noalias`, and with `accessAttributes` also
 * `readonly` / `writeonly` where the table says how the kernel uses them.
 */
export function kernargParams(table: readonly KernargEntry[], options: { readonly accessAttributes?: boolean } = {}): { name: string; type: Type; attributes: string[] }[] {
  return table.map((e) => {
    const attributes = e.type !== 'ptr' ? [] : !options.accessAttributes || !e.access ? ['noalias'] : ['noalias', e.access === 'read' ? 'readonly' : 'writeonly'];
    return { name: e.name, type: kernargIrType(e.type), attributes };
  });
}

/** A kernel's arguments by name, typed from a literal (`as const`) kernarg table. */
export type KernargArgs<T extends readonly { readonly name: string }[]> = { readonly [N in T[number]['name']]: Value };

/**
 * The arguments of the kernel `b` builds, by name, for the rows of `table` (`args.splits` instead of
 * a lookup by string): with an `as const` table a misspelt name is a type error. Throws when the
 * kernel lacks one of the table's parameters.
 */
export function kernargArgs<const T extends readonly { readonly name: string }[]>(b: Builder, table: T): KernargArgs<T> {
  return Object.freeze(Object.fromEntries(table.map((e) => [e.name, b.arg(e.name)]))) as KernargArgs<T>;
}

/**
 * Writes one resolved value little-endian into its slot (`ptr` and `i64` take bigints, `i32` and
 * `f32` numbers). Range checks are the caller's: each host names its own errors.
 */
export function writeKernarg(view: DataView, slot: KernargSlot<KernargType>, value: number | bigint): void {
  switch (slot.type) {
    case 'ptr':
      view.setBigUint64(slot.offset, value as bigint, true);
      return;
    case 'i64':
      view.setBigInt64(slot.offset, value as bigint, true);
      return;
    case 'i32':
      view.setInt32(slot.offset, value as number, true);
      return;
    case 'f32':
      view.setFloat32(slot.offset, value as number, true);
      return;
  }
}

/** Reads one argument back from its slot (`ptr` and `i64` as bigint): the inverse of {@link writeKernarg}. */
export function readKernarg(view: DataView, slot: KernargSlot<KernargType>): number | bigint {
  switch (slot.type) {
    case 'ptr':
      return view.getBigUint64(slot.offset, true);
    case 'i64':
      return view.getBigInt64(slot.offset, true);
    case 'i32':
      return view.getInt32(slot.offset, true);
    case 'f32':
      return view.getFloat32(slot.offset, true);
  }
}
