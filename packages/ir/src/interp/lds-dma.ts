/**
 * Per-workgroup bookkeeping of AMD direct-to-LDS loads: the interpreter writes their bytes to LDS
 * at once, but the hardware writes them some time before the wave's `s_waitcnt vmcnt(0)`. So a
 * thread whose direct-to-LDS load has not been waited for may not pass a barrier: another wave
 * reading the bytes after it would race with the load on the GPU.
 */
import { InterpretError } from './errors.js';

export class LdsDmaWaits {
  /** Per thread: direct-to-LDS loads issued since its last `s_waitcnt vmcnt(0)`. */
  private readonly pending: Int32Array;
  /** Threads with a nonzero `pending` count (so a barrier checks nothing when no load is out). */
  private live = 0;

  constructor(threads: number) {
    this.pending = new Int32Array(threads);
  }

  /** A fresh workgroup: nothing in flight. */
  reset(): void {
    this.pending.fill(0);
    this.live = 0;
  }

  /** Thread `t` issued a direct-to-LDS load. */
  issued(t: number): void {
    if (this.pending[t]! === 0) this.live++;
    this.pending[t]! += 1;
  }

  /** Thread `t` executed `s_waitcnt vmcnt(0)`: its loads have landed. */
  waited(t: number): void {
    if (this.pending[t]! !== 0) this.live--;
    this.pending[t] = 0;
  }

  /** A barrier is about to release: every thread's direct-to-LDS loads must have been waited for. */
  barrier(where: string): void {
    if (this.live === 0) return;
    const t = this.pending.findIndex((n) => n !== 0);
    throw new InterpretError(
      `direct-to-LDS load not waited for: thread ${t} reaches the barrier at ${where} with ${this.pending[t]} load(s) since its last s_waitcnt vmcnt(0), `
      + 'so other waves may read the LDS bytes before they land (emit target.ldsDma.wait() before the barrier)',
    );
  }
}
