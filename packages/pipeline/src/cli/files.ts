// The files the CLI reads and writes for the user, all through here: reads are capped, writes are
// atomic and never replace a symlink or a device, and every error names the flag.
import { resolve } from 'node:path';
import { checkReplaceable, FileWriteError, UnsafeTargetError, writeFileAtomic } from '../atomic-file.js';
import { InputFileError, readFileBounded, readNpyFileBounded } from '../bounded-read.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { NpyFormatError, type NpyArray } from '../npy.js';

/** Largest text input (suite, MIOpenDriver log, bench rows): far past any real one, small enough to parse at once. */
export const MAX_TEXT_INPUT_BYTES = 64 * 1024 * 1024;

/** Largest operand array read: 4 GiB, the largest Buffer the oldest supported Node (20) holds. */
export const MAX_OPERAND_BYTES = 2 ** 32;

/** Reads a text file named by `--flag` (or an argument, `flag` then being its label), capped. */
export function readTextInput(io: CliIo, flag: string, path: string, maxBytes = MAX_TEXT_INPUT_BYTES): string {
  try {
    return readFileBounded(resolve(io.cwd, path), maxBytes).toString('utf8');
  } catch (err) {
    if (err instanceof InputFileError) throw new UsageError(`cannot read ${flag} ${path}: ${err.message}`);
    throw err;
  }
}

/** Reads a `.npy` operand named by `--flag`, its data capped at `maxDataBytes`. */
export function readNpyInput(io: CliIo, flag: string, path: string, maxDataBytes = MAX_OPERAND_BYTES): NpyArray {
  try {
    return readNpyFileBounded(resolve(io.cwd, path), maxDataBytes);
  } catch (err) {
    if (err instanceof InputFileError) throw new UsageError(`cannot read ${flag} ${path}: ${err.message}`);
    if (err instanceof NpyFormatError) throw new UsageError(`${flag} ${path}: ${err.message}`);
    throw err;
  }
}

/** A symlink, device, FIFO, socket or directory at an output path, as the usage error it is. */
function unsafeTarget(flag: string, path: string, err: UnsafeTargetError): UsageError {
  return new UsageError(`${flag} ${path} is a ${err.kind}, not a regular file; outputs are written as new files and a ${err.kind} is never replaced`);
}

/** Refuses an output path {@link writeOutput} would refuse, before any work is done for it. */
export function checkOutput(io: CliIo, flag: string, path: string): void {
  try {
    checkReplaceable(resolve(io.cwd, path));
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw unsafeTarget(flag, path, err);
    throw err;
  }
}

/**
 * Writes an output named by `--flag` atomically. A symlink, device, FIFO, socket or directory at the
 * path is a usage error (exit 2), never replaced; other failures (exit 1) name the flag and path.
 * Returns the absolute path written.
 */
export function writeOutput(io: CliIo, flag: string, path: string, data: string | Uint8Array): string {
  const target = resolve(io.cwd, path);
  try {
    writeFileAtomic(target, data);
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw unsafeTarget(flag, path, err);
    if (err instanceof FileWriteError) throw new Error(`cannot write ${flag} ${path}: ${err.detail}`);
    throw err;
  }
  return target;
}
