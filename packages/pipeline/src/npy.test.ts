import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NpyFormatError, readNpy, writeNpy } from './npy.js';

// Builds a file the way np.save lays one out (format 1.0; header padded with spaces to a 64-byte
// boundary, newline last), independently of writeNpy.
function numpyStyleFile(descr: string, shape: string, data: Uint8Array, fortran = 'False'): Uint8Array {
  const dict = `{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  const header = dict.padEnd(total - 11, ' ') + '\n';
  const out = new Uint8Array(total + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(data, total);
  return out;
}

describe('.npy', () => {
  it('reads a NumPy float32 file', () => {
    const values = new Float32Array([1.5, -2.0, 0.25, 3.0, 4.0, 1e-3]);
    const arr = readNpy(numpyStyleFile('<f4', '(2, 3)', new Uint8Array(values.buffer)));
    expect(arr.dtype).toBe('float32');
    expect(arr.shape).toEqual([2, 3]);
    expect([...arr.data]).toEqual([...values]);
  });

  it('writes what it reads, byte for byte, with data 64-byte aligned', () => {
    const values = new Float32Array([1.5, -2.0, 0.25, 3.0, 4.0, 1e-3]);
    const file = numpyStyleFile('<f4', '(2, 3)', new Uint8Array(values.buffer));
    const written = writeNpy({ dtype: 'float32', shape: [2, 3], data: values });
    expect(Buffer.from(written).equals(Buffer.from(file))).toBe(true);
    expect((written.length - values.byteLength) % 64).toBe(0);
  });

  it('round-trips float16 and bf16 (uint16 bits) of any shape', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('float16' as const, 'uint16' as const),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 4 }),
        fc.integer({ min: 0, max: 0xffff }),
        (dtype, shape, seed) => {
          const n = shape.reduce((a, b) => a * b, 1);
          const data = Uint16Array.from({ length: n }, (_, i) => (seed + i * 7919) & 0xffff);
          const back = readNpy(writeNpy({ dtype, shape, data }));
          expect(back.dtype).toBe(dtype);
          expect(back.shape).toEqual(shape);
          expect([...back.data]).toEqual([...data]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads 1-D and 0-D shapes, <i2 as bf16 bits, and big-endian data', () => {
    expect(readNpy(numpyStyleFile('<u2', '(3,)', new Uint8Array([1, 0, 2, 0, 0x80, 0x3f]))).data).toEqual(new Uint16Array([1, 2, 0x3f80]));
    const scalar = readNpy(numpyStyleFile('<f4', '()', new Uint8Array(new Float32Array([7]).buffer)));
    expect(scalar.shape).toEqual([]);
    expect([...scalar.data]).toEqual([7]);
    expect(readNpy(numpyStyleFile('<i2', '(1,)', new Uint8Array([0xc0, 0xff]))).data[0]).toBe(0xffc0);
    expect([...readNpy(numpyStyleFile('>f4', '(1,)', new Uint8Array([0x3f, 0xc0, 0, 0]))).data]).toEqual([1.5]);
  });

  it('rejects bad files with a reason', () => {
    const ok = numpyStyleFile('<f4', '(2,)', new Uint8Array(8));
    expect(() => readNpy(new Uint8Array([1, 2, 3]))).toThrow(/bad magic/);
    expect(() => readNpy(ok.subarray(0, ok.length - 1))).toThrow(/truncated data: shape \(2\) needs 8 bytes, file has 7/);
    expect(() => readNpy(ok.subarray(0, 40))).toThrow(/truncated header/);
    expect(() => readNpy(numpyStyleFile('<f8', '(1,)', new Uint8Array(8)))).toThrow(/unsupported dtype "<f8"/);
    expect(() => readNpy(numpyStyleFile('<f4', '(2, 2)', new Uint8Array(16), 'True'))).toThrow(/Fortran/);
    expect(() => readNpy(numpyStyleFile('<f4', '(1,)', new Uint8Array(8)))).toThrow(/4 trailing bytes/);
    expect(() => readNpy(numpyStyleFile('<f4', '(1, x)', new Uint8Array(4)))).toThrow(NpyFormatError);
    expect(() => writeNpy({ dtype: 'float32', shape: [3], data: new Float32Array(2) })).toThrow(/needs 3/);
    expect(() => writeNpy({ dtype: 'float16', shape: [1], data: new Float32Array(1) })).toThrow(/Uint16Array/);
  });
});

const numpy = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!numpy)('.npy against NumPy (python3 with numpy present)', () => {
  it('NumPy reads our files and we read NumPy files, values and bytes equal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rocke-npy-'));
    const ours = join(dir, 'ours.npy');
    writeFileSync(ours, writeNpy({ dtype: 'float16', shape: [2, 2], data: new Uint16Array([0x3c00, 0xc000, 0x3800, 0x7c00]) }));
    const py = [
      'import numpy as np, sys',
      `a = np.load(${JSON.stringify(ours)})`,
      'print(a.dtype, a.shape, a.tolist())',
      `np.save(${JSON.stringify(join(dir, 'np32.npy'))}, np.arange(12, dtype='<f4').reshape(3, 4) / 8)`,
      `np.save(${JSON.stringify(join(dir, 'npu16.npy'))}, np.array([0x3f80, 0xbf80], dtype='<u2'))`,
    ].join('\n');
    const r = spawnSync('python3', ['-c', py], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('float16 (2, 2) [[1.0, -2.0], [0.5, inf]]');
    const np32 = readFileSync(join(dir, 'np32.npy'));
    const a = readNpy(np32);
    expect(a.shape).toEqual([3, 4]);
    expect([...a.data]).toEqual(Array.from({ length: 12 }, (_, i) => i / 8));
    expect(Buffer.from(writeNpy(a)).equals(np32)).toBe(true);
    expect([...readNpy(readFileSync(join(dir, 'npu16.npy'))).data]).toEqual([0x3f80, 0xbf80]);
  });
});
