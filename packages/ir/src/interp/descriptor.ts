/**
 * The flags word (word 3, bits 127:96) of a gfx9-family buffer resource (V#) as gfx942 (CDNA3)
 * and gfx950 (CDNA4) read it, field by field, with the one value per field that a raw, untyped,
 * unswizzled buffer has. Sources, both in LLVM: the bit layout written out in
 * `mlir/lib/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.cpp` (`makeBufferRsrc`: dst_sel 0..11,
 * formats 12..14 and 15..18, nested heap 19, unmap 20, index stride 21..22, add tid 23, bit 24
 * 1 on RDNA and 0 on CDNA, NV 27 on CDNA, OOB select 28..29 on RDNA only, type 30..31), which
 * builds `(7 << 12) | (4 << 15)` for CDNA, and `llvm/lib/Target/AMDGPU/SIInstrInfo.h`
 * (`RSRC_DATA_FORMAT` = bits 12..15, `RSRC_INDEX_STRIDE_SHIFT` 21, `RSRC_TID_ENABLE` bit 23).
 * Names as Mesa's `S_008F0C_*` (NUM_FORMAT at 12 with BUF_NUM_FORMAT_FLOAT = 7, DATA_FORMAT at 15
 * with BUF_DATA_FORMAT_32 = 4). CDNA descriptors have no OOB_SELECT: their range check follows
 * from the instruction (see bufferLoad in intrinsics.ts).
 *
 * The value is exactly `CDNA_BUFFER_FLAGS`, what every AMD kernel here builds; anything else would
 * make the hardware treat the buffer differently from what the interpreter models (DATA_FORMAT 0
 * is the invalid format, ADD_TID_ENABLE adds thread id × stride to every address, INDEX_STRIDE
 * swizzles), so it is refused with the field named.
 */
import { InterpretError } from './errors.js';

interface Word3Field {
  readonly name: string;
  readonly lo: number;
  readonly bits: number;
  /** The value a raw buffer has (the kernels' CDNA_BUFFER_FLAGS). */
  readonly want: number;
  /** Why that value, for the error. */
  readonly why: string;
}

const dstSel = (c: string, lo: number): Word3Field => ({ name: `DST_SEL_${c}`, lo, bits: 3, want: 0, why: 'component selects are for format loads; raw buffers leave them 0' });

export const CDNA_WORD3_FIELDS: readonly Word3Field[] = [
  dstSel('X', 0), dstSel('Y', 3), dstSel('Z', 6), dstSel('W', 9),
  { name: 'NUM_FORMAT', lo: 12, bits: 3, want: 7, why: 'BUF_NUM_FORMAT_FLOAT' },
  { name: 'DATA_FORMAT', lo: 15, bits: 4, want: 4, why: 'BUF_DATA_FORMAT_32; 0 is the invalid format, and with ADD_TID_ENABLE these bits extend the stride' },
  { name: 'bits 19..20 (in-nested-heap, behaviour-on-unmap; ELEMENT_SIZE before gfx9)', lo: 19, bits: 2, want: 0, why: '0 reads unmapped pages as 0' },
  { name: 'INDEX_STRIDE', lo: 21, bits: 2, want: 0, why: 'for swizzled (scratch-style) buffers only' },
  { name: 'ADD_TID_ENABLE', lo: 23, bits: 1, want: 0, why: 'it adds thread id × stride to every address' },
  { name: 'bits 24..27 (reserved on CDNA; bit 27 NV)', lo: 24, bits: 4, want: 0, why: 'bit 24 is set only on RDNA, NV changes caching' },
  { name: 'bits 28..29 (OOB_SELECT on RDNA; none on CDNA)', lo: 28, bits: 2, want: 0, why: 'gfx942/gfx950 have no OOB_SELECT: the range check follows from the instruction' },
  { name: 'TYPE', lo: 30, bits: 2, want: 0, why: '0 is a buffer resource' },
];

/** Throws an InterpretError naming the first word-3 field of `flags` that differs from a CDNA raw buffer's. */
export function checkCdnaBufferFlags(flags: number, target: string): void {
  const w = flags >>> 0;
  for (const f of CDNA_WORD3_FIELDS) {
    const v = Math.floor(w / 2 ** f.lo) % 2 ** f.bits;
    if (v !== f.want) {
      throw new InterpretError(
        `buffer resource flags 0x${w.toString(16).padStart(8, '0')}: ${f.name} (bits ${f.lo}..${f.lo + f.bits - 1}) is ${v}, `
        + `a raw buffer on ${target} needs ${f.want} (${f.why}); the kernels build 0x${cdnaRawBufferFlags().toString(16).padStart(8, '0')}`,
      );
    }
  }
}

/** The word 3 the table describes, assembled from its fields. */
export function cdnaRawBufferFlags(): number {
  return CDNA_WORD3_FIELDS.reduce((w, f) => w + f.want * 2 ** f.lo, 0);
}
