/**
 * Runtime state shared by the compiled closures of one launch: the caller's memory regions, the
 * current workgroup's LDS, and address resolution with bounds checks. Register files are plain
 * arrays; a few leading slots hold the lane's ids so id intrinsics are register copies.
 */
import { InterpretError } from './errors.js';
import { GUARD, LDS_REGION, REGION } from './memory.js';
import type { Lds, Region } from './memory.js';

/** A lane's register file: slot-indexed values (numbers, bigints, arrays for vectors/aggregates, resources). */
export type Regs = any[];
/** One compiled straight-line instruction. */
export type Op = (r: Regs) => void;

// Reserved register slots (written by the scheduler before a lane first runs).
export const S_TID_X = 0;
export const S_TID_Y = 1;
export const S_TID_Z = 2;
export const S_WG_X = 3;
export const S_WG_Y = 4;
export const S_WG_Z = 5;
/** Lane index within the wave/warp. */
export const S_LANE = 6;
export const S_NTID_X = 7;
export const S_NTID_Y = 8;
export const S_NTID_Z = 9;
export const S_NWG_X = 10;
export const S_NWG_Y = 11;
export const S_NWG_Z = 12;
/** Flat thread index within the workgroup. */
export const S_THREAD = 13;
export const RESERVED_SLOTS = 14;

/** An AMD buffer resource (`ptr addrspace(8)`): base address and `num_records` (bytes, raw buffer). */
export class BufferResource {
  constructor(readonly base: number, readonly numRecords: number) {}
}

/** Launch-wide memory. `lds` is swapped per workgroup. */
export class Machine {
  /** Set by {@link resolve}: the byte offset inside the returned view. */
  off = 0;
  lds!: Lds;
  constructor(readonly regions: readonly (Region | undefined)[], readonly waveSize: number) {}

  /**
   * The view holding `size` bytes at global (flat) address `p`, with `this.off` set; throws
   * naming the address when the access is not wholly inside one allocation.
   */
  resolve(p: number, size: number, write: boolean, thread: number): DataView {
    const ri = Math.floor(p / REGION);
    const off = p - ri * REGION - GUARD;
    if (ri === LDS_REGION) {
      this.lds.check(off, size, thread, write);
      this.off = off;
      return this.lds.view;
    }
    const reg = this.regions[ri];
    if (reg !== undefined && off + size <= reg.bytes.byteLength && off >= 0) {
      this.off = off;
      return reg.view;
    }
    throw new InterpretError(describeBadAddress(this.regions, p, size, write));
  }

  /** LDS view for an addrspace(3) access at `off` (bounds and races checked). */
  ldsAt(off: number, size: number, write: boolean, thread: number): DataView {
    this.lds.check(off, size, thread, write);
    this.off = off;
    return this.lds.view;
  }
}

/** Text for an access outside every allocation: which buffer it was nearest to and by how much. */
export function describeBadAddress(regions: readonly (Region | undefined)[], p: number, size: number, write: boolean): string {
  const what = `${write ? 'store' : 'load'} of ${size} bytes at address 0x${p.toString(16)}`;
  if (!Number.isFinite(p)) return `${what}: not a valid address`;
  const ri = Math.floor(p / REGION);
  const off = p - ri * REGION - GUARD;
  if (ri === 0) return `${what}: null or invalid pointer (no allocation there)`;
  const reg = regions[ri];
  if (!reg) return `${what}: no allocation there`;
  return `${what}: byte offset ${off} of ${reg.label} (${reg.bytes.byteLength} bytes) is out of bounds`;
}
