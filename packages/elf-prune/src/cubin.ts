import { ElfFile, EM_CUDA, STT_FUNC } from './elf.js';
import type { ElfSection, ElfSymbol } from './elf.js';
import { ElfError } from './errors.js';
import { ANNOTATION_SPILL_REFILL, EIATTR, payloadWords, readNvInfo } from './nvinfo.js';
import type { NvInfoRecord } from './nvinfo.js';

/** One kernel (entry function) of a cubin. */
export interface CubinKernel {
  name: string;
  symbol: ElfSymbol;
  /** The kernel's SASS bytes from `.text.<name>` (a view into the input). */
  code: Uint8Array;
  /** EIATTR_REGCOUNT: registers per thread. */
  registers: number;
  /** EIATTR_FRAME_SIZE: per-thread stack frame bytes (includes spill slots). */
  frameSize: number;
  /** EIATTR_MIN_STACK_SIZE, null when absent. */
  minStackSize: number | null;
  /** EIATTR_MAX_STACK_SIZE, null when absent. */
  maxStackSize: number | null;
  /** EIATTR_MAXREG_COUNT (255 unless `.maxnreg` was given), null when absent. */
  maxRegCount: number | null;
  /** EIATTR_MAX_THREADS (`.maxntid`), null when absent. */
  maxThreads: [number, number, number] | null;
  /** EIATTR_REQNTID (`.reqntid`), null when absent. */
  reqNtid: [number, number, number] | null;
  /** Spill/refill instructions listed in EIATTR_ANNOTATIONS (0 when there is none). */
  spillRefillInstructions: number;
  /** Byte offsets of those instructions inside the kernel's code, in listing order. */
  spillRefillOffsets: number[];
  /** Size of `.nv.shared.<name>`: static shared memory the loader reserves per block. */
  sharedBytes: number;
  /** Every record of `.nv.info.<name>`, for attributes this package does not interpret. */
  records: NvInfoRecord[];
}

/** A parsed cubin. */
export interface Cubin {
  elf: ElfFile;
  /** SM version from e_flags bits 15:8 (90 for sm_90). */
  sm: number;
  kernels: CubinKernel[];
}

interface PerSymbol {
  registers?: number;
  frameSize?: number;
  minStackSize?: number;
  maxStackSize?: number;
}

/**
 * Reads a cubin: the global `.nv.info` table (registers, frame and stack sizes per symbol),
 * each kernel's `.nv.info.<kernel>` attributes, `.text.<kernel>` bytes and `.nv.shared.<kernel>`
 * size. A kernel is a function symbol that has a `.nv.info.<name>` section.
 */
export function readCubin(input: Uint8Array | ElfFile): Cubin {
  const elf = input instanceof ElfFile ? input : new ElfFile(input);
  if (elf.header.machine !== EM_CUDA) throw new ElfError(`e_machine ${elf.header.machine} is not EM_CUDA (${EM_CUDA})`, 18);
  const info = elf.section('.nv.info');
  // sh_link 0 is SHN_UNDEF, "no linked section": older ptxas (sm_35-sm_62 cubins) writes it, and
  // the attributes then index the file's own symbol table, which is what llvm-readelf reads too.
  const symbols = info && info.link !== 0 ? elf.symbolsOf(elf.sectionAt(info.link, '.nv.info symbol table', info.headerOffset)) : elf.symbols();
  const perSymbol = info ? readGlobalInfo(elf, info, symbols) : new Map<number, PerSymbol>();
  const kernels: CubinKernel[] = [];
  for (const symbol of symbols) {
    if (symbol.type !== STT_FUNC || symbol.name === '') continue;
    const kinfo = elf.section(`.nv.info.${symbol.name}`);
    if (!kinfo) continue;
    kernels.push(readKernel(elf, symbol, kinfo, perSymbol.get(symbol.index) ?? {}));
  }
  return { elf, sm: (elf.header.flags >>> 8) & 0xff, kernels };
}

function readGlobalInfo(elf: ElfFile, info: ElfSection, symbols: ElfSymbol[]): Map<number, PerSymbol> {
  const out = new Map<number, PerSymbol>();
  for (const record of readNvInfo(elf, info)) {
    const key = GLOBAL_KEYS.get(record.attr);
    if (!key) continue;
    const [symbolIndex, value] = exactWords(record, '.nv.info', 2);
    if (symbols[symbolIndex] === undefined) {
      throw new ElfError(`.nv.info: attribute 0x${record.attr.toString(16)} names symbol ${symbolIndex}, which does not exist`, record.offset);
    }
    const entry = out.get(symbolIndex) ?? {};
    entry[key] = value;
    out.set(symbolIndex, entry);
  }
  return out;
}

/** The global `.nv.info` attributes read, each a (symbol index, value) pair, and where they go. */
const GLOBAL_KEYS: ReadonlyMap<number, keyof PerSymbol> = new Map([
  [EIATTR.REGCOUNT, 'registers'],
  [EIATTR.FRAME_SIZE, 'frameSize'],
  [EIATTR.MIN_STACK_SIZE, 'minStackSize'],
  [EIATTR.MAX_STACK_SIZE, 'maxStackSize'],
]);

function readKernel(elf: ElfFile, symbol: ElfSymbol, kinfo: ElfSection, global: PerSymbol): CubinKernel {
  const where = `.nv.info.${symbol.name}`;
  const records = readNvInfo(elf, kinfo);
  let maxRegCount: number | null = null;
  let maxThreads: [number, number, number] | null = null;
  let reqNtid: [number, number, number] | null = null;
  const spillRefillOffsets: number[] = [];
  for (const record of records) {
    if (record.attr === EIATTR.MAXREG_COUNT && record.value !== null) maxRegCount = record.value;
    else if (record.attr === EIATTR.MAX_THREADS) maxThreads = exactWords(record, where, 3);
    else if (record.attr === EIATTR.REQNTID) reqNtid = exactWords(record, where, 3);
    else if (record.attr === EIATTR.ANNOTATIONS) spillRefillOffsets.push(...spillRefill(record, where));
  }
  if (global.registers === undefined) throw new ElfError(`kernel ${symbol.name}: no EIATTR_REGCOUNT in .nv.info`, kinfo.headerOffset);
  const text = elf.section(`.text.${symbol.name}`);
  if (!text || text.index !== symbol.sectionIndex) {
    throw new ElfError(`kernel ${symbol.name}: symbol is not in section .text.${symbol.name}`, symbol.entryOffset);
  }
  return {
    name: symbol.name,
    symbol,
    code: elf.symbolBytes(symbol),
    registers: global.registers,
    frameSize: global.frameSize ?? 0,
    minStackSize: global.minStackSize ?? null,
    maxStackSize: global.maxStackSize ?? null,
    maxRegCount,
    maxThreads,
    reqNtid,
    spillRefillInstructions: spillRefillOffsets.length,
    spillRefillOffsets,
    sharedBytes: elf.section(`.nv.shared.${symbol.name}`)?.size ?? 0,
    records,
  };
}

/** The record's payload words, which must number exactly `count`. */
function exactWords(record: NvInfoRecord, where: string, count: 2): [number, number];
function exactWords(record: NvInfoRecord, where: string, count: 3): [number, number, number];
function exactWords(record: NvInfoRecord, where: string, count: number): number[] {
  const words = payloadWords(record, where);
  if (words.length !== count) {
    throw new ElfError(`${where}: attribute 0x${record.attr.toString(16)} has ${words.length} words, expected ${count}`, record.offset);
  }
  return words;
}

/** Annotations are (kind, instruction offset) word pairs; returns the spill/refill offsets. */
function spillRefill(record: NvInfoRecord, where: string): number[] {
  const words = payloadWords(record, where);
  if (words.length % 2 !== 0) throw new ElfError(`${where}: annotation list has an odd number of words`, record.offset);
  const offsets: number[] = [];
  for (let i = 0; i < words.length; i += 2) if (words[i] === ANNOTATION_SPILL_REFILL) offsets.push(words[i + 1] ?? 0);
  return offsets;
}
