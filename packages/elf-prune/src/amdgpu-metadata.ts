import { Unpackr } from 'msgpackr';
import type { ElfFile, ElfNote } from './elf.js';
import { ElfError } from './errors.js';

/** Note owner and type of the AMDGPU code-object metadata (MessagePack, code object v3+). */
export const AMDGPU_NOTE_OWNER = 'AMDGPU';
export const NT_AMDGPU_METADATA = 32;

/** One `.args[]` entry of a kernel. */
export interface AmdgpuKernelArg {
  name: string | null;
  /** Byte offset in the kernarg segment. */
  offset: number;
  size: number;
  /** `global_buffer`, `by_value`, `hidden_block_count_x`, ... */
  valueKind: string;
  /** `global`, `constant`, ... for pointers; null otherwise. */
  addressSpace: string | null;
}

/** One `amdhsa.kernels[]` record, with the keys this package relies on. */
export interface AmdgpuKernelMetadata {
  /** `.name`: the kernel's source name. */
  name: string;
  /** `.symbol`: the kernel descriptor symbol, `<name>.kd`. */
  symbol: string;
  /** `.sgpr_count`: SGPRs including VCC/FLAT_SCRATCH/XNACK. */
  sgprCount: number;
  /** `.vgpr_count`: on gfx90a+ the unified count `align(arch, 4) + agpr`. */
  vgprCount: number;
  /** `.agpr_count` (0 when absent: targets without AGPRs omit it). */
  agprCount: number;
  /** `.sgpr_spill_count`, null when the producer did not emit it. */
  sgprSpillCount: number | null;
  /** `.vgpr_spill_count` (32-bit spill stores), null when absent. */
  vgprSpillCount: number | null;
  /** `.private_segment_fixed_size`: scratch bytes per work-item. */
  privateSegmentFixedSize: number;
  /** `.group_segment_fixed_size`: static LDS bytes. */
  groupSegmentFixedSize: number;
  kernargSegmentSize: number;
  kernargSegmentAlign: number;
  maxFlatWorkgroupSize: number;
  wavefrontSize: number;
  usesDynamicStack: boolean;
  args: AmdgpuKernelArg[];
}

/** The decoded NT_AMDGPU_METADATA map. */
export interface AmdgpuMetadata {
  /** `amdhsa.version`, e.g. [1, 2] for code object v5/v6. */
  version: [number, number];
  /** `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx950`. */
  target: string;
  kernels: AmdgpuKernelMetadata[];
}

// Maps stay Maps: no object keys from the file ever reach a prototype.
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: 'number' });

/** The NT_AMDGPU_METADATA note of a file, or undefined when it has none. */
export function findAmdgpuMetadataNote(elf: ElfFile): ElfNote | undefined {
  return elf.notes().find((n) => n.owner === AMDGPU_NOTE_OWNER && n.type === NT_AMDGPU_METADATA);
}

/** Decodes and validates the MessagePack descriptor of an NT_AMDGPU_METADATA note. */
export function decodeAmdgpuMetadata(note: ElfNote): AmdgpuMetadata {
  const at = note.descOffset;
  let root: unknown;
  try {
    root = unpackr.unpack(note.desc);
  } catch (e) {
    throw new ElfError(`AMDGPU metadata is not valid MessagePack: ${e instanceof Error ? e.message : String(e)}`, at);
  }
  const map = asMap(root, 'metadata root', at);
  const version = asArray(map.get('amdhsa.version'), 'amdhsa.version', at);
  if (version.length !== 2) throw new ElfError(`amdhsa.version has ${version.length} elements, expected 2`, at);
  const kernels = asArray(map.get('amdhsa.kernels'), 'amdhsa.kernels', at).map((k, i) => decodeKernel(k, i, at));
  return {
    version: [asUint(version[0], 'amdhsa.version[0]', at), asUint(version[1], 'amdhsa.version[1]', at)],
    target: asString(map.get('amdhsa.target'), 'amdhsa.target', at),
    kernels,
  };
}

function decodeKernel(value: unknown, index: number, at: number): AmdgpuKernelMetadata {
  const where = `amdhsa.kernels[${index}]`;
  const k = asMap(value, where, at);
  const num = (key: string): number => asUint(k.get(key), keyPath(where, key), at);
  const opt = (key: string): number | null => (k.has(key) ? num(key) : null);
  const args = k.has('.args') ? asArray(k.get('.args'), keyPath(where, '.args'), at) : [];
  return {
    name: asString(k.get('.name'), keyPath(where, '.name'), at),
    symbol: asString(k.get('.symbol'), keyPath(where, '.symbol'), at),
    sgprCount: num('.sgpr_count'),
    vgprCount: num('.vgpr_count'),
    agprCount: opt('.agpr_count') ?? 0,
    sgprSpillCount: opt('.sgpr_spill_count'),
    vgprSpillCount: opt('.vgpr_spill_count'),
    privateSegmentFixedSize: num('.private_segment_fixed_size'),
    groupSegmentFixedSize: num('.group_segment_fixed_size'),
    kernargSegmentSize: num('.kernarg_segment_size'),
    kernargSegmentAlign: num('.kernarg_segment_align'),
    maxFlatWorkgroupSize: num('.max_flat_workgroup_size'),
    wavefrontSize: num('.wavefront_size'),
    usesDynamicStack: k.has('.uses_dynamic_stack') ? asBool(k.get('.uses_dynamic_stack'), keyPath(where, '.uses_dynamic_stack'), at) : false,
    args: args.map((a, j) => decodeArg(a, `${keyPath(where, '.args')}[${j}]`, at)),
  };
}

function decodeArg(value: unknown, where: string, at: number): AmdgpuKernelArg {
  const a = asMap(value, where, at);
  return {
    name: a.has('.name') ? asString(a.get('.name'), keyPath(where, '.name'), at) : null,
    offset: asUint(a.get('.offset'), keyPath(where, '.offset'), at),
    size: asUint(a.get('.size'), keyPath(where, '.size'), at),
    valueKind: asString(a.get('.value_kind'), keyPath(where, '.value_kind'), at),
    addressSpace: a.has('.address_space') ? asString(a.get('.address_space'), keyPath(where, '.address_space'), at) : null,
  };
}

/** `where["key"]`: metadata keys begin with a dot, so `where.key` would read `kernels[0]..name`. */
function keyPath(where: string, key: string): string {
  return `${where}["${key}"]`;
}

function asMap(v: unknown, what: string, at: number): Map<unknown, unknown> {
  if (!(v instanceof Map)) throw new ElfError(`${what} is ${describe(v)}, expected a map`, at);
  return v;
}

function asArray(v: unknown, what: string, at: number): unknown[] {
  if (!Array.isArray(v)) throw new ElfError(`${what} is ${describe(v)}, expected an array`, at);
  return v;
}

function asString(v: unknown, what: string, at: number): string {
  if (typeof v !== 'string') throw new ElfError(`${what} is ${describe(v)}, expected a string`, at);
  return v;
}

function asBool(v: unknown, what: string, at: number): boolean {
  if (typeof v !== 'boolean') throw new ElfError(`${what} is ${describe(v)}, expected a boolean`, at);
  return v;
}

function asUint(v: unknown, what: string, at: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new ElfError(`${what} is ${describe(v)}, expected a non-negative integer`, at);
  }
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Map) return 'a map';
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`;
  return `a ${typeof v}`;
}
