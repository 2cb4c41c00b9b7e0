import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { errnoText, fileKind } from './atomic-file.js';
import { MAX_NPY_HEADER_BYTES, NpyFormatError, readNpy, readNpyHeader, type NpyArray } from './npy.js';

/**
 * A read refused or failed: the input is larger than the caller's cap, is a directory, or could
 * not be opened. `code` is the errno code when the system gave one.
 */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * Reads at most `maxBytes` of `path`, failing with {@link InputFileError} as soon as the file
 * proves longer. The cap holds for inputs whose size is not known up front too (`/dev/zero`, a
 * pipe): they are read in chunks and never buffered past `maxBytes + 1`. With `prefix`, returns the
 * first `maxBytes` bytes (or fewer) without complaint.
 */
export function readFileBounded(path: string, maxBytes: number, options: { prefix?: boolean } = {}): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new InputFileError(errnoText(err), (err as NodeJS.ErrnoException).code);
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw new InputFileError('is a directory', 'EISDIR');
    if (stats.isFile() && stats.size > maxBytes && !options.prefix) {
      throw new InputFileError(`is ${stats.size} bytes, over the ${maxBytes}-byte limit`, 'EFBIG');
    }
    const limit = options.prefix ? maxBytes : maxBytes + 1;
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < limit) {
      const chunk = Buffer.allocUnsafe(Math.min(limit - total, 1 << 20));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      total += n;
    }
    if (total > maxBytes) throw new InputFileError(`is a ${fileKind(stats)} longer than the ${maxBytes}-byte limit`, 'EFBIG');
    return Buffer.concat(chunks, total);
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    throw new InputFileError(errnoText(err), (err as NodeJS.ErrnoException).code);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a `.npy` file whose data may be at most `maxDataBytes`: the header first (a bounded
 * prefix), then exactly the bytes the header's shape needs, so a forged or endless file costs at
 * most the cap. Throws {@link NpyFormatError} for a bad file, {@link InputFileError} for one over
 * the cap or unreadable.
 */
export function readNpyFileBounded(path: string, maxDataBytes: number): NpyArray {
  const header = readNpyHeader(readFileBounded(path, 12 + MAX_NPY_HEADER_BYTES, { prefix: true }));
  if (header.dataBytes > maxDataBytes) {
    throw new InputFileError(`shape (${header.shape.join(', ')}) of ${header.dtype} is ${header.dataBytes} bytes, over the ${maxDataBytes}-byte limit per operand`, 'EFBIG');
  }
  let bytes: Buffer;
  try {
    bytes = readFileBounded(path, header.dataStart + header.dataBytes);
  } catch (err) {
    if (err instanceof InputFileError && err.code === 'EFBIG') throw new NpyFormatError(`trailing bytes after the data of shape (${header.shape.join(', ')})`);
    throw err;
  }
  return readNpy(bytes);
}
