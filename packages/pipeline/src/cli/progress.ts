import type { CompileAllProgress, CompileFailure, JobStatus } from '../compile/compile-all.js';
import { briefError } from '../table.js';

/** Where progress goes: a writer and whether it is a terminal. */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
  /** Terminal width; default 80. */
  columns?: number | undefined;
}

/**
 * Progress for compile-all: on a terminal one bar redrawn in place (at most every 100 ms);
 * otherwise plain lines at each 10 % step. Failures are always printed on their own line.
 */
export function compileProgress(sink: ProgressSink, now: () => number = () => Date.now()): CompileAllProgress & { finish(): void } {
  let total = 0;
  const counts: Record<JobStatus, number> = { compiled: 0, rebuilt: 0, cached: 0, failed: 0 };
  let lastDraw = -Infinity;
  let lastStep = -1;
  let drawn = false;
  const done = () => counts.compiled + counts.rebuilt + counts.cached + counts.failed;
  const summary = () => `${done()}/${total}  compiled ${counts.compiled + counts.rebuilt}  cached ${counts.cached}  failed ${counts.failed}`;
  const draw = (force: boolean) => {
    if (!sink.isTTY) return;
    const t = now();
    if (!force && t - lastDraw < 100) return;
    lastDraw = t;
    const text = summary();
    const width = Math.max(10, Math.min(40, (sink.columns ?? 80) - text.length - 4));
    const filled = total === 0 ? width : Math.round((done() / total) * width);
    sink.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}\x1b[K`);
    drawn = true;
  };
  return {
    // A capped compile runs back-fill passes, each a compile-all of its own: a later start adds its
    // entries to the total so the count never runs past it.
    start(n: number) {
      const first = total === 0 && done() === 0;
      total += n;
      lastStep = first ? -1 : Math.floor((done() * 10) / total);
      if (sink.isTTY) draw(true);
      else sink.write(first ? `compile-all: ${n} entries\n` : `compile-all: ${n} more entries (back-fill pass)\n`);
    },
    done(status: JobStatus, label: string, failure?: CompileFailure) {
      counts[status]++;
      if (failure) {
        const firstLine = briefError(failure.message);
        if (drawn) sink.write('\r\x1b[K');
        sink.write(`FAILED ${failure.target} ${failure.family}/${failure.variant ?? '-'} ${label} [${failure.stage}]: ${firstLine}\n`);
        draw(true);
        return;
      }
      if (sink.isTTY) {
        draw(done() === total);
        return;
      }
      const step = total === 0 ? 10 : Math.floor((done() * 10) / total);
      if (step > lastStep) {
        lastStep = step;
        sink.write(`compile-all: ${summary()}\n`);
      }
    },
    finish() {
      if (sink.isTTY && drawn) {
        draw(true);
        sink.write('\n');
      }
    },
  };
}
