import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, openSync, renameSync, unlinkSync, writeSync, type Stats } from 'node:fs';
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
 * A write refused because `path` exists and is not a regular file: replacing a symbolic link, a
 * device (`/dev/null`), a FIFO, a socket or a directory with a new regular file would destroy it.
 */
export class UnsafeTargetError extends Error {
  override readonly name = 'UnsafeTargetError';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is a ${kind}, not a regular file; refusing to replace it`);
  }
}

/** A failed write, named by its target (never by the temp file it went through). */
export class FileWriteError extends Error {
  override readonly name = 'FileWriteError';
  constructor(
    readonly path: string,
    readonly code: string | undefined,
    readonly detail: string,
  ) {
    super(`cannot write ${path}: ${detail}`);
  }
}

/** What kind of thing `stats` describes, in words; 'regular file' for a regular file. */
export function fileKind(stats: Stats): string {
  if (stats.isFile()) return 'regular file';
  if (stats.isSymbolicLink()) return 'symbolic link';
  if (stats.isDirectory()) return 'directory';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isFIFO()) return 'FIFO';
  return 'socket';
}

/** Throws {@link UnsafeTargetError} when `path` exists and is anything but a regular file. */
export function checkReplaceable(path: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return; // absent (or unreadable: the write itself reports that)
  }
  const kind = fileKind(stats);
  if (kind !== 'regular file') throw new UnsafeTargetError(path, kind);
}

/** `EACCES: permission denied` from a Node fs error, without the path it names. */
export function errnoText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.message !== 'string') return String(err);
  return e.code ? e.message.split(',')[0]! : e.message;
}

/**
 * Writes `data` to `path` so that readers only ever see the old file or the complete new one:
 * the bytes go to a uniquely named temp file in the same directory (same filesystem, so rename is
 * atomic), are fsynced, and the temp file is renamed over the target. The directory is fsynced
 * afterwards so the rename itself survives a crash. On failure the temp file is removed.
 *
 * Only a regular file (or nothing) is replaced: a symbolic link, device, FIFO, socket or directory
 * at `path` is an {@link UnsafeTargetError}, since the rename would put a regular file in its place
 * (as root, `/dev/null`). Any other failure is a {@link FileWriteError} naming `path`.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  checkReplaceable(path);
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
    throw new FileWriteError(path, (err as NodeJS.ErrnoException).code, errnoText(err));
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
