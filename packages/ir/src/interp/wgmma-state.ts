/**
 * Per-workgroup bookkeeping of sm_90a warpgroup MMA: each thread's wgmma.fence / commit_group /
 * wait_group history, and the shared-memory bytes that issued wgmmas still read. The interpreter
 * executes a wgmma at issue, but on the GPU its operand reads may happen at any time until a
 * wait_group retires its commit group, so a store into those bytes before then is reported here
 * instead of silently giving the "right" answer.
 */
import { InterpretError } from './errors.js';

/** Threads of one warpgroup (4 consecutive warps). */
export const WARPGROUP = 128;
/** Bytes of one core matrix (8 rows of 16 bytes), the unit an unswizzled wgmma operand is read in. */
export const CORE_BYTES = 128;
/** Bytes of one 16-byte chunk, the unit a 128B-swizzled operand is read in (a row's chunks are scattered). */
export const SWIZZLE_CHUNK = 16;

/** Start offsets of blocks of shared memory a wgmma reads, all `bytes` long. */
export type ReadBlocks = readonly [starts: Int32Array, bytes: number];

/** The shared-memory reads of one issued wgmma, live until every thread of its warpgroup waited for it. */
interface PendingRead {
  readonly warpgroup: number;
  /** Index (per warpgroup, from 0) of the commit group the wgmma belongs to. */
  readonly group: number;
  /** The blocks read (core matrices or swizzled chunks, per operand). */
  readonly blocks: readonly ReadBlocks[];
  readonly lo: number;
  readonly hi: number;
  /** Names the wgmma (only built for an error message). */
  readonly what: () => string;
  /** Threads of the warpgroup whose wait_group covered the group. */
  waited: number;
  /** Every thread waited: gone at the next barrier (at once when the block is one warpgroup). */
  retired: boolean;
}

export class WgmmaState {
  /** Pending reads; the LDS store path only looks further when this is non-zero. */
  live = 0;
  private pending: PendingRead[] = [];
  /** Per LDS byte: how many pending reads cover it (allocated at the first wgmma). */
  private marks: Int32Array | undefined;
  private readonly fenced: Uint8Array;
  private readonly commits: Int32Array;
  /** Per thread: commit groups known complete (the first `waited[t]` groups of its warpgroup). */
  private readonly waited: Int32Array;

  constructor(private readonly ldsSize: number, private readonly threads: number) {
    this.fenced = new Uint8Array(threads);
    this.commits = new Int32Array(threads);
    this.waited = new Int32Array(threads);
  }

  /** A fresh workgroup: no history, nothing pending. */
  reset(): void {
    this.fenced.fill(0);
    this.commits.fill(0);
    this.waited.fill(0);
    this.pending = [];
    this.live = 0;
    this.marks?.fill(0);
  }

  fence(t: number): void {
    this.fenced[t] = 1;
  }

  commit(t: number): void {
    this.commits[t]! += 1;
  }

  /** `wgmma.wait_group pending` by thread `t`: all but its `pending` most recent commit groups are complete. */
  wait(t: number, pending: number): void {
    const done = this.commits[t]! - pending;
    const before = this.waited[t]!;
    if (done <= before) return;
    this.waited[t] = done;
    if (this.live === 0) return;
    const wg = Math.floor(t / WARPGROUP);
    let sweep = false;
    for (const p of this.pending) {
      if (p.warpgroup === wg && p.group >= before && p.group < done && ++p.waited === WARPGROUP) {
        p.retired = true;
        // With one warpgroup nobody else can touch the bytes: no barrier needed before reuse.
        if (this.threads <= WARPGROUP) sweep = true;
      }
    }
    if (sweep) this.sweep();
  }

  /** A released barrier: reads every thread of their warpgroup has waited for are over for everyone. */
  barrier(): void {
    if (this.live !== 0 && this.pending.some((p) => p.retired)) this.sweep();
  }

  /** Checks that warpgroup `wg` may issue a wgmma: every thread fenced at least once, all with the same commit count. */
  checkIssue(wg: number, what: () => string): void {
    const t0 = wg * WARPGROUP;
    const group = this.commits[t0]!;
    for (let t = t0; t < t0 + WARPGROUP; t++) {
      if (!this.fenced[t]) {
        throw new InterpretError(`${what()}: thread ${t} never executed wgmma.fence.sync.aligned (needed before the first wgmma, and whenever other code touched the accumulators)`);
      }
      if (this.commits[t] !== group) throw new InterpretError(`${what()}: divergent wgmma.commit_group: thread ${t0} committed ${group} groups, thread ${t} ${this.commits[t]}`);
    }
  }

  /** Records the blocks a wgmma of warpgroup `wg` reads (exactly its bytes) as pending until waited for. */
  issue(wg: number, blocks: readonly ReadBlocks[], what: () => string): void {
    const group = this.commits[wg * WARPGROUP]!;
    const marks = (this.marks ??= new Int32Array(this.ldsSize));
    let lo = Infinity;
    let hi = -Infinity;
    for (const [starts, bytes] of blocks) {
      for (const c of starts) {
        for (let i = c; i < c + bytes; i++) marks[i]! += 1;
        lo = Math.min(lo, c);
        hi = Math.max(hi, c + bytes);
      }
    }
    this.pending.push({ warpgroup: wg, group, blocks, lo, hi, what, waited: 0, retired: false });
    this.live = this.pending.length;
  }

  /** Throws when thread `t` stores `size` bytes at `off` that a wgmma it has not waited for may still read. */
  checkStore(off: number, size: number, t: number): void {
    const marks = this.marks!;
    const end = off + size;
    let hit = false;
    for (let i = off; i < end; i++) if (marks[i] !== 0) hit = true;
    if (!hit) return;
    const wg = Math.floor(t / WARPGROUP);
    for (const p of this.pending) {
      if (p.hi <= off || p.lo >= end) continue;
      if (p.warpgroup === wg && p.group < this.waited[t]!) continue;
      let byte = -1;
      for (const [starts, bytes] of p.blocks) for (const c of starts) if (c < end && c + bytes > off) byte = Math.max(c, off);
      if (byte < 0) continue;
      let why: string;
      if (p.warpgroup !== wg) why = `thread ${t} is in warpgroup ${wg}: it may overwrite the operands of warpgroup ${p.warpgroup} only after that warpgroup's wgmma.wait_group and a barrier`;
      else if (p.group >= this.commits[t]!) why = 'its wgmma is not committed yet (wgmma.commit_group, then wgmma.wait_group before overwriting operands)';
      else why = `it is in commit group ${p.group} of warpgroup ${wg} and thread ${t} has waited for only ${this.waited[t]} of its ${this.commits[t]} committed groups (wgmma.wait_group first)`;
      throw new InterpretError(`wgmma operand overwritten: thread ${t} stores to shared byte ${byte} (0x${byte.toString(16)}) that ${p.what()} may still be reading: ${why}`);
    }
  }

  private sweep(): void {
    const marks = this.marks!;
    for (const p of this.pending) {
      if (!p.retired) continue;
      for (const [starts, bytes] of p.blocks) for (const c of starts) for (let i = c; i < c + bytes; i++) marks[i]! -= 1;
    }
    this.pending = this.pending.filter((p) => !p.retired);
    this.live = this.pending.length;
  }
}
