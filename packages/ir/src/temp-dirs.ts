// Private temp directories that outlive nothing: each is named after the owning process, removed
// when its work ends, removed at process exit if still there, and swept by the next run when the
// process that made it is gone (SIGKILL, a crash, a power cut).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<string>();
let exitHookInstalled = false;

/** `<prefix><pid>-`: the start of every temp dir name this process makes with `prefix`. */
function stem(prefix: string, pid: number = process.pid): string {
  return `${prefix}${pid}-`;
}

/** Removes, synchronously, every temp dir of this process still present (an 'exit' handler cannot wait). */
export function removeLiveTempDirs(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

/**
 * Makes `<root>/<prefix><pid>-XXXXXX` (root: the system temp dir) and registers it so the process
 * removes it at exit even if the caller never gets to; {@link removeTempDir} removes it earlier.
 */
export function makeTempDir(prefix: string, root: string = tmpdir()): string {
  if (!exitHookInstalled) {
    process.once('exit', removeLiveTempDirs);
    exitHookInstalled = true;
  }
  const dir = mkdtempSync(join(root, stem(prefix)));
  live.add(dir);
  return dir;
}

/** Removes a dir made by {@link makeTempDir}. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  live.delete(dir);
}

/** True when a process with this id exists (one of another user counts: signalling it is refused, not unknown). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes `<root>/<prefix><pid>-*` dirs whose process no longer exists: what a SIGKILLed or
 * crashed run left. Dirs of live processes (including this one) are kept; a dir that cannot be
 * removed (another user's) is skipped. Returns the removed paths.
 */
export function sweepStaleTempDirs(prefix: string, root: string = tmpdir()): string[] {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)-`);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = pattern.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
      removed.push(join(root, name));
    } catch {
      // not ours to remove
    }
  }
  return removed;
}
