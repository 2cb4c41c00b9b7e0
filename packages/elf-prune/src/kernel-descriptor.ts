import { ElfError } from './errors.js';

/** Size of an AMDHSA kernel descriptor (`<kernel>.kd`). */
export const KERNEL_DESCRIPTOR_SIZE = 64;

/** COMPUTE_PGM_RSRC1 fields (GFX6-GFX12 layout; GFX9 meaning). */
export interface PgmRsrc1 {
  granulatedWorkitemVgprCount: number;
  granulatedWavefrontSgprCount: number;
  priority: number;
  floatRoundMode32: number;
  floatRoundMode16_64: number;
  floatDenormMode32: number;
  floatDenormMode16_64: number;
  priv: boolean;
  dx10Clamp: boolean;
  debugMode: boolean;
  ieeeMode: boolean;
  bulky: boolean;
  cdbgUser: boolean;
  fp16Overflow: boolean;
}

/** COMPUTE_PGM_RSRC2 fields. */
export interface PgmRsrc2 {
  enablePrivateSegment: boolean;
  userSgprCount: number;
  enableTrapHandler: boolean;
  enableWorkgroupIdX: boolean;
  enableWorkgroupIdY: boolean;
  enableWorkgroupIdZ: boolean;
  enableWorkgroupInfo: boolean;
  /** 0: x only, 1: x,y, 2: x,y,z. */
  enableVgprWorkitemId: number;
  /** 0 in HSA code objects: the packet provides the LDS size. */
  granulatedLdsSize: number;
  /** Exception enable bits 30:24. */
  exceptionEnables: number;
}

/** COMPUTE_PGM_RSRC3 fields on GFX90A/GFX942/GFX950. */
export interface PgmRsrc3Gfx90a {
  /** Raw ACCUM_OFFSET field (bits 5:0). */
  accumOffsetField: number;
  /** First AGPR in the unified register file: `(field + 1) * 4`. */
  accumOffset: number;
  tgSplit: boolean;
}

/** `kernel_code_properties` flags. */
export interface KernelCodeProperties {
  enableSgprPrivateSegmentBuffer: boolean;
  enableSgprDispatchPtr: boolean;
  enableSgprQueuePtr: boolean;
  enableSgprKernargSegmentPtr: boolean;
  enableSgprDispatchId: boolean;
  enableSgprFlatScratchInit: boolean;
  enableSgprPrivateSegmentSize: boolean;
  enableWavefrontSize32: boolean;
  usesDynamicStack: boolean;
}

/** A decoded 64-byte AMDHSA kernel descriptor. */
export interface KernelDescriptor {
  /** Static LDS bytes. */
  groupSegmentFixedSize: number;
  /** Scratch bytes per work-item. */
  privateSegmentFixedSize: number;
  kernargSize: number;
  /** Signed byte offset from the descriptor to the kernel's first instruction. */
  kernelCodeEntryByteOffset: number;
  computePgmRsrc1: number;
  computePgmRsrc2: number;
  computePgmRsrc3: number;
  kernelCodePropertiesRaw: number;
  kernargPreloadRaw: number;
  rsrc1: PgmRsrc1;
  rsrc2: PgmRsrc2;
  rsrc3: PgmRsrc3Gfx90a;
  kernelCodeProperties: KernelCodeProperties;
  /** Kernarg preload: length in dwords (bits 6:0) and offset in dwords (bits 15:7). */
  kernargPreload: { length: number; offset: number };
  /**
   * Registers the hardware allocates per lane on GFX90A/GFX942/GFX950 (wave64): unified
   * VGPR+AGPR file, `(granulated + 1) * 8` (granule 8).
   */
  allocatedVgprs: number;
  /** SGPRs allocated per wave on GFX9: field = 2·(ceil(n/16) − 1), so `(field / 2 + 1) * 16`. */
  allocatedSgprs: number;
}

const bits = (word: number, lo: number, hi: number): number => (word >>> lo) & (2 ** (hi - lo + 1) - 1);
const bit = (word: number, b: number): boolean => ((word >>> b) & 1) === 1;

/**
 * Decodes a kernel descriptor from its 64 bytes. `offset` is the file offset of those bytes,
 * used only in error reports. Register granules follow the GFX90A+ rules (gfx90a/942/950).
 */
export function decodeKernelDescriptor(bytes: Uint8Array, offset = 0): KernelDescriptor {
  if (bytes.byteLength !== KERNEL_DESCRIPTOR_SIZE) {
    throw new ElfError(`kernel descriptor is ${bytes.byteLength} bytes, expected ${KERNEL_DESCRIPTOR_SIZE}`, offset);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entry = v.getBigInt64(16, true);
  const limit = BigInt(Number.MAX_SAFE_INTEGER);
  if (entry > limit || entry < -limit) throw new ElfError(`kernel_code_entry_byte_offset ${entry} is out of range`, offset + 16);
  const rsrc1 = v.getUint32(48, true);
  const rsrc2 = v.getUint32(52, true);
  const rsrc3 = v.getUint32(44, true);
  const kcp = v.getUint16(56, true);
  const preload = v.getUint16(58, true);
  const vgprField = bits(rsrc1, 0, 5);
  const sgprField = bits(rsrc1, 6, 9);
  const accumOffsetField = bits(rsrc3, 0, 5);
  return {
    groupSegmentFixedSize: v.getUint32(0, true),
    privateSegmentFixedSize: v.getUint32(4, true),
    kernargSize: v.getUint32(8, true),
    kernelCodeEntryByteOffset: Number(entry),
    computePgmRsrc1: rsrc1,
    computePgmRsrc2: rsrc2,
    computePgmRsrc3: rsrc3,
    kernelCodePropertiesRaw: kcp,
    kernargPreloadRaw: preload,
    rsrc1: {
      granulatedWorkitemVgprCount: vgprField,
      granulatedWavefrontSgprCount: sgprField,
      priority: bits(rsrc1, 10, 11),
      floatRoundMode32: bits(rsrc1, 12, 13),
      floatRoundMode16_64: bits(rsrc1, 14, 15),
      floatDenormMode32: bits(rsrc1, 16, 17),
      floatDenormMode16_64: bits(rsrc1, 18, 19),
      priv: bit(rsrc1, 20),
      dx10Clamp: bit(rsrc1, 21),
      debugMode: bit(rsrc1, 22),
      ieeeMode: bit(rsrc1, 23),
      bulky: bit(rsrc1, 24),
      cdbgUser: bit(rsrc1, 25),
      fp16Overflow: bit(rsrc1, 26),
    },
    rsrc2: {
      enablePrivateSegment: bit(rsrc2, 0),
      userSgprCount: bits(rsrc2, 1, 5),
      enableTrapHandler: bit(rsrc2, 6),
      enableWorkgroupIdX: bit(rsrc2, 7),
      enableWorkgroupIdY: bit(rsrc2, 8),
      enableWorkgroupIdZ: bit(rsrc2, 9),
      enableWorkgroupInfo: bit(rsrc2, 10),
      enableVgprWorkitemId: bits(rsrc2, 11, 12),
      granulatedLdsSize: bits(rsrc2, 15, 23),
      exceptionEnables: bits(rsrc2, 24, 30),
    },
    rsrc3: { accumOffsetField, accumOffset: (accumOffsetField + 1) * 4, tgSplit: bit(rsrc3, 16) },
    kernelCodeProperties: {
      enableSgprPrivateSegmentBuffer: bit(kcp, 0),
      enableSgprDispatchPtr: bit(kcp, 1),
      enableSgprQueuePtr: bit(kcp, 2),
      enableSgprKernargSegmentPtr: bit(kcp, 3),
      enableSgprDispatchId: bit(kcp, 4),
      enableSgprFlatScratchInit: bit(kcp, 5),
      enableSgprPrivateSegmentSize: bit(kcp, 6),
      enableWavefrontSize32: bit(kcp, 10),
      usesDynamicStack: bit(kcp, 11),
    },
    kernargPreload: { length: bits(preload, 0, 6), offset: bits(preload, 7, 15) },
    allocatedVgprs: (vgprField + 1) * 8,
    allocatedSgprs: (Math.floor(sgprField / 2) + 1) * 16,
  };
}
