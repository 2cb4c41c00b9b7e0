import { ElfError } from './errors.js';

/**
 * Bounds-checked little-endian reads over one file. Every accessor checks that the whole
 * field lies inside the buffer before touching it and throws {@link ElfError} otherwise, so
 * callers never see a RangeError or an out-of-bounds read.
 */
export class ByteReader {
  readonly data: Uint8Array;
  private readonly view: DataView;

  constructor(data: Uint8Array) {
    this.data = data;
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  get length(): number {
    return this.data.byteLength;
  }

  /**
   * Throws unless `[offset, offset + size)` lies inside the buffer. `origin` is the file
   * offset of the field that supplied `offset` (a header or table entry); the error names it,
   * since a forged pointer's target is not a place in the file.
   */
  check(offset: number, size: number, what: string, origin?: number): void {
    const at = origin ?? (Number.isSafeInteger(offset) && offset >= 0 && offset <= this.length ? offset : 0);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(size) || offset < 0 || size < 0) {
      throw new ElfError(`${what}: invalid range (offset ${offset}, size ${size})`, at);
    }
    if (offset + size > this.length) {
      throw new ElfError(`${what}: ${size} bytes at ${offset} run past the end of the ${this.length}-byte file`, at);
    }
  }

  u8(offset: number, what: string): number {
    this.check(offset, 1, what);
    return this.view.getUint8(offset);
  }

  u16(offset: number, what: string): number {
    this.check(offset, 2, what);
    return this.view.getUint16(offset, true);
  }

  u32(offset: number, what: string): number {
    this.check(offset, 4, what);
    return this.view.getUint32(offset, true);
  }

  i32(offset: number, what: string): number {
    this.check(offset, 4, what);
    return this.view.getInt32(offset, true);
  }

  /** An unsigned 64-bit field as a number; values past 2^53 are rejected, not rounded. */
  u64(offset: number, what: string): number {
    this.check(offset, 8, what);
    const value = this.view.getBigUint64(offset, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new ElfError(`${what}: 64-bit value 0x${value.toString(16)} is too large`, offset);
    }
    return Number(value);
  }

  /** A signed 64-bit field as a number; magnitudes past 2^53 are rejected. */
  i64(offset: number, what: string): number {
    this.check(offset, 8, what);
    const value = this.view.getBigInt64(offset, true);
    const limit = BigInt(Number.MAX_SAFE_INTEGER);
    if (value > limit || value < -limit) {
      throw new ElfError(`${what}: 64-bit value ${value} is out of range`, offset);
    }
    return Number(value);
  }

  /** A view (no copy) of `size` bytes at `offset`. */
  bytes(offset: number, size: number, what: string, origin?: number): Uint8Array {
    this.check(offset, size, what, origin);
    return this.data.subarray(offset, offset + size);
  }

  /**
   * A NUL-terminated string that must end before `end` (exclusive). Decoded as UTF-8 with
   * replacement characters, so odd bytes give an odd name rather than an exception.
   */
  cstring(offset: number, end: number, what: string): string {
    this.check(offset, 0, what);
    const limit = Math.min(end, this.length);
    if (offset >= limit) throw new ElfError(`${what}: string offset ${offset} is outside its table`, offset);
    // The search window is capped so a hostile table of many unterminated names stays linear.
    const window = this.data.subarray(offset, Math.min(limit, offset + MAX_STRING_BYTES + 1));
    const nul = window.indexOf(0);
    if (nul < 0) {
      throw new ElfError(
        window.length > MAX_STRING_BYTES
          ? `${what}: string longer than ${MAX_STRING_BYTES} bytes`
          : `${what}: string is not NUL-terminated inside its table`,
        offset,
      );
    }
    return utf8.decode(window.subarray(0, nul));
  }
}

/** Longest name accepted from a string table (kernel names are far shorter). */
export const MAX_STRING_BYTES = 16384;

const utf8 = new TextDecoder('utf-8', { fatal: false });
