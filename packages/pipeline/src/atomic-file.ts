import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Suffix of every temporary file the cache writes; listings skip these names. */
export const TEMP_SUFFIX = '.tmp';

/**
 * True for names produced by {@link writeFileAtomic} while a write is in flight (or left behind
 * by a writer that died): they start with a dot and end with `.tmp`.
 */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX);
}

/**
 * Writes `data` to `path` so that readers only ever see the old file or the complete new one:
 * the bytes go to a uniquely named temp file in the same directory (same filesystem, so rename is
 * atomic), are fsynced, and the temp file is renamed over the target. The directory is fsynced
 * afterwards so the rename itself survives a crash. On failure the temp file is removed.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', 0o644);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // already renamed or never created
    }
    throw err;
  }
  fsyncDir(dir);
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
