/**
 * Memory of an interpreted launch. Global pointers (addrspace 0 and 1) are numbers in one flat
 * space split into regions of 2^40 bytes: region 0 holds null, region 1 is the generic window onto
 * the current workgroup's LDS, regions 2.. are the caller's ArrayBuffers, each starting 2^39 bytes
 * into its region. LDS pointers
 * (addrspace 3) are byte offsets into the workgroup's LDS. Values are read and written little
 * endian through per-type codecs built once per type.
 */
import type { Type } from '../types.js';
import { alignOf, sizeOf, typeToString } from '../types.js';
import { InterpretError } from './errors.js';
import { HALF_VALUES, bfloatFromBits, bfloatToBits, halfToBits, normI64, wrapI64 } from './numeric.js';
import type { LdsDmaWaits } from './lds-dma.js';
import type { WgmmaState } from './wgmma-state.js';

/** Bytes per region of the flat global address space. */
export const REGION = 2 ** 40;
/** Allocations start this far into their region, so small negative offsets stay inside it and are caught. */
export const GUARD = 2 ** 39;
/** Region index of the generic LDS window. */
export const LDS_REGION = 1;
/** Flat address of byte 0 of region `index`. */
export const regionBase = (index: number): number => index * REGION + GUARD;

/** Reads and writes one type at a byte offset of a DataView. */
export interface Codec {
  readonly size: number;
  read(dv: DataView, off: number): unknown;
  write(dv: DataView, off: number, v: unknown): void;
}

const codecs = new Map<string, Codec>();

/** The codec of a memory-representable type (ints, floats, pointers, vectors, arrays, structs). */
export function codecOf(t: Type): Codec {
  const key = typeToString(t);
  let c = codecs.get(key);
  if (!c) {
    c = makeCodec(t);
    codecs.set(key, c);
  }
  return c;
}

function makeCodec(t: Type): Codec {
  switch (t.kind) {
    case 'int':
      switch (t.bits) {
        case 1: return { size: 1, read: (dv, o) => dv.getUint8(o) & 1, write: (dv, o, v) => dv.setUint8(o, v as number) };
        case 8: return { size: 1, read: (dv, o) => dv.getUint8(o), write: (dv, o, v) => dv.setUint8(o, v as number) };
        case 16: return { size: 2, read: (dv, o) => dv.getUint16(o, true), write: (dv, o, v) => dv.setUint16(o, v as number, true) };
        case 32: return { size: 4, read: (dv, o) => dv.getUint32(o, true), write: (dv, o, v) => dv.setUint32(o, v as number, true) };
        case 64: return {
          size: 8,
          read: (dv, o) => {
            const lo = dv.getUint32(o, true);
            const hi = dv.getInt32(o + 4, true);
            // |hi| < 2^20 keeps hi * 2^32 + lo a safe integer.
            return hi >= -0x100000 && hi < 0x100000 ? hi * 4294967296 + lo : normI64(dv.getBigInt64(o, true));
          },
          write: (dv, o, v) => {
            if (typeof v === 'number') {
              dv.setUint32(o, v >>> 0, true);
              dv.setInt32(o + 4, Math.floor(v / 4294967296), true);
            } else dv.setBigInt64(o, v as bigint, true);
          },
        };
        default:
          throw new InterpretError(`memory access of ${typeToString(t)} is not modeled (i1, i8, i16, i32, i64 are)`);
      }
    case 'float':
      switch (t.name) {
        case 'half': return { size: 2, read: (dv, o) => HALF_VALUES[dv.getUint16(o, true)]!, write: (dv, o, v) => dv.setUint16(o, halfToBits(v as number), true) };
        case 'bfloat': return { size: 2, read: (dv, o) => bfloatFromBits(dv.getUint16(o, true)), write: (dv, o, v) => dv.setUint16(o, bfloatToBits(v as number), true) };
        case 'float': return { size: 4, read: (dv, o) => dv.getFloat32(o, true), write: (dv, o, v) => dv.setFloat32(o, v as number, true) };
        case 'double': return { size: 8, read: (dv, o) => dv.getFloat64(o, true), write: (dv, o, v) => dv.setFloat64(o, v as number, true) };
      }
      break;
    case 'ptr':
      // LDS/private pointers are 32-bit on AMDGPU but 64-bit on NVPTX; kernels never store them.
      if (t.addrspace === 3 || t.addrspace === 5) throw new InterpretError(`storing or loading ${typeToString(t)} in memory is not modeled (its width depends on the target)`);
      if (t.addrspace === 0 || t.addrspace === 1 || t.addrspace === 4) {
        const c = codecOf({ kind: 'int', bits: 64 });
        return { size: 8, read: (dv, o) => Number(c.read(dv, o)), write: (dv, o, v) => c.write(dv, o, wrapI64(v as number)) };
      }
      break;
    case 'vector':
    case 'array': {
      if (t.elem.kind === 'int' && t.elem.bits === 1) break;
      const e = codecOf(t.elem);
      const n = t.count;
      const es = e.size;
      return {
        size: es * n,
        read: (dv, o) => {
          const out = new Array<unknown>(n);
          for (let i = 0; i < n; i++) out[i] = e.read(dv, o + i * es);
          return out;
        },
        write: (dv, o, v) => {
          const a = v as unknown[];
          for (let i = 0; i < n; i++) e.write(dv, o + i * es, a[i]);
        },
      };
    }
    case 'struct': {
      const fields = t.fields.map((f) => codecOf(f));
      const offsets: number[] = [];
      let off = 0;
      for (const f of t.fields) {
        const a = alignOf(f);
        off = Math.ceil(off / a) * a;
        offsets.push(off);
        off += sizeOf(f);
      }
      return {
        size: sizeOf(t),
        read: (dv, o) => fields.map((f, i) => f.read(dv, o + offsets[i]!)),
        write: (dv, o, v) => fields.forEach((f, i) => f.write(dv, o + offsets[i]!, (v as unknown[])[i])),
      };
    }
    default:
      break;
  }
  throw new InterpretError(`memory access of ${typeToString(t)} is not modeled`);
}

/** One caller allocation. */
export interface Region {
  readonly index: number;
  readonly buffer: ArrayBufferLike;
  readonly view: DataView;
  readonly bytes: Uint8Array;
  readonly label: string;
}

/**
 * Workgroup-local memory with an optional race detector. Within one barrier interval ("epoch")
 * a byte written by one thread and read or written by another is a data race: on the GPU the
 * result would depend on timing, so the interpreter reports it instead of picking an order.
 */
export class Lds {
  readonly view: DataView;
  readonly bytes: Uint8Array;
  /** Epoch counter: bumped at every released barrier and every new workgroup (so marks never need clearing). */
  epoch = 1;
  private readonly wEpoch: Int32Array | undefined;
  private readonly wThread: Int32Array | undefined;
  private readonly rEpoch: Int32Array | undefined;
  /** Last reader thread of the epoch, or -2 when several threads read it. */
  private readonly rThread: Int32Array | undefined;
  /** Warpgroup-MMA bookkeeping: stores into bytes an unfinished wgmma reads are refused. */
  wgmma: WgmmaState | undefined;
  /** AMD direct-to-LDS loads not yet waited for (a barrier refuses to release over them). */
  dma: LdsDmaWaits | undefined;

  constructor(readonly size: number, private readonly fill: number, detectRaces: boolean) {
    const buf = new ArrayBuffer(size);
    this.view = new DataView(buf);
    this.bytes = new Uint8Array(buf);
    this.bytes.fill(fill);
    if (detectRaces) {
      this.wEpoch = new Int32Array(size);
      this.wThread = new Int32Array(size);
      this.rEpoch = new Int32Array(size);
      this.rThread = new Int32Array(size);
    }
  }

  /** Makes this the LDS of a fresh workgroup: contents back to the fill byte, no race marks in force. */
  reset(): void {
    this.bytes.fill(this.fill);
    this.epoch++;
    this.wgmma?.reset();
    this.dma?.reset();
  }

  /** Bounds check (and race bookkeeping) for an access of `size` bytes at `off` by `thread`. */
  check(off: number, size: number, thread: number, write: boolean): void {
    if (!(off >= 0 && off + size <= this.size)) {
      throw new InterpretError(`LDS ${write ? 'store' : 'load'} of ${size} bytes at offset ${off} is outside the ${this.size} bytes of LDS`);
    }
    if (write && this.wgmma !== undefined && this.wgmma.live !== 0) this.wgmma.checkStore(off, size, thread);
    const we = this.wEpoch;
    if (!we) return;
    const wt = this.wThread!;
    const re = this.rEpoch!;
    const rt = this.rThread!;
    const ep = this.epoch;
    for (let i = off, end = off + size; i < end; i++) {
      if (we[i] === ep && wt[i] !== thread) {
        throw new InterpretError(`LDS data race: thread ${thread} ${write ? 'writes' : 'reads'} byte ${i} that thread ${wt[i]} wrote since the last barrier (missing barrier?)`);
      }
      if (write) {
        if (re[i] === ep && rt[i] !== thread) {
          const who = rt[i] === -2 ? 'other threads' : `thread ${rt[i]}`;
          throw new InterpretError(`LDS data race: thread ${thread} writes byte ${i} that ${who} read since the last barrier (missing barrier?)`);
        }
        we[i] = ep;
        wt[i] = thread;
      } else if (re[i] !== ep) {
        re[i] = ep;
        rt[i] = thread;
      } else if (rt[i] !== thread) rt[i] = -2;
    }
  }

  /**
   * Race check of an asynchronous read by threads `lo..hi-1` together (a wgmma of one warpgroup):
   * bytes another thread wrote since the last barrier are a race. Not recorded as reads: the
   * wgmma bookkeeping guards the bytes until the read is waited for.
   */
  checkGroupRead(off: number, size: number, lo: number, hi: number, who: string): void {
    const we = this.wEpoch;
    if (!we) return;
    const wt = this.wThread!;
    const ep = this.epoch;
    for (let i = off, end = off + size; i < end; i++) {
      if (we[i] === ep && (wt[i]! < lo || wt[i]! >= hi)) {
        throw new InterpretError(`LDS data race: ${who} reads byte ${i} that thread ${wt[i]} wrote since the last barrier (missing barrier?)`);
      }
    }
  }
}
