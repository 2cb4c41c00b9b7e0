import { ByteReader } from './bytes.js';
import { ElfError } from './errors.js';

/** ELF constants this package needs (System V gABI). */
export const ET_REL = 1;
export const ET_EXEC = 2;
export const ET_DYN = 3;
export const SHT_NULL = 0;
export const SHT_SYMTAB = 2;
export const SHT_STRTAB = 3;
export const SHT_NOTE = 7;
export const SHT_NOBITS = 8;
export const SHT_DYNSYM = 11;
export const STT_OBJECT = 1;
export const STT_FUNC = 2;
export const EM_AMDGPU = 224;
export const EM_CUDA = 190;

const EHDR_SIZE = 64;
const SHDR_SIZE = 64;
const SYM_SIZE = 24;
const SHN_UNDEF = 0;
const SHN_LORESERVE = 0xff00;
const SHN_XINDEX = 0xffff;

/** The ELF64 file header. */
export interface ElfHeader {
  /** EI_OSABI (64 = AMDGPU HSA; cubins carry 0x41). */
  osabi: number;
  /** EI_ABIVERSION (AMDGPU code object: 2 = v4, 3 = v5, 4 = v6). */
  abiVersion: number;
  /** e_type: 1 relocatable, 2 executable, 3 shared object. */
  type: number;
  /** e_machine: 224 AMDGPU, 190 CUDA. */
  machine: number;
  version: number;
  entry: number;
  phoff: number;
  shoff: number;
  /** e_flags: the GPU model lives here for both vendors. */
  flags: number;
  phentsize: number;
  phnum: number;
  shentsize: number;
  shnum: number;
  shstrndx: number;
}

/** One section header, with its name resolved. */
export interface ElfSection {
  index: number;
  /** File offset of this section's header (where errors about the section point). */
  headerOffset: number;
  name: string;
  type: number;
  flags: number;
  addr: number;
  /** File offset of the contents (meaningless for SHT_NOBITS). */
  offset: number;
  /** Size in bytes; for SHT_NOBITS the size of the memory it reserves. */
  size: number;
  link: number;
  info: number;
  addralign: number;
  entsize: number;
}

/** One symbol of `.symtab` or `.dynsym`. */
export interface ElfSymbol {
  /** Index inside its table (what `.nv.info` attributes refer to). */
  index: number;
  /** File offset of the symbol's table entry. */
  entryOffset: number;
  name: string;
  value: number;
  size: number;
  /** STT_* (low nibble of st_info). */
  type: number;
  /** STB_* (high nibble of st_info). */
  bind: number;
  /** STV_* (low two bits of st_other). */
  visibility: number;
  /** st_shndx; 0 undefined, >= 0xff00 special (ABS, COMMON, ...). */
  sectionIndex: number;
}

/** One note record (`namesz`, `descsz`, `type`, name, desc). */
export interface ElfNote {
  owner: string;
  type: number;
  /** The descriptor bytes (a view into the file, not a copy). */
  desc: Uint8Array;
  /** File offset of the descriptor, for error reports. */
  descOffset: number;
  /** The section holding the note. */
  section: string;
}

/**
 * A parsed ELF64 little-endian file. The header and all section headers are decoded and
 * validated up front (every non-NOBITS section must lie inside the file); symbols and notes
 * are decoded on request. Every failure is an {@link ElfError}.
 */
export class ElfFile {
  readonly reader: ByteReader;
  readonly header: ElfHeader;
  readonly sections: readonly ElfSection[];

  constructor(bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array)) throw new ElfError('input is not a Uint8Array', 0);
    this.reader = new ByteReader(bytes);
    this.header = readHeader(this.reader);
    this.sections = readSections(this.reader, this.header);
  }

  /** The first section with this exact name, or undefined. */
  section(name: string): ElfSection | undefined {
    return this.sections.find((s) => s.name === name);
  }

  /** The section at `index`, or an ElfError naming `offset` when the index is invalid. */
  sectionAt(index: number, what: string, offset: number): ElfSection {
    const section = this.sections[index];
    if (section === undefined) throw new ElfError(`${what}: section index ${index} does not exist`, offset);
    return section;
  }

  /** The file bytes of a section (a view). SHT_NOBITS sections have none. */
  contents(section: ElfSection): Uint8Array {
    if (section.type === SHT_NOBITS) return new Uint8Array(0);
    return this.reader.bytes(section.offset, section.size, `contents of section ${section.name || section.index}`, section.headerOffset);
  }

  /** Symbols of the first SHT_SYMTAB section, else of SHT_DYNSYM (the static table is a superset). */
  symbols(): ElfSymbol[] {
    const table = this.sections.find((s) => s.type === SHT_SYMTAB) ?? this.sections.find((s) => s.type === SHT_DYNSYM);
    return table ? this.symbolsOf(table) : [];
  }

  /** The symbols of one symbol-table section. */
  symbolsOf(table: ElfSection): ElfSymbol[] {
    if (table.type !== SHT_SYMTAB && table.type !== SHT_DYNSYM) {
      throw new ElfError(`section ${table.index}${table.name ? ` (${table.name})` : ''} is not a symbol table`, table.headerOffset);
    }
    if (table.entsize !== 0 && table.entsize !== SYM_SIZE) {
      throw new ElfError(`symbol table ${table.name}: entry size ${table.entsize}, expected ${SYM_SIZE}`, table.headerOffset);
    }
    if (table.size % SYM_SIZE !== 0) {
      throw new ElfError(`symbol table ${table.name}: size ${table.size} is not a multiple of ${SYM_SIZE}`, table.headerOffset);
    }
    const strtab = this.sectionAt(table.link, `string table of ${table.name}`, table.headerOffset);
    if (strtab.type !== SHT_STRTAB) throw new ElfError(`symbol table ${table.name} links to non-string section ${strtab.name}`, table.headerOffset);
    const r = this.reader;
    // The section was validated against the file size, so the count is bounded by it.
    const count = table.size / SYM_SIZE;
    const out: ElfSymbol[] = [];
    for (let i = 0; i < count; i++) {
      const at = table.offset + i * SYM_SIZE;
      const nameOffset = r.u32(at, 'st_name');
      const info = r.u8(at + 4, 'st_info');
      const other = r.u8(at + 5, 'st_other');
      const sectionIndex = r.u16(at + 6, 'st_shndx');
      const value = r.u64(at + 8, 'st_value');
      const size = r.u64(at + 16, 'st_size');
      const name = nameOffset === 0 ? '' : stringAt(r, strtab, nameOffset, `name of symbol ${i} in ${table.name}`, at);
      out.push({ index: i, entryOffset: at, name, value, size, type: info & 0xf, bind: info >> 4, visibility: other & 3, sectionIndex });
    }
    return out;
  }

  /** Every note of every SHT_NOTE section, in file order. */
  notes(): ElfNote[] {
    const out: ElfNote[] = [];
    for (const section of this.sections) {
      if (section.type === SHT_NOTE) out.push(...readNotes(this.reader, section));
    }
    return out;
  }

  /**
   * The file bytes of a symbol's `[st_value, st_value + st_size)` inside its section. In a
   * relocatable file st_value is section-relative; otherwise it is an address in the section.
   */
  symbolBytes(symbol: ElfSymbol): Uint8Array {
    const where = `symbol ${symbol.name}`;
    if (symbol.sectionIndex === SHN_UNDEF || symbol.sectionIndex >= SHN_LORESERVE) {
      throw new ElfError(`${where} is not defined in a section (st_shndx ${symbol.sectionIndex})`, symbol.entryOffset);
    }
    const section = this.sectionAt(symbol.sectionIndex, where, symbol.entryOffset);
    if (section.type === SHT_NOBITS) throw new ElfError(`${where} lies in NOBITS section ${section.name}`, section.headerOffset);
    const start = this.header.type === ET_REL ? symbol.value : symbol.value - section.addr;
    if (start < 0 || start + symbol.size > section.size) {
      throw new ElfError(`${where} [${symbol.value}, +${symbol.size}) lies outside section ${section.name}`, symbol.entryOffset);
    }
    return this.reader.bytes(section.offset + start, symbol.size, where);
  }
}

function readHeader(r: ByteReader): ElfHeader {
  if (r.length < EHDR_SIZE) throw new ElfError(`file is ${r.length} bytes, shorter than an ELF64 header`, 0);
  if (r.u32(0, 'magic') !== 0x464c457f) throw new ElfError('not an ELF file (bad magic)', 0);
  const cls = r.u8(4, 'EI_CLASS');
  if (cls !== 2) throw new ElfError(`EI_CLASS ${cls}: only ELF64 is supported`, 4);
  const data = r.u8(5, 'EI_DATA');
  if (data !== 1) throw new ElfError(`EI_DATA ${data}: only little-endian ELF is supported`, 5);
  const header: ElfHeader = {
    osabi: r.u8(7, 'EI_OSABI'),
    abiVersion: r.u8(8, 'EI_ABIVERSION'),
    type: r.u16(16, 'e_type'),
    machine: r.u16(18, 'e_machine'),
    version: r.u32(20, 'e_version'),
    entry: r.u64(24, 'e_entry'),
    phoff: r.u64(32, 'e_phoff'),
    shoff: r.u64(40, 'e_shoff'),
    flags: r.u32(48, 'e_flags'),
    phentsize: r.u16(54, 'e_phentsize'),
    phnum: r.u16(56, 'e_phnum'),
    shentsize: r.u16(58, 'e_shentsize'),
    shnum: r.u16(60, 'e_shnum'),
    shstrndx: r.u16(62, 'e_shstrndx'),
  };
  const ehsize = r.u16(52, 'e_ehsize');
  if (ehsize !== EHDR_SIZE) throw new ElfError(`e_ehsize ${ehsize}, expected ${EHDR_SIZE}`, 52);
  return header;
}

function readSections(r: ByteReader, h: ElfHeader): ElfSection[] {
  if (h.shoff === 0) {
    if (h.shnum !== 0) throw new ElfError(`e_shnum ${h.shnum} with no section header table`, 60);
    return [];
  }
  if (h.shentsize !== SHDR_SIZE) throw new ElfError(`e_shentsize ${h.shentsize}, expected ${SHDR_SIZE}`, 58);
  // Extended numbering: a zero count (or SHN_XINDEX string index) lives in section 0.
  r.check(h.shoff, SHDR_SIZE, 'section header 0', 40);
  let count = h.shnum === 0 ? r.u64(h.shoff + 32, 'section count (sh_size of section 0)') : h.shnum;
  const strndx = h.shstrndx === SHN_XINDEX ? r.u32(h.shoff + 40, 'string table index (sh_link of section 0)') : h.shstrndx;
  if (count === 0) count = 1;
  // Validate the table against the file before looping over it.
  if (count > Math.floor((r.length - h.shoff) / SHDR_SIZE)) {
    throw new ElfError(`section header table of ${count} entries at ${h.shoff} runs past the end of the ${r.length}-byte file`, 40);
  }
  const raw: Omit<ElfSection, 'name'>[] = [];
  const nameOffsets: number[] = [];
  for (let i = 0; i < count; i++) {
    const at = h.shoff + i * SHDR_SIZE;
    nameOffsets.push(r.u32(at, `sh_name of section ${i}`));
    const section = {
      index: i,
      headerOffset: at,
      type: r.u32(at + 4, `sh_type of section ${i}`),
      flags: r.u64(at + 8, `sh_flags of section ${i}`),
      addr: r.u64(at + 16, `sh_addr of section ${i}`),
      offset: r.u64(at + 24, `sh_offset of section ${i}`),
      size: r.u64(at + 32, `sh_size of section ${i}`),
      link: r.u32(at + 40, `sh_link of section ${i}`),
      info: r.u32(at + 44, `sh_info of section ${i}`),
      addralign: r.u64(at + 48, `sh_addralign of section ${i}`),
      entsize: r.u64(at + 56, `sh_entsize of section ${i}`),
    };
    if (i > 0 && section.type !== SHT_NOBITS && section.type !== SHT_NULL) {
      r.check(section.offset, section.size, `contents of section ${i}`, at);
    }
    raw.push(section);
  }
  const strtab = strndx === SHN_UNDEF ? undefined : raw[strndx];
  if (strndx !== SHN_UNDEF && strtab === undefined) {
    throw new ElfError(`e_shstrndx ${strndx} does not name a section (there are ${count})`, 62);
  }
  if (strtab !== undefined && strtab.type !== SHT_STRTAB) {
    throw new ElfError(`e_shstrndx ${strndx} names a section of type ${strtab.type}, not a string table`, 62);
  }
  return raw.map((s, i) => ({
    ...s,
    name: strtab === undefined || i === 0 ? '' : stringAt(r, { ...strtab, name: '.shstrtab' }, nameOffsets[i] ?? 0, `name of section ${i}`, s.headerOffset),
  }));
}

/** A name from a string table; `origin` is the file offset of the field that holds `offset`. */
function stringAt(r: ByteReader, strtab: ElfSection, offset: number, what: string, origin: number): string {
  if (offset >= strtab.size) throw new ElfError(`${what}: offset ${offset} is outside ${strtab.name} (${strtab.size} bytes)`, origin);
  return r.cstring(strtab.offset + offset, strtab.offset + strtab.size, what);
}

// Lenient: an odd owner name decodes with replacement characters instead of throwing.
const noteOwnerDecoder = new TextDecoder('utf-8', { fatal: false });

function readNotes(r: ByteReader, section: ElfSection): ElfNote[] {
  const out: ElfNote[] = [];
  const end = section.offset + section.size;
  let at = section.offset;
  // Each record consumes at least 12 bytes, so the loop is bounded by the section size.
  while (at < end) {
    if (end - at < 12) throw new ElfError(`note in ${section.name}: ${end - at} trailing bytes, too short for a note header`, at);
    const namesz = r.u32(at, 'note namesz');
    const descsz = r.u32(at + 4, 'note descsz');
    const type = r.u32(at + 8, 'note type');
    const nameAt = at + 12;
    const descAt = nameAt + align4(namesz);
    const next = descAt + align4(descsz);
    if (descAt > end || descAt + descsz > end) {
      throw new ElfError(`note in ${section.name}: namesz ${namesz} / descsz ${descsz} run past the end of the section`, at);
    }
    let owner = '';
    if (namesz > 0) {
      const name = r.bytes(nameAt, namesz, 'note name');
      const len = name[namesz - 1] === 0 ? namesz - 1 : namesz;
      owner = noteOwnerDecoder.decode(name.subarray(0, len));
    }
    out.push({ owner, type, desc: r.bytes(descAt, descsz, 'note descriptor'), descOffset: descAt, section: section.name });
    at = Math.min(next, end);
  }
  return out;
}

function align4(n: number): number {
  return n + ((4 - (n % 4)) % 4);
}
