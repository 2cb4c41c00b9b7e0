/** NVIDIA sm_90 (H100/H200): nvptx64-nvidia-cuda, warp32, predicated global memory, mma.sync. */
import type { Builder } from '../builder.js';
import { zero } from '../constants.js';
import type { FnAttribute, Value } from '../ir.js';
import { Module } from '../module.js';
import { i32, i64, i8, storeSizeOf, struct, typeToString, voidT } from '../types.js';
import { mmaSyncAtom } from './atoms.js';
import { warpgroupMma } from './wgmma.js';
import type { AsyncCopy, Axis, GlobalBuffer, GridDependency, KernelOptions, KernelParam, Target } from './target.js';
import { TargetError, atomLookup, checkByteOffset, checkGlobalBufferArgs, checkKernelOptions, defineKernel } from './target.js';

/** LLVM 22's data layout for nvptx64-nvidia-cuda. */
export const NVPTX64_DATA_LAYOUT = 'e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64';

/** Address and in-range predicate (`offset + size <= numBytes`, offset unsigned) of an access. */
function access(b: Builder, buf: GlobalBuffer, byteOffset: Value, bytes: number): { addr: Value; inRange: Value } {
  if (buf.vendor !== 'nvidia') throw new TargetError(`sm_90: buffer was made for ${buf.vendor}`);
  checkByteOffset('sm_90', byteOffset);
  const off = b.zext(byteOffset, i64);
  const end = b.add(off, bytes);
  const inRange = b.icmp('ule', end, buf.numBytes, 'in.range');
  const addr = b.gep(i8, buf.handle, [off]);
  return { addr, inRange };
}

function checkSharedPtr(what: string, p: Value): void {
  if (p.type.kind !== 'ptr' || p.type.addrspace !== 3) throw new TargetError(`sm_90: ${what} must be ptr addrspace(3), got ${typeToString(p.type)}`);
}

/** `ldmatrix` x1/x2/x4 (non-transposed, 16-bit elements). */
function matrixLoad(b: Builder, rowAddress: Value, count: 1 | 2 | 4): Value[] {
  checkSharedPtr('ldmatrix row address', rowAddress);
  if (count !== 1 && count !== 2 && count !== 4) throw new TargetError(`sm_90: ldmatrix loads 1, 2 or 4 matrices, got ${String(count)}`);
  const ret = count === 1 ? i32 : struct(Array(count).fill(i32));
  const r = b.intrinsic(`llvm.nvvm.ldmatrix.sync.aligned.m8n8.x${count}.b16.p3`, ret, [rowAddress]);
  return count === 1 ? [r] : Array.from({ length: count }, (_, j) => b.extractValue(r, [j]));
}

const gridDependency: GridDependency = {
  wait: (b) => void b.intrinsic('llvm.nvvm.griddepcontrol.wait', voidT, []),
  launchDependents: (b) => void b.intrinsic('llvm.nvvm.griddepcontrol.launch.dependents', voidT, []),
};

const asyncCopy: AsyncCopy = {
  copy(b, buf, byteOffset, dst) {
    checkSharedPtr('cp.async destination', dst);
    const { addr, inRange } = access(b, buf, byteOffset, 16);
    // src-size 0 zero-fills the 16 bytes; the source must still be a valid address, so use the base.
    const src = b.select(inRange, addr, buf.handle);
    const size = b.select(inRange, 16, 0);
    b.intrinsic('llvm.nvvm.cp.async.cg.shared.global.16.s', voidT, [dst, src, size]);
  },
  commit: (b) => void b.intrinsic('llvm.nvvm.cp.async.commit.group', voidT, []),
  wait(b, pending) {
    if (!Number.isInteger(pending) || pending < 0) throw new TargetError(`sm_90: cp.async wait count must be a non-negative integer, got ${pending}`);
    b.intrinsic('llvm.nvvm.cp.async.wait.group', voidT, [pending]);
  },
};

/**
 * sm_90 (compiled as sm_90a, the H100/H200 feature set, so wgmma is available): 227 KiB shared
 * memory per block with the dynamic opt-in (48 KiB static), mma.sync m16n8k16 and warpgroup MMA.
 */
export function sm90Target(): Target {
  const atoms = [mmaSyncAtom('sm_90', 'f16'), mmaSyncAtom('sm_90', 'bf16')];
  const t: Target = {
    name: 'sm_90',
    vendor: 'nvidia',
    flavor: 'llvm22',
    triple: 'nvptx64-nvidia-cuda',
    dataLayout: NVPTX64_DATA_LAYOUT,
    cpu: 'sm_90a',
    features: '+ptx80',
    waveSize: 32,
    ldsBytes: 227 * 1024,
    staticLdsBytes: 48 * 1024,
    maxThreadsPerBlock: 1024,
    // Compute capability 9.0 per-SM limits; 132 SMs on the H200.
    computeUnits: 132,
    chiplets: 1,
    maxThreadsPerUnit: 2048,
    sharedBytesPerUnit: 228 * 1024,
    sharedReservedPerBlock: 1024,
    maxBlocksPerUnit: 32,
    registers: Object.freeze({ kind: 'file', perUnit: 65536, maxPerThread: 255 }),
    kernelCallingConv: 'ptx_kernel',
    atoms: Object.freeze(atoms),

    createModule: () => new Module({ triple: t.triple, dataLayout: t.dataLayout }),

    kernelAttributes(o: KernelOptions): FnAttribute[] {
      checkKernelOptions(t, o);
      // LLVM 21+ spells launch bounds as function attributes (legacy !nvvm.annotations are auto-upgraded).
      const attrs: FnAttribute[] = [{ key: 'nvvm.maxntid', value: `${o.workgroupSize},1,1` }];
      if (o.minBlocksPerSm !== undefined) {
        if (!Number.isInteger(o.minBlocksPerSm) || o.minBlocksPerSm < 1) throw new TargetError(`sm_90: minBlocksPerSm must be a positive integer, got ${o.minBlocksPerSm}`);
        attrs.push({ key: 'nvvm.minctasm', value: `${o.minBlocksPerSm}` });
      }
      if (o.maxRegisters !== undefined) {
        if (!Number.isInteger(o.maxRegisters) || o.maxRegisters < 16 || o.maxRegisters > 255) throw new TargetError(`sm_90: maxRegisters must be an integer in 16..255, got ${o.maxRegisters}`);
        attrs.push({ key: 'nvvm.maxnreg', value: `${o.maxRegisters}` });
      }
      attrs.push(...(o.attributes ?? []));
      return attrs;
    },

    kernel: (module: Module, name: string, params: readonly KernelParam[], o: KernelOptions): Builder => defineKernel(t, module, name, params, o),

    workitemId: (b: Builder, axis: Axis) => b.intrinsic(`llvm.nvvm.read.ptx.sreg.tid.${axis}`, i32, [], { name: `tid.${axis}` }),
    workgroupId: (b: Builder, axis: Axis) => b.intrinsic(`llvm.nvvm.read.ptx.sreg.ctaid.${axis}`, i32, [], { name: `wgid.${axis}` }),
    laneId: (b: Builder) => b.intrinsic('llvm.nvvm.read.ptx.sreg.laneid', i32, [], { name: 'lane' }),

    barrier(b: Builder): void {
      // bar.sync orders shared-memory accesses of the block; this is LLVM 22's name for barrier0.
      b.intrinsic('llvm.nvvm.barrier.cta.sync.aligned.all', voidT, [0]);
    },

    globalBuffer(b: Builder, base: Value, numBytes: Value): GlobalBuffer {
      const sizeBits = checkGlobalBufferArgs('sm_90', base, numBytes);
      return { vendor: 'nvidia', handle: base, numBytes: sizeBits === 64 ? numBytes : b.zext(numBytes, i64) };
    },

    globalLoad(b, buf, byteOffset, type, o = {}): Value {
      const { addr, inRange } = access(b, buf, byteOffset, storeSizeOf(type));
      // A guarded load (ptxas predicates it): an out-of-range address is never dereferenced.
      const [v] = b.ifThenElse(inRange, () => [b.load(type, addr, { align: o.align })], () => [zero(type)], o.name ?? 'gload');
      return v!;
    },

    globalStore(b, buf, byteOffset, value, o = {}): void {
      const { addr, inRange } = access(b, buf, byteOffset, storeSizeOf(value.type));
      b.ifThen(inRange, () => b.store(value, addr, { align: o.align }), 'gstore');
    },

    matrixLoad,
    asyncCopy,
    warpgroupMma,
    gridDependency,
    ...atomLookup('sm_90', atoms),
  };
  return t;
}
