/**
 * The host packer over @rocke/ir's one kernel-argument layout: the offsets and the buffer size come
 * from `kernargLayout` there (the rule the AMDGPU kernarg segment and the PTX parameter space share),
 * this file adds what a launch needs on top: argument checks, device addresses and the bytes.
 */
import { KERNARG_IR_TYPES, kernargLayout as layoutOf, readKernarg, writeKernarg, type KernargLayout as IrKernargLayout, type KernargSlot, type KernargType } from '@rocke/ir';
import { KernargError } from './errors.js';

/** Kernel parameter types the packer knows (@rocke/ir's). */
export type { KernargType };

/** The byte layout of a signature (@rocke/ir's): slots in order, `size` ending at the last one (no tail padding). */
export type KernargLayout = IrKernargLayout<KernargType>;

/** One kernel parameter: its name (for messages and record-style values) and type. */
export interface KernargSpec {
  readonly name: string;
  readonly type: KernargType;
}

/** A kernel's parameter list, in declaration order. */
export type KernargSignature = readonly KernargSpec[];

/** Anything with a device address: a DeviceBuffer or a DeviceView into one. */
export interface DeviceAddressable {
  /** The device address; throws if the memory was freed. */
  readonly address: bigint;
}

/**
 * A value for one parameter: `ptr` takes a buffer/view, a bigint address or null;
 * `i32` and `f32` take numbers; `i64` takes a bigint or a safe-integer number.
 */
export type KernargValue = number | bigint | DeviceAddressable | null;

/** Values in signature order, or keyed by parameter name. */
export type KernargValues = readonly KernargValue[] | Readonly<Record<string, KernargValue>>;

/** Where one parameter sits in the packed buffer. */
export type KernargField = KernargSlot<KernargType>;

/** A packed kernarg buffer, ready for launch, plus what it was packed from. */
export interface PackedKernargs {
  readonly bytes: Uint8Array;
  readonly layout: KernargLayout;
  readonly signature: KernargSignature;
  /** The buffer/view objects whose addresses were packed, so a launch can re-check them. */
  readonly pointers: readonly DeviceAddressable[];
}

const FLOAT32_MAX = 3.4028234663852886e38;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Lays out a checked signature with @rocke/ir's `kernargLayout`: each parameter at the next offset
 * aligned to its alignment, in order; `size` ends at the last parameter (no tail padding).
 */
export function kernargLayout(signature: KernargSignature): KernargLayout {
  const cached = frozenLayouts.get(signature);
  if (cached) return cached;
  const layout = computeLayout(signature);
  // Only a deeply frozen signature can be cached by identity (KernelFunction freezes its own).
  if (Object.isFrozen(signature) && signature.every((spec) => Object.isFrozen(spec))) frozenLayouts.set(signature, layout);
  return layout;
}

const frozenLayouts = new WeakMap<KernargSignature, KernargLayout>();

function computeLayout(signature: KernargSignature): KernargLayout {
  if (!Array.isArray(signature)) throw new KernargError('a kernarg signature must be an array of {name, type}');
  const seen = new Set<string>();
  for (const [index, spec] of signature.entries()) {
    if (typeof spec !== 'object' || spec === null) throw new KernargError(`signature entry ${index} is not an object`);
    const { name, type } = spec as { name: unknown; type: unknown };
    if (typeof name !== 'string' || name === '') throw new KernargError(`signature entry ${index} has no name`);
    if (seen.has(name)) throw new KernargError(`signature names '${name}' twice`, name);
    seen.add(name);
    if (typeof type !== 'string' || !Object.hasOwn(KERNARG_IR_TYPES, type)) {
      throw new KernargError(`parameter '${name}' has unknown type '${String(type)}' (expected ptr, i32, i64 or f32)`, name);
    }
  }
  const layout = layoutOf(signature.map(({ name, type }) => ({ name, type })));
  return Object.freeze({ ...layout, slots: Object.freeze(layout.slots.map((f) => Object.freeze(f))) });
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  return String(value);
}

function isAddressable(value: unknown): value is DeviceAddressable {
  return typeof value === 'object' && value !== null && 'address' in value;
}

function orderedValues(layout: KernargLayout, values: KernargValues): readonly unknown[] {
  const names = layout.slots.map((f) => f.name);
  if (Array.isArray(values)) {
    if (values.length !== names.length) {
      throw new KernargError(`expected ${names.length} kernel argument(s) (${names.join(', ')}), got ${values.length}`);
    }
    return values;
  }
  if (typeof values !== 'object' || values === null) {
    throw new KernargError('kernel arguments must be an array or an object keyed by parameter name');
  }
  const record = values as Readonly<Record<string, KernargValue>>;
  const unknown = Object.keys(record).filter((key) => !names.includes(key));
  if (unknown.length > 0) throw new KernargError(`unknown kernel argument(s): ${unknown.join(', ')} (parameters: ${names.join(', ')})`);
  const missing = names.filter((name) => !Object.hasOwn(record, name));
  if (missing.length > 0) throw new KernargError(`missing kernel argument(s): ${missing.join(', ')}`);
  return names.map((name) => record[name]);
}

function writeValue(view: DataView, field: KernargField, value: unknown, pointers: DeviceAddressable[]): void {
  const { name, type } = field;
  const bad = (expected: string): never => {
    throw new KernargError(`argument '${name}' (${type}) must be ${expected}, got ${describe(value)}`, name);
  };
  switch (type) {
    case 'i32': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return bad('an integer number');
      if (value < -(2 ** 31) || value > 2 ** 31 - 1) return bad('within [-2^31, 2^31-1]');
      writeKernarg(view, field, value);
      return;
    }
    case 'i64': {
      let big: bigint;
      if (typeof value === 'bigint') big = value;
      else if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
      else return bad('a bigint or a safe-integer number');
      if (big < INT64_MIN || big > INT64_MAX) return bad('within [-2^63, 2^63-1]');
      writeKernarg(view, field, big);
      return;
    }
    case 'f32': {
      if (typeof value !== 'number') return bad('a number');
      if (Number.isFinite(value) && Math.abs(value) > FLOAT32_MAX) return bad('finite in float32 (it would round to infinity)');
      writeKernarg(view, field, value);
      return;
    }
    case 'ptr': {
      let address: bigint;
      if (value === null) address = 0n;
      else if (typeof value === 'bigint') address = value;
      else if (isAddressable(value)) {
        address = value.address; // throws for freed memory
        if (typeof address !== 'bigint') return bad('a device buffer whose address is a bigint');
        pointers.push(value);
      } else return bad('a device buffer, a view, a bigint address or null');
      if (address < 0n || address > UINT64_MAX) return bad('a 64-bit address');
      writeKernarg(view, field, address);
      return;
    }
  }
}

/**
 * Packs kernel arguments into one little-endian buffer laid out by {@link kernargLayout}:
 * the buffer a launch hands to the runtime through HIP_LAUNCH_PARAM_BUFFER_POINTER /
 * CU_LAUNCH_PARAM_BUFFER_POINTER. Pure: the same signature and values give the same bytes.
 * Throws KernargError for a wrong count, unknown or missing names, or a value of the wrong
 * type or range.
 */
export function packKernargs(signature: KernargSignature, values: KernargValues): PackedKernargs {
  const layout = kernargLayout(signature);
  const bytes = new Uint8Array(layout.size);
  const pointers: DeviceAddressable[] = [];
  writeKernargs(layout, values, new DataView(bytes.buffer), pointers);
  return { bytes, layout, signature, pointers };
}

/**
 * Writes `values` into `view` (at least layout.size bytes, padding already zero) and appends
 * the buffer/view objects it packed to `pointers`. The allocation-free core of packKernargs,
 * for launch paths that reuse one scratch buffer.
 */
export function writeKernargs(layout: KernargLayout, values: KernargValues, view: DataView, pointers: DeviceAddressable[]): void {
  const ordered = orderedValues(layout, values);
  const { slots } = layout;
  for (let i = 0; i < slots.length; i++) writeValue(view, slots[i]!, ordered[i], pointers);
}

/** Reads packed arguments back (ptr and i64 as bigint): the inverse of {@link packKernargs}. */
export function unpackKernargs(layout: KernargLayout, bytes: Uint8Array): Record<string, number | bigint> {
  if (bytes.byteLength < layout.size) {
    throw new KernargError(`packed kernargs hold ${bytes.byteLength} bytes, the layout needs ${layout.size}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, number | bigint> = {};
  for (const slot of layout.slots) out[slot.name] = readKernarg(view, slot);
  return out;
}

/** True when two signatures have the same parameter types in the same order. */
export function sameKernargTypes(a: KernargSignature, b: KernargSignature): boolean {
  return a.length === b.length && a.every((spec, i) => spec.type === b[i]?.type);
}
