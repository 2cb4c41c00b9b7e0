import { SHT_NOBITS } from './elf.js';
import type { ElfFile, ElfSection } from './elf.js';
import { ElfError } from './errors.js';

/** `.nv.info` record formats (first byte of each record). */
export const EIFMT_NVAL = 1;
export const EIFMT_BVAL = 2;
export const EIFMT_HVAL = 3;
export const EIFMT_SVAL = 4;

/** EIATTR codes this package interprets (ptxas 13 / sm_90), by the names `cuobjdump -elf` prints; the README's Code facts table says what each feeds. */
export const EIATTR = {
  MAX_THREADS: 0x05,
  PARAM_CBANK: 0x0a,
  REQNTID: 0x10,
  FRAME_SIZE: 0x11,
  MIN_STACK_SIZE: 0x12,
  KPARAM_INFO: 0x17,
  CBANK_PARAM_SIZE: 0x19,
  MAXREG_COUNT: 0x1b,
  EXIT_INSTR_OFFSETS: 0x1c,
  MAX_STACK_SIZE: 0x23,
  REGCOUNT: 0x2f,
  NUM_BARRIERS: 0x4c,
  ANNOTATIONS: 0x55,
} as const;

/** Annotation kind that cuobjdump prints as "SpillRefill": one entry per spill or refill instruction. */
export const ANNOTATION_SPILL_REFILL = 1;

/** One `.nv.info` record. */
export interface NvInfoRecord {
  format: number;
  attr: number;
  /** File offset of the record's first byte. */
  offset: number;
  /** NVAL: null; BVAL/HVAL: the 16-bit value; SVAL: null. */
  value: number | null;
  /** SVAL payload (a view); empty for the other formats. */
  payload: Uint8Array;
}

/**
 * Splits an `.nv.info` section into records. Every record is at least 4 bytes, so the loop
 * is bounded by the section size; an SVAL length past the section end is an ElfError.
 */
export function readNvInfo(elf: ElfFile, info: ElfSection): NvInfoRecord[] {
  const r = elf.reader;
  const section = info.name;
  if (info.type === SHT_NOBITS) throw new ElfError(`${section} has no contents (SHT_NOBITS)`, info.headerOffset);
  const offset = info.offset;
  r.check(offset, info.size, section, info.headerOffset);
  const end = offset + info.size;
  const out: NvInfoRecord[] = [];
  let at = offset;
  while (at < end) {
    if (end - at < 4) throw new ElfError(`${section}: ${end - at} trailing bytes, too short for a record`, at);
    const format = r.u8(at, `${section} record format`);
    const attr = r.u8(at + 1, `${section} record attribute`);
    if (format === EIFMT_SVAL) {
      const length = r.u16(at + 2, `${section} record length`);
      if (at + 4 + length > end) throw new ElfError(`${section}: attribute 0x${attr.toString(16)} length ${length} runs past the section`, at);
      out.push({ format, attr, offset: at, value: null, payload: r.bytes(at + 4, length, `${section} payload`) });
      at += 4 + length;
    } else if (format === EIFMT_NVAL || format === EIFMT_BVAL || format === EIFMT_HVAL) {
      const value = format === EIFMT_NVAL ? null : r.u16(at + 2, `${section} record value`);
      out.push({ format, attr, offset: at, value, payload: new Uint8Array(0) });
      at += 4;
    } else {
      throw new ElfError(`${section}: unknown record format ${format}`, at);
    }
  }
  return out;
}

/** The little-endian u32 words of an SVAL payload; its length must be a multiple of 4. */
export function payloadWords(record: NvInfoRecord, section: string): number[] {
  const p = record.payload;
  if (record.format !== EIFMT_SVAL || p.byteLength % 4 !== 0) {
    throw new ElfError(`${section}: attribute 0x${record.attr.toString(16)} payload is not a list of 32-bit words`, record.offset);
  }
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const words: number[] = [];
  for (let i = 0; i < p.byteLength; i += 4) words.push(v.getUint32(i, true));
  return words;
}
