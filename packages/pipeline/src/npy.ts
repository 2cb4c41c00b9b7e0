/**
 * NumPy `.npy` files (format versions 1.0, 2.0 and 3.0) for `rocke run`.
 *
 * Element types: float32 (`<f4`), float16 (`<f2`, kept as raw IEEE half bit patterns in a
 * Uint16Array) and uint16 (`<u2`). NumPy has no bfloat16, so **bf16 tensors are stored as uint16
 * holding the raw bf16 bit patterns** (the upper 16 bits of the float32 value). From PyTorch:
 * `np.save(p, t.view(torch.uint16).numpy())` (or `.view(torch.int16)`; `<i2` is read as uint16 bits
 * too), and back: `torch.from_numpy(np.load(p)).view(torch.bfloat16)`.
 * Big-endian files are byte-swapped on read; files are always written little-endian, C order.
 */

/** Element type of an {@link NpyArray}. */
export type NpyDtype = 'float32' | 'float16' | 'uint16';

/** An array read from or written to a `.npy` file. float16/uint16 data are raw 16-bit patterns. */
export interface NpyArray {
  dtype: NpyDtype;
  shape: number[];
  data: Float32Array | Uint16Array;
}

/** A file that is not a valid `.npy` we can read; the message says what is wrong. */
export class NpyFormatError extends Error {
  override readonly name = 'NpyFormatError';
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const DESCR: Record<string, { dtype: NpyDtype; size: 2 | 4 }> = {
  f4: { dtype: 'float32', size: 4 },
  f2: { dtype: 'float16', size: 2 },
  u2: { dtype: 'uint16', size: 2 },
  i2: { dtype: 'uint16', size: 2 },
};

/** What a `.npy` header says: element type, shape, where the data starts and how many bytes it is. */
export interface NpyHeader {
  dtype: NpyDtype;
  shape: number[];
  /** Byte offset of the data (magic, version, header length and header before it). */
  dataStart: number;
  /** Bytes the data must have: elements x element size. */
  dataBytes: number;
  itemSize: 2 | 4;
  bigEndian: boolean;
}

/** Longest header read: NumPy writes under 100 bytes for any real shape and itself refuses past 10000. */
export const MAX_NPY_HEADER_BYTES = 65536;

/**
 * Parses the header of `.npy` bytes, which may be just a prefix of the file (the first
 * `12 + MAX_NPY_HEADER_BYTES` bytes hold any header this reads). Throws {@link NpyFormatError}.
 */
export function readNpyHeader(bytes: Uint8Array): NpyHeader {
  if (bytes.length < 10 || !MAGIC.every((b, i) => bytes[i] === b)) throw new NpyFormatError('not a .npy file (bad magic)');
  const major = bytes[6]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLen: number;
  let start: number;
  if (major === 1) {
    headerLen = view.getUint16(8, true);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new NpyFormatError('truncated header');
    headerLen = view.getUint32(8, true);
    start = 12;
  } else throw new NpyFormatError(`unsupported .npy format version ${major}.${bytes[7]}`);
  if (headerLen > MAX_NPY_HEADER_BYTES) throw new NpyFormatError(`header of ${headerLen} bytes is over the ${MAX_NPY_HEADER_BYTES}-byte limit`);
  if (start + headerLen > bytes.length) throw new NpyFormatError(`truncated header: needs ${headerLen} bytes, file has ${bytes.length - start}`);
  const headerText = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(start, start + headerLen));
  const header = parseHeader(headerText);
  const descr = header['descr'];
  const fortran = header['fortran_order'];
  const shape = header['shape'];
  if (typeof descr !== 'string') throw new NpyFormatError(`header has no string 'descr': ${JSON.stringify(headerText.trim().slice(0, 200))}`);
  if (typeof fortran !== 'boolean') throw new NpyFormatError(`header has no boolean 'fortran_order'`);
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === 'number' && Number.isSafeInteger(d) && d >= 0)) {
    throw new NpyFormatError(`header 'shape' is not a tuple of non-negative integers`);
  }
  const dims = shape as number[];
  if (fortran && dims.filter((d) => d > 1).length > 1) throw new NpyFormatError('Fortran-order arrays are not supported; save with C order');
  const m = /^([<>=|])([a-z]\d+)$/.exec(descr);
  const kind = m ? DESCR[m[2]!] : undefined;
  if (!m || !kind) throw new NpyFormatError(`unsupported dtype ${JSON.stringify(descr.slice(0, 40))} (expected <f4, <f2, or <u2/<i2 holding bf16 bits)`);
  const dataBytes = dims.reduce((a, b) => a * b, 1) * kind.size;
  if (!Number.isSafeInteger(dataBytes)) throw new NpyFormatError(`shape (${dims.join(', ')}) is too large to address`);
  return { dtype: kind.dtype, shape: dims, dataStart: start + headerLen, dataBytes, itemSize: kind.size, bigEndian: m[1] === '>' };
}

/** Parses `.npy` bytes. Throws {@link NpyFormatError} with the reason for anything it cannot read. */
export function readNpy(bytes: Uint8Array): NpyArray {
  const h = readNpyHeader(bytes);
  const have = bytes.length - h.dataStart;
  const dims = h.shape;
  if (have < h.dataBytes) throw new NpyFormatError(`truncated data: shape (${dims.join(', ')}) needs ${h.dataBytes} bytes, file has ${have}`);
  if (have > h.dataBytes) throw new NpyFormatError(`${have - h.dataBytes} trailing bytes after the data of shape (${dims.join(', ')})`);
  // Copy so the typed array is aligned and independent of the input buffer.
  const raw = bytes.slice(h.dataStart, h.dataStart + h.dataBytes);
  if (h.bigEndian) swapBytes(raw, h.itemSize);
  const count = h.dataBytes / h.itemSize;
  const data = h.itemSize === 4 ? new Float32Array(raw.buffer, raw.byteOffset, count) : new Uint16Array(raw.buffer, raw.byteOffset, count);
  return { dtype: h.dtype, shape: dims, data };
}

/** Serializes an array as `.npy` (version 1.0, or 2.0 when the header needs it), little-endian, C order. */
export function writeNpy(array: NpyArray): Uint8Array {
  const count = array.shape.reduce((a, b) => a * b, 1);
  if (!array.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new RangeError(`bad shape (${array.shape.join(', ')})`);
  if (array.data.length !== count) throw new RangeError(`data has ${array.data.length} elements, shape (${array.shape.join(', ')}) needs ${count}`);
  const wantFloat32 = array.dtype === 'float32';
  if (wantFloat32 !== array.data instanceof Float32Array) throw new TypeError(`dtype ${array.dtype} needs a ${wantFloat32 ? 'Float32Array' : 'Uint16Array'}`);
  const descr = array.dtype === 'float32' ? '<f4' : array.dtype === 'float16' ? '<f2' : '<u2';
  const shapeText = array.shape.length === 1 ? `(${array.shape[0]},)` : `(${array.shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  let major = 1;
  let pre = 10;
  if (dict.length + 1 + pre > 0xffff) {
    major = 2;
    pre = 12;
  }
  // Pad with spaces so the data starts on a 64-byte boundary, newline last (as NumPy does).
  const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - pre - 1, ' ') + '\n';
  const dataBytes = new Uint8Array(array.data.buffer, array.data.byteOffset, array.data.byteLength);
  const out = new Uint8Array(total + dataBytes.length);
  out.set(MAGIC, 0);
  out[6] = major;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, dict.length, true);
  else view.setUint32(8, dict.length, true);
  for (let i = 0; i < dict.length; i++) out[pre + i] = dict.charCodeAt(i);
  out.set(dataBytes, total);
  if (!littleEndianHost()) swapBytes(out.subarray(total), array.dtype === 'float32' ? 4 : 2);
  return out;
}

function littleEndianHost(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
}

function swapBytes(bytes: Uint8Array, size: number): void {
  for (let i = 0; i + size <= bytes.length; i += size) bytes.subarray(i, i + size).reverse();
}

type PyValue = string | number | boolean | null | PyValue[] | { [k: string]: PyValue };

/** Parses the Python dict literal of a `.npy` header (strings, ints, True/False/None, tuples). */
function parseHeader(text: string): Record<string, PyValue> {
  let i = 0;
  const fail = (what: string): never => {
    throw new NpyFormatError(`bad header at character ${i}: ${what}: ${JSON.stringify(text.trim().slice(0, 200))}`);
  };
  // Real headers nest two levels (a dict holding a tuple); deeper input is refused before it can
  // exhaust the stack.
  let depth = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const value = (): PyValue => {
    ws();
    const c = text[i];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) fail('unterminated string');
      const s = text.slice(i + 1, end);
      i = end + 1;
      return s;
    }
    if ((c === '(' || c === '[' || c === '{') && ++depth > 8) fail('nested too deeply');
    if (c === '(' || c === '[') {
      const close = c === '(' ? ')' : ']';
      i++;
      const items: PyValue[] = [];
      for (;;) {
        ws();
        if (text[i] === close) {
          i++;
          depth--;
          return items;
        }
        items.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== close) fail(`expected , or ${close}`);
      }
    }
    if (c === '{') {
      i++;
      const obj: Record<string, PyValue> = Object.create(null) as Record<string, PyValue>;
      for (;;) {
        ws();
        if (text[i] === '}') {
          i++;
          depth--;
          return obj;
        }
        const key = value();
        if (typeof key !== 'string') fail('dict key is not a string');
        ws();
        if (text[i] !== ':') fail('expected :');
        i++;
        obj[key as string] = value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail('expected , or }');
      }
    }
    const m = /^(True|False|None|-?\d+)L?/.exec(text.slice(i));
    if (!m) return fail('unexpected token');
    i += m[0].length;
    return m[1] === 'True' ? true : m[1] === 'False' ? false : m[1] === 'None' ? null : Number(m[1]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail('text after the dict');
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail('header is not a dict');
  return v as Record<string, PyValue>;
}
