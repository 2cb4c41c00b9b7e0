/** AMD CDNA targets (gfx950, gfx942): amdgcn-amd-amdhsa, wave64, buffer-resource global memory. */
import type { Builder } from '../builder.js';
import { constInt } from '../constants.js';
import type { FnAttribute, Value } from '../ir.js';
import { mangleType } from '../intrinsics.js';
import { Module } from '../module.js';
import { i16, i32, i64, ptr, scalarOf, storeSizeOf, typeToString, voidT } from '../types.js';
import type { Type } from '../types.js';
import { mfmaAtom } from './atoms.js';
import type { Axis, GlobalBuffer, KernelOptions, KernelParam, LdsDma, MmaAtom, Target } from './target.js';
import { TargetError, atomLookup, checkByteOffset, checkGlobalBufferArgs, checkKernelOptions, defineKernel } from './target.js';

/** LLVM 22's data layout for amdgcn-amd-amdhsa (`opt-22 -mtriple=amdgcn-amd-amdhsa` prints it). */
export const AMDGPU_DATA_LAYOUT =
  'e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9';

/** V# word 3 for raw buffers on gfx9/CDNA: num_format 7, data_format 4 (data_format must be non-zero there). */
export const CDNA_BUFFER_FLAGS = 0x00027000;

/** Implicit inputs these kernels never use; declaring them lets llc drop user SGPRs and the 256-byte hidden kernarg block. */
const unusedImplicitInputs = [
  'amdgpu-no-implicitarg-ptr', 'amdgpu-no-dispatch-ptr', 'amdgpu-no-queue-ptr', 'amdgpu-no-dispatch-id',
  'amdgpu-no-hostcall-ptr', 'amdgpu-no-heap-ptr', 'amdgpu-no-multigrid-sync-arg', 'amdgpu-no-completion-action',
  'amdgpu-no-default-queue', 'amdgpu-no-lds-kernel-id',
];

const axes: readonly Axis[] = ['x', 'y', 'z'];

/** Sizes a raw buffer access may have (bytes): byte, short, dword, dwordx2/x3/x4. */
const bufferAccessSizes = new Set([1, 2, 4, 8, 12, 16]);

function checkBufferType(target: string, t: Type): void {
  const s = scalarOf(t);
  if ((s.kind !== 'int' && s.kind !== 'float') || !bufferAccessSizes.has(storeSizeOf(t))) {
    throw new TargetError(`${target}: buffer access of ${typeToString(t)} is not supported (use 1, 2, 4, 8, 12 or 16 bytes of ints/floats)`);
  }
}

export interface AmdTargetSpec {
  readonly name: 'gfx950' | 'gfx942';
  readonly ldsBytes: number;
  /** CUs of the product (MI355X: 256, MI300X: 304). */
  readonly computeUnits: number;
  readonly atoms: readonly MmaAtom[];
  /** Bytes per lane of its direct-to-LDS buffer loads (LLVM selects 12 and 16 for gfx950 only). */
  readonly ldsDmaSizes: readonly number[];
  /** `amdhsa_code_object_version` module flag (500 = v5, 600 = v6); undefined leaves LLVM's default (v6 in LLVM 22). */
  readonly codeObjectVersion: number | undefined;
}

export function amdTarget(spec: AmdTargetSpec): Target {
  const t: Target = {
    name: spec.name,
    vendor: 'amd',
    flavor: 'llvm22',
    triple: 'amdgcn-amd-amdhsa',
    dataLayout: AMDGPU_DATA_LAYOUT,
    cpu: spec.name,
    features: '',
    waveSize: 64,
    ldsBytes: spec.ldsBytes,
    staticLdsBytes: spec.ldsBytes,
    maxThreadsPerBlock: 1024,
    computeUnits: spec.computeUnits,
    // CDNA3 and CDNA4 parts: 8 XCDs; a CU's LDS is the whole per-workgroup limit; 4 SIMDs of 512
    // registers per lane, at most 8 waves each (2048 threads per CU at wave64).
    chiplets: 8,
    maxThreadsPerUnit: 2048,
    sharedBytesPerUnit: spec.ldsBytes,
    sharedReservedPerBlock: 0,
    maxBlocksPerUnit: null,
    registers: Object.freeze({ kind: 'simd', simdsPerUnit: 4, perLane: 512, maxWavesPerSimd: 8 }),
    kernelCallingConv: 'amdgpu_kernel',
    atoms: Object.freeze([...spec.atoms]),

    createModule(): Module {
      const m = new Module({ triple: t.triple, dataLayout: t.dataLayout });
      if (spec.codeObjectVersion !== undefined) m.addFlag(1, 'amdhsa_code_object_version', spec.codeObjectVersion);
      return m;
    },

    kernelAttributes(o: KernelOptions): FnAttribute[] {
      checkKernelOptions(t, o);
      const attrs: FnAttribute[] = [{ key: 'amdgpu-flat-work-group-size', value: `${o.workgroupSize},${o.workgroupSize}` }];
      if (o.wavesPerEu !== undefined) {
        const [lo, hi] = typeof o.wavesPerEu === 'number' ? [o.wavesPerEu, undefined] : o.wavesPerEu;
        const ok = (v: number | undefined) => v === undefined || (Number.isInteger(v) && v >= 1 && v <= 8);
        if (!ok(lo) || !ok(hi) || (hi !== undefined && hi < lo)) throw new TargetError(`${t.name}: wavesPerEu must be 1..8 (min <= max), got ${JSON.stringify(o.wavesPerEu)}`);
        attrs.push({ key: 'amdgpu-waves-per-eu', value: hi === undefined ? `${lo}` : `${lo},${hi}` });
      }
      const workitem = o.ids?.workitem ?? ['x'];
      const workgroup = o.ids?.workgroup ?? axes;
      for (const a of axes) if (!workitem.includes(a)) attrs.push({ key: `amdgpu-no-workitem-id-${a}` });
      for (const a of axes) if (!workgroup.includes(a)) attrs.push({ key: `amdgpu-no-workgroup-id-${a}` });
      for (const k of unusedImplicitInputs) attrs.push({ key: k });
      attrs.push({ key: 'uniform-work-group-size', value: 'true' });
      attrs.push(...(o.attributes ?? []));
      return attrs;
    },

    kernel: (module: Module, name: string, params: readonly KernelParam[], o: KernelOptions): Builder => defineKernel(t, module, name, params, o),

    workitemId(b: Builder, axis: Axis): Value {
      requireId(b, 'workitem', axis);
      return b.intrinsic(`llvm.amdgcn.workitem.id.${axis}`, i32, [], { name: `tid.${axis}` });
    },

    workgroupId(b: Builder, axis: Axis): Value {
      requireId(b, 'workgroup', axis);
      return b.intrinsic(`llvm.amdgcn.workgroup.id.${axis}`, i32, [], { name: `wgid.${axis}` });
    },

    laneId(b: Builder): Value {
      // mbcnt counts the set bits of the mask below this lane: with an all-ones mask that is the lane index.
      const lo = b.intrinsic('llvm.amdgcn.mbcnt.lo', i32, [-1, 0]);
      return b.intrinsic('llvm.amdgcn.mbcnt.hi', i32, [-1, lo], { name: 'lane' });
    },

    barrier(b: Builder): void {
      // s_barrier alone does not wait for LDS writes on gfx942/950: the fences add the s_waitcnt.
      b.fence('release', 'workgroup');
      b.intrinsic('llvm.amdgcn.s.barrier', voidT, []);
      b.fence('acquire', 'workgroup');
    },

    globalBuffer(b: Builder, base: Value, numBytes: Value): GlobalBuffer {
      const sizeBits = checkGlobalBufferArgs(spec.name, base, numBytes);
      // CDNA descriptors keep the low 32 bits of num_records: clamp an i64 size so a range past 4 GiB
      // stays "everything a 32-bit offset reaches" instead of wrapping to a tiny one.
      const n64 = sizeBits === 64 ? b.umin(numBytes, 0xffffffff, 'num.records') : b.zext(numBytes, i64);
      // LLVM 22 takes num_records as i64 (the i32 form no longer verifies).
      const rsrc = b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [base, constInt(i16, 0), n64, CDNA_BUFFER_FLAGS], { name: 'rsrc' });
      return { vendor: 'amd', handle: rsrc, numBytes: n64 };
    },

    globalLoad(b, buf, byteOffset, type, o = {}): Value {
      if (buf.vendor !== 'amd') throw new TargetError(`${t.name}: buffer was made for ${buf.vendor}`);
      checkBufferType(t.name, type);
      checkByteOffset(spec.name, byteOffset);
      return b.intrinsic(`llvm.amdgcn.raw.ptr.buffer.load.${mangleType(type)}`, type, [buf.handle, byteOffset, 0, 0], { name: o.name });
    },

    globalStore(b, buf, byteOffset, value): void {
      if (buf.vendor !== 'amd') throw new TargetError(`${t.name}: buffer was made for ${buf.vendor}`);
      checkBufferType(t.name, value.type);
      checkByteOffset(spec.name, byteOffset);
      b.intrinsic(`llvm.amdgcn.raw.ptr.buffer.store.${mangleType(value.type)}`, voidT, [value, buf.handle, byteOffset, 0, 0]);
    },

    ldsDma: ldsDma(spec.name, spec.ldsDmaSizes),
    ...atomLookup(spec.name, spec.atoms),
  };
  return t;
}

/**
 * `s_waitcnt vmcnt(0)` on gfx9 (CDNA): vmcnt in bits 3:0 and 15:14 zero, expcnt (6:4) and lgkmcnt
 * (11:8) at their maxima, i.e. not waited for.
 */
export const WAITCNT_VMCNT0 = 0x0f70;

/** Direct-to-LDS buffer loads with the sizes `sizes` (see `LdsDma`). */
function ldsDma(target: 'gfx950' | 'gfx942', sizes: readonly number[]): LdsDma {
  return Object.freeze({
    sizes: Object.freeze([...sizes]),
    load(b: Builder, buf: GlobalBuffer, byteOffset: Value, ldsBase: Value, size: number): void {
      if (buf.vendor !== 'amd') throw new TargetError(`${target}: buffer was made for ${buf.vendor}`);
      if (!sizes.includes(size)) throw new TargetError(`${target}: direct-to-LDS loads move ${sizes.join(', ')} bytes per lane, not ${size}`);
      checkByteOffset(target, byteOffset);
      if (ldsBase.type.kind !== 'ptr' || ldsBase.type.addrspace !== 3) throw new TargetError(`${target}: the LDS base of a direct-to-LDS load must be ptr addrspace(3), got ${typeToString(ldsBase.type)}`);
      // soffset, the immediate offset and the cache-policy bits stay 0: the per-lane offset carries the address.
      b.intrinsic('llvm.amdgcn.raw.ptr.buffer.load.lds', voidT, [buf.handle, ldsBase, size, byteOffset, 0, 0, 0]);
    },
    wait(b: Builder): void {
      b.intrinsic('llvm.amdgcn.s.waitcnt', voidT, [WAITCNT_VMCNT0]);
    },
  });
}

function requireId(b: Builder, kind: 'workitem' | 'workgroup', axis: Axis): void {
  if (b.fn.attributes.some((a) => a.key === `amdgpu-no-${kind}-id-${axis}`)) {
    throw new TargetError(`@${b.fn.name} was declared without ${kind} id ${axis}; list it in kernel options ids.${kind}`);
  }
}


/** gfx950 (CDNA4, MI350): 160 KiB LDS, MFMA 32x32x16 and 16x16x32 in f16 and bf16. */
export function gfx950Atoms(): MmaAtom[] {
  const mk = (mn: 16 | 32, k: number, dtype: 'f16' | 'bf16') => mfmaAtom({
    target: 'gfx950', mn, k, dtype, bitsAsI16: false,
    intrinsic: `llvm.amdgcn.mfma.f32.${mn}x${mn}x${k}.${dtype}`,
    instruction: `v_mfma_f32_${mn}x${mn}x${k}_${dtype}`,
  });
  return [mk(32, 16, 'f16'), mk(32, 16, 'bf16'), mk(16, 32, 'f16'), mk(16, 32, 'bf16')];
}

/** gfx942 (CDNA3, MI300): MFMA 32x32x8 and 16x16x16; bf16 through the `.1k` `<4 x i16>` forms. */
export function gfx942Atoms(): MmaAtom[] {
  const mk = (mn: 16 | 32, k: number, dtype: 'f16' | 'bf16') => mfmaAtom({
    target: 'gfx942', mn, k, dtype, bitsAsI16: dtype === 'bf16',
    intrinsic: dtype === 'bf16' ? `llvm.amdgcn.mfma.f32.${mn}x${mn}x${k}bf16.1k` : `llvm.amdgcn.mfma.f32.${mn}x${mn}x${k}f16`,
    instruction: `v_mfma_f32_${mn}x${mn}x${k}_${dtype}`,
  });
  return [mk(32, 8, 'f16'), mk(32, 8, 'bf16'), mk(16, 16, 'f16'), mk(16, 16, 'bf16')];
}
