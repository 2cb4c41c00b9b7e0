/**
 * The target interface: everything a kernel needs to know about a GPU, so a kernel algorithm is
 * written once and lowered to AMD or NVIDIA by swapping the target object.
 */
import { Builder } from '../builder.js';
import type { FnAttribute, Value } from '../ir.js';
import type { Module } from '../module.js';
import { typeToString, voidT } from '../types.js';
import type { Type, VectorType } from '../types.js';

/** The targets, in the order tools list them. */
export const TARGET_NAMES = Object.freeze(['gfx950', 'gfx942', 'sm_90'] as const);
export type TargetName = (typeof TARGET_NAMES)[number];

/** True when `name` is one of {@link TARGET_NAMES}. */
export function isTargetName(name: unknown): name is TargetName {
  return typeof name === 'string' && (TARGET_NAMES as readonly string[]).includes(name);
}
export type Vendor = 'amd' | 'nvidia';
export type Axis = 'x' | 'y' | 'z';
/** The LLVM major version the emitted text is written for. */
export type Flavor = 'llvm22';
export const FLAVORS: readonly Flavor[] = ['llvm22'];
/** Input element type of an MMA atom (accumulation is always f32). */
export type MmaDtype = 'f16' | 'bf16';

/** A matrix coordinate: `row` and `col` of A (m×k), B (k×n) or C/D (m×n). */
export interface MatrixCoord {
  readonly row: number;
  readonly col: number;
}

/**
 * One wave-wide matrix multiply-accumulate `D = A·B + C` (A m×k, B k×n, C/D m×n, f32 accumulate).
 * Each lane holds `aType.count` elements of A, `bType.count` of B and `cType.count` of C/D;
 * the layout functions say which matrix element vector element `i` of lane `lane` holds.
 */
export interface MmaAtom {
  /** `${m}x${n}x${k}.${dtype}`, e.g. `32x32x16.bf16`. */
  readonly name: string;
  readonly target: TargetName;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: MmaDtype;
  /** Lanes taking part (the wave/warp size). */
  readonly lanes: number;
  /** Kernel-facing operand types: A `<ka x half|bfloat>`, B `<kb x half|bfloat>`, C/D `<kc x float>`. */
  readonly aType: VectorType;
  readonly bType: VectorType;
  readonly cType: VectorType;
  /** A element held by vector element `i` of lane `lane`: `{row: m index, col: k index}`. */
  a(lane: number, i: number): MatrixCoord;
  /** B element: `{row: k index, col: n index}`. */
  b(lane: number, i: number): MatrixCoord;
  /** C/D element: `{row: m index, col: n index}`. */
  c(lane: number, i: number): MatrixCoord;
  /** IR twins of `a`/`b`/`c` for a runtime lane (i32) and a constant element index: same formulas, emitted as i32 arithmetic. */
  aAt(b: Builder, lane: Value, i: number): { row: Value; col: Value };
  bAt(b: Builder, lane: Value, i: number): { row: Value; col: Value };
  cAt(b: Builder, lane: Value, i: number): { row: Value; col: Value };
  /** The LLVM intrinsic the atom lowers to. */
  readonly intrinsic: string;
  /** The machine instruction mnemonic it becomes (what a disassembly shows). */
  readonly instruction: string;
  /** Emits the multiply-accumulate; returns D with type `cType`. */
  emit(b: Builder, a: Value, bv: Value, c: Value): Value;
}

/**
 * The register file residency is computed from. AMD (`simd`): each SIMD (4 per CU) has `perLane`
 * 32-bit registers per lane, VGPRs and AGPRs from one file (gfx90a and later), and holds at most
 * `maxWavesPerSimd` waves. NVIDIA (`file`): `perUnit` registers per SM, at most `maxPerThread` per thread.
 */
export type RegisterFile =
  | { readonly kind: 'simd'; readonly simdsPerUnit: number; readonly perLane: number; readonly maxWavesPerSimd: number }
  | { readonly kind: 'file'; readonly perUnit: number; readonly maxPerThread: number };

/** A kernel parameter. Pointers to global memory are `ptr(1)`. */
export interface KernelParam {
  readonly name: string;
  readonly type: Type;
  /** Extra parameter attributes (`noalias`, `readonly`, `align 16`, ...). */
  readonly attributes?: readonly string[];
}

export interface KernelOptions {
  /** Threads per workgroup (flat; the kernels are 1-D): bounds what the launch may use. */
  readonly workgroupSize: number;
  /** AMD `amdgpu-waves-per-eu` ("min" or [min, max]); ignored on NVIDIA. */
  readonly wavesPerEu?: number | readonly [number, number];
  /** NVIDIA `nvvm.minctasm` (min resident blocks per SM); ignored on AMD. */
  readonly minBlocksPerSm?: number;
  /** NVIDIA `nvvm.maxnreg` (register cap per thread, `.maxnreg`); ignored on AMD. */
  readonly maxRegisters?: number;
  /** Axes of the workitem/workgroup ids the kernel reads (default: workitem x; workgroup x, y, z). Asking for another is an error. */
  readonly ids?: { readonly workitem?: readonly Axis[]; readonly workgroup?: readonly Axis[] };
  /** More function attributes, appended after the target's. */
  readonly attributes?: readonly FnAttribute[];
}

/**
 * A global-memory window with out-of-range semantics: `globalLoad` of bytes at or past
 * `numBytes` returns zero and `globalStore` there writes nothing. Make one per tensor per kernel.
 */
export interface GlobalBuffer {
  readonly vendor: Vendor;
  /** AMD: the `ptr addrspace(8)` buffer resource. NVIDIA: the base `ptr addrspace(1)`. */
  readonly handle: Value;
  /** Range in bytes as `i64`. */
  readonly numBytes: Value;
}

/** Asynchronous global → LDS copies, completed in commit groups. */
export interface AsyncCopy {
  /**
   * Starts a 16-byte copy from `byteOffset` (i32, unsigned) of `buf` to `dst` (`ptr addrspace(3)`,
   * 16-byte aligned). A copy not wholly inside the buffer's range writes 16 zero bytes instead
   * (`cp.async.cg` with src-size 0, reading nothing).
   */
  copy(b: Builder, buf: GlobalBuffer, byteOffset: Value, dst: Value): void;
  /** Closes the current group of copies (`cp.async.commit_group`). */
  commit(b: Builder): void;
  /** Waits until at most `pending` committed groups are still in flight (`cp.async.wait_group`); this thread's copies only — a barrier publishes them. */
  wait(b: Builder, pending: number): void;
}

/**
 * AMD direct-to-LDS buffer loads (`llvm.amdgcn.raw.ptr.buffer.load.lds`, `buffer_load_* ... lds`):
 * each lane of a wave reads `size` bytes at its own byte offset of a buffer and the hardware writes
 * them to LDS with no register in between, lane-contiguously: lane `l` lands at
 * `ldsBase + l * size`, where `ldsBase` is one address per wave (it travels in M0). Bytes outside
 * the buffer's range arrive as zeros, under the same per-dword rule as `globalLoad`.
 */
export interface LdsDma {
  /** Bytes one lane may move per load on this target (gfx950: 1, 2, 4, 12, 16; gfx942: 1, 2, 4). */
  readonly sizes: readonly number[];
  /**
   * Starts a load of `size` bytes per lane from `byteOffset` (i32, unsigned, per lane) of `buf` to
   * `ldsBase + lane * size`. `ldsBase` (`ptr addrspace(3)`, aligned to `size` rounded up to 4) must
   * be the same in every lane of the wave. The data is in LDS only after {@link wait}; other waves
   * see it after a wait and then a barrier.
   */
  load(b: Builder, buf: GlobalBuffer, byteOffset: Value, ldsBase: Value, size: number): void;
  /** Waits for this wave's outstanding global loads, the direct-to-LDS ones included (`s_waitcnt vmcnt(0)`). */
  wait(b: Builder): void;
}

/**
 * NVIDIA sm_90a warpgroup MMA (`wgmma.mma_async`; the layouts below are checked on the H200 by
 * packages/ir/device/run.sh): `D[64 x n] += A[64 x 16] · B[16 x n]` over the 128 threads of a
 * warpgroup, A and B read from shared memory through 64-bit descriptors, f32 accumulators in
 * registers. Both operands are K-major without swizzle: an operand is made of core matrices of 8
 * rows x 16 bytes (8 rows of 8 elements along K), each 128 contiguous bytes; core matrix (row
 * group i, K group j) starts at `start + i*sbo + j*lbo`.
 */
/** Shared-memory layout of a wgmma operand (the descriptor's layout-type field, bits 62..63). */
export interface WgmmaDescriptorOptions {
  /**
   * 'none' (default): 8x16-byte core matrices at LBO / SBO. '128B': K-major rows of 128 bytes (64
   * 16-bit values), rows of an 8-row group 128 bytes apart, groups `sbo` apart (a multiple of 128),
   * LBO unused; 16-byte chunk bits 4..6 of each absolute address XORed with bits 7..9
   * (`swizzle128`). Base offset 0: the pattern is anchored at absolute address 0, so the buffer
   * it was written in must be 1 KiB aligned; starts may sit on any row (checked on the H200).
   */
  readonly swizzle?: 'none' | '128B';
}

export interface WarpgroupMma {
  /** Threads that issue one instruction together (4 warps, warpgroup-aligned). */
  readonly threads: 128;
  /**
   * The shared-memory descriptor (i64) of an operand starting at `address` (ptr addrspace(3),
   * 16-byte aligned). `lbo`: bytes between core matrices adjacent along K; `sbo`: between core
   * matrices adjacent along M (A) or N (B); multiples of 16 below 2^18. The start field is the
   * address in 16-byte units in bits 0..13, so adding `k` to a descriptor moves its start by
   * `16*k` bytes (while it stays inside shared memory). `options.swizzle`: see `WgmmaDescriptorOptions`
   * (a 128B-swizzled K-step of 16 values adds 2, i.e. 32 bytes, to the start).
   */
  descriptor(b: Builder, address: Value, lbo: number, sbo: number, options?: WgmmaDescriptorOptions): Value;
  /** `wgmma.fence`: orders this thread's register and shared-memory writes before the next wgmma. */
  fence(b: Builder): void;
  /** `wgmma.commit_group`: closes the group of wgmmas issued since the last commit. */
  commit(b: Builder): void;
  /** `wgmma.wait_group pending`: until then, neither accumulators nor operand memory of newer groups may be touched. */
  wait(b: Builder, pending: number): void;
  /** `fence.proxy.async.shared::cta`: makes this thread's generic-proxy shared writes (st.shared, cp.async) visible to wgmma. */
  proxyFence(b: Builder): void;
  /**
   * One `wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype}`: `acc` (n/2 f32 values per
   * thread, see `accAt`) plus A·B, or A·B alone when `accumulate` (i1 or boolean) is false.
   */
  mma(b: Builder, o: { readonly n: number; readonly dtype: MmaDtype; readonly a: Value; readonly b: Value; readonly acc: readonly Value[]; readonly accumulate?: Value | boolean }): Value[];
  /** Which D element accumulator `i` of warpgroup thread `thread` (0..127) holds: row = M index, col = N index. */
  accAt(thread: number, i: number): MatrixCoord;
  /** The inline asm text `mma` emits for a shape (the interpreter recognises exactly these strings). */
  asmText(n: number, dtype: MmaDtype): string;
}

/**
 * Programmatic dependent launch (sm_90 `griddepcontrol`). A kernel launched with programmatic
 * stream serialization may start before the kernel ahead of it in the stream has finished; it
 * must `wait` before touching memory that kernel writes or reads. Launched plainly, both are no-ops.
 */
export interface GridDependency {
  /** `griddepcontrol.wait`: until the grids this one depends on have completed and their memory is visible. */
  wait(b: Builder): void;
  /** `griddepcontrol.launch_dependents`: the next grid may launch once every workgroup of this one has said so or exited. */
  launchDependents(b: Builder): void;
}

/** Access options for global loads/stores. */
export interface GlobalAccessOptions {
  /** Alignment of the access (default: natural alignment of the type). */
  readonly align?: number;
  readonly name?: string;
}

export interface Target {
  readonly name: TargetName;
  readonly vendor: Vendor;
  readonly flavor: Flavor;
  readonly triple: string;
  /** The data layout LLVM 22 uses for this triple. */
  readonly dataLayout: string;
  /** `-mcpu` for llc. */
  readonly cpu: string;
  /** `-mattr` for llc (may be empty). */
  readonly features: string;
  /** Lanes per wave (AMD) / warp (NVIDIA). */
  readonly waveSize: number;
  /** Largest LDS / shared-memory allocation per workgroup in bytes (NVIDIA: with the dynamic opt-in). */
  readonly ldsBytes: number;
  /** NVIDIA: static shared memory above this must be dynamic. AMD: same as ldsBytes. */
  readonly staticLdsBytes: number;
  readonly maxThreadsPerBlock: number;
  // Residency: how workgroups share a compute unit (AMD CU, NVIDIA SM). README "Target facts" cites each number.
  /** Compute units (CUs) or SMs of the product built on this ISA that the project plans for: MI355X, MI300X, H200. */
  readonly computeUnits: number;
  /** Dies with their own L2 (AMD XCDs); workgroups are dealt round-robin across them. 1 on NVIDIA. */
  readonly chiplets: number;
  /** Resident threads per unit. */
  readonly maxThreadsPerUnit: number;
  /** LDS / shared memory per unit that its resident workgroups divide among themselves, bytes. */
  readonly sharedBytesPerUnit: number;
  /** Shared memory the runtime reserves per resident workgroup (1 KiB on sm_90), bytes. */
  readonly sharedReservedPerBlock: number;
  /** Resident workgroups per unit where the hardware caps them separately; null where waves cap them. */
  readonly maxBlocksPerUnit: number | null;
  readonly registers: RegisterFile;
  readonly kernelCallingConv: 'amdgpu_kernel' | 'ptx_kernel';
  /** Every MMA atom this target has. */
  readonly atoms: readonly MmaAtom[];

  /** A module with this target's triple, data layout and module flags. */
  createModule(): Module;
  /** Defines a kernel with the target's calling convention and attributes; returns a builder at its entry. */
  kernel(module: Module, name: string, params: readonly KernelParam[], options: KernelOptions): Builder;
  /** The function attributes `kernel` would attach (for inspection and tests). */
  kernelAttributes(options: KernelOptions): FnAttribute[];
  /** Thread index within the workgroup (i32). */
  workitemId(b: Builder, axis: Axis): Value;
  /** Workgroup (block) index within the grid (i32). */
  workgroupId(b: Builder, axis: Axis): Value;
  /** Lane index within the wave/warp (i32). */
  laneId(b: Builder): Value;
  /** Workgroup-wide barrier that also orders LDS/shared accesses across it. */
  barrier(b: Builder): void;
  /** Declares a global buffer of `numBytes` (i32 or i64) bytes starting at `base` (`ptr addrspace(1)`). */
  globalBuffer(b: Builder, base: Value, numBytes: Value): GlobalBuffer;
  /**
   * Loads `type` at `byteOffset` (i32, unsigned) from the buffer; zero when out of range.
   * Only accesses wholly inside or wholly outside the range are portable (AMD checks per dword).
   */
  globalLoad(b: Builder, buf: GlobalBuffer, byteOffset: Value, type: Type, options?: GlobalAccessOptions): Value;
  /** Stores `value` at `byteOffset` (i32, unsigned); dropped when out of range. */
  globalStore(b: Builder, buf: GlobalBuffer, byteOffset: Value, value: Value, options?: GlobalAccessOptions): void;
  /**
   * NVIDIA `ldmatrix.sync.aligned.m8n8.x{count}.b16` (absent on AMD): each of the first `8*count`
   * lanes passes the shared-memory address (`ptr addrspace(3)`, 16-byte aligned) of one 16-byte
   * row: lane `l` addresses row `l % 8` of matrix `l / 8`. Returns `count` i32 registers; register
   * `j` of lane `l` holds row `l / 4`, elements `2*(l % 4)` (bits 15:0) and `+1` of matrix `j`.
   */
  readonly matrixLoad?: (b: Builder, rowAddress: Value, count: 1 | 2 | 4) => Value[];
  /** Asynchronous global → shared copies (NVIDIA `cp.async`; absent on AMD). */
  readonly asyncCopy?: AsyncCopy;
  /** AMD direct-to-LDS buffer loads (absent on NVIDIA, whose counterpart is `asyncCopy`). */
  readonly ldsDma?: LdsDma;
  /** NVIDIA sm_90a warpgroup MMA (absent on AMD). */
  readonly warpgroupMma?: WarpgroupMma;
  /** NVIDIA sm_90 programmatic dependent launch (absent on AMD). */
  readonly gridDependency?: GridDependency;
  /** Looks an atom up by name (`32x32x16.bf16`) or shape; throws listing the available ones if absent. */
  atom(query: string | { m: number; n: number; k: number; dtype: MmaDtype }): MmaAtom;
  /** True when the target has the atom. */
  hasAtom(query: string | { m: number; n: number; k: number; dtype: MmaDtype }): boolean;

}

/** Thrown when a target is asked for something it does not have. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

function atomKey(q: string | { m: number; n: number; k: number; dtype: MmaDtype }): string {
  return typeof q === 'string' ? q : `${q.m}x${q.n}x${q.k}.${q.dtype}`;
}

/** The atom named (or shaped) `q` among `atoms`; a TargetError listing the available ones otherwise. */
function findAtom(target: TargetName, atoms: readonly MmaAtom[], q: string | { m: number; n: number; k: number; dtype: MmaDtype }): MmaAtom {
  const key = atomKey(q);
  const found = atoms.find((a) => a.name === key);
  if (!found) throw new TargetError(`${target} has no MMA atom ${key} (available: ${atoms.map((a) => a.name).join(', ')})`);
  return found;
}

export function checkKernelOptions(t: { name: string; maxThreadsPerBlock: number }, o: KernelOptions): void {
  if (!Number.isInteger(o.workgroupSize) || o.workgroupSize < 1 || o.workgroupSize > t.maxThreadsPerBlock) {
    throw new TargetError(`${t.name}: workgroupSize must be an integer in 1..${t.maxThreadsPerBlock}, got ${o.workgroupSize}`);
  }
}

// What the vendor targets share: the kernel definition, global-buffer argument checks and atom lookup.

/** `Target.kernel`: defines the kernel with the target's calling convention and attributes. */
export function defineKernel(t: Target, module: Module, name: string, params: readonly KernelParam[], o: KernelOptions): Builder {
  const fn = module.addFunction(name, voidT, params, { callingConv: t.kernelCallingConv, attributes: t.kernelAttributes(o) });
  return new Builder(module, fn);
}

/** The argument checks of `Target.globalBuffer`; returns the width of `numBytes`. */
export function checkGlobalBufferArgs(target: TargetName, base: Value, numBytes: Value): 32 | 64 {
  if (base.type.kind !== 'ptr' || base.type.addrspace !== 1) throw new TargetError(`${target}: global buffer base must be ptr addrspace(1), got ${typeToString(base.type)}`);
  if (numBytes.type.kind !== 'int' || (numBytes.type.bits !== 32 && numBytes.type.bits !== 64)) throw new TargetError(`${target}: buffer size must be i32 or i64, got ${typeToString(numBytes.type)}`);
  return numBytes.type.bits;
}

/** Global loads and stores address the buffer with an i32 byte offset. */
export function checkByteOffset(target: TargetName, byteOffset: Value): void {
  if (byteOffset.type.kind !== 'int' || byteOffset.type.bits !== 32) throw new TargetError(`${target}: buffer byte offsets are i32, got ${typeToString(byteOffset.type)}`);
}

/** `Target.atom` and `Target.hasAtom` over a fixed atom list. */
export function atomLookup(target: TargetName, atoms: readonly MmaAtom[]): Pick<Target, 'atom' | 'hasAtom'> {
  return {
    atom: (q) => findAtom(target, atoms, q),
    hasAtom: (q) => atoms.some((a) => a.name === atomKey(q)),
  };
}
