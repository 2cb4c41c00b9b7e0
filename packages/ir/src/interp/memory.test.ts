/** Global memory, buffers, LDS sizing, AMD raw-buffer range checking and buffer descriptors. */
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import { constInt, nullPtr } from '../constants.js';
import type { Value } from '../ir.js';
import { CDNA_BUFFER_FLAGS } from '../targets/amd.js';
import { getTarget } from '../targets/index.js';
import type { Target } from '../targets/target.js';
import { array, f32, half, i16, i32, i64, i8, ptr, vec, voidT } from '../types.js';
import type { Type } from '../types.js';
import { cdnaRawBufferFlags } from './descriptor.js';
import { interpret } from './index.js';

const gfx950 = getTarget('gfx950');
const sm90 = getTarget('sm_90');

function oneThread(t: Target, params: { name: string; type: Type }[], body: (b: Builder) => void) {
  const m = t.createModule();
  const b = t.kernel(m, 'k', params, { workgroupSize: 64, ids: { workitem: ['x'], workgroup: [] } });
  body(b);
  b.ret();
  return m;
}

const run1 = (t: Target, m: ReturnType<typeof oneThread>, args: unknown[], extra = {}) =>
  interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [1, 1, 1], args: args as never, ...extra });

describe('plain global loads and stores', () => {
  const copy = (t: Target, index: number) => oneThread(t, [{ name: 'x', type: ptr(1) }, { name: 'y', type: ptr(1) }], (b) => {
    b.store(b.load(f32, b.gep(f32, b.arg('x'), [index]), { name: 'xv' }), b.gep(f32, b.arg('y'), [0]));
  });

  it('read and write the caller\'s typed arrays', () => {
    const y = new Float32Array(1);
    run1(gfx950, copy(gfx950, 3), [Float32Array.of(0, 1, 2, 3.5), y]);
    expect(y[0]).toBe(3.5);
  });

  it('an out-of-bounds load is an error naming the instruction, the address and the buffer', () => {
    const x = new Float32Array(4);
    expect(() => run1(gfx950, copy(gfx950, 4), [x, new Float32Array(1)]))
      .toThrow(/^load of 4 bytes at address 0x[0-9a-f]+: byte offset 16 of argument "x" \(16 bytes\) is out of bounds \[at @k block %entry instruction #1 \(load %xv\) `%xv = load float, ptr addrspace\(1\) %0, align 4`, thread \(0,0,0\) of workgroup \(0,0,0\)\]$/);
  });

  it('an out-of-bounds store and a negative offset are errors too', () => {
    const m = oneThread(sm90, [{ name: 'y', type: ptr(1) }], (b) => b.store(b.i32(7), b.gep(i32, b.arg('y'), [b.i32(-1)])));
    expect(() => run1(sm90, m, [new Int32Array(2)])).toThrow(/store of 4 bytes at address .*byte offset -4 of argument "y"/);
    const n = oneThread(sm90, [{ name: 'y', type: ptr(1) }], (b) => b.store(b.i32(7), b.gep(i32, b.arg('y'), [2])));
    expect(() => run1(sm90, n, [new Int32Array(2)])).toThrow(/store of 4 bytes .*byte offset 8 of argument "y" \(8 bytes\) is out of bounds/);
  });

  it('a null pointer is an error', () => {
    expect(() => run1(gfx950, copy(gfx950, 0), [null, new Float32Array(1)])).toThrow(/null or invalid pointer/);
  });

  it('pointer arguments may be views: offsets are relative to the view, bounds are the whole allocation', () => {
    const buf = new Float32Array(8).map((_, i) => i);
    const out = new Float32Array(8);
    // x = buf[2..], y = out[5..] (a view of the same kind of allocation)
    run1(gfx950, copy(gfx950, 3), [buf.subarray(2), out.subarray(5)]);
    expect(Array.from(out)).toEqual([0, 0, 0, 0, 0, 5, 0, 0]);
    // Two views of one ArrayBuffer are one allocation: x and y alias.
    run1(gfx950, copy(gfx950, 0), [buf.subarray(7), buf.subarray(0, 1)]);
    expect(buf[0]).toBe(7);
  });

  it('pointer arguments may name buffers with byte offsets; arguments may be given by name', () => {
    const data = new Float32Array(4).map((_, i) => 10 + i);
    const out = new Float32Array(2);
    interpret(copy(gfx950, 1), 'k', {
      target: 'gfx950', grid: [1, 1, 1], block: [1, 1, 1], buffers: { data, out },
      args: { x: { buffer: 'data', byteOffset: 4 }, y: { buffer: 'out', byteOffset: 4 } },
    });
    expect(Array.from(out)).toEqual([0, 12]);
  });

  it('bad arguments are clear errors', () => {
    const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }, { name: 'n', type: i32 }], () => {});
    const go = (args: unknown) => interpret(m, 'k', { target: gfx950, grid: [1, 1, 1], block: [1, 1, 1], args: args as never });
    expect(() => go([new Float32Array(1)])).toThrow(/@k takes 2 arguments \(x, n\), got 1/);
    expect(() => go({ x: new Float32Array(1) })).toThrow(/missing argument "n" of @k/);
    expect(() => go({ x: new Float32Array(1), n: 1, m: 2 })).toThrow(/@k has no parameter "m"/);
    expect(() => go([new Float32Array(1), 1.5])).toThrow(/argument "n" must be an integer for i32/);
    expect(() => go([new Float32Array(1), 2 ** 32])).toThrow(/argument "n" = 4294967296 does not fit i32/);
    expect(() => go([7, 1])).toThrow(/argument "x" is a pointer/);
    expect(() => go([{ buffer: 'nope' }, 1])).toThrow(/refers to buffer "nope", which is not in buffers/);
    expect(() => interpret(m, 'nokernel', { target: gfx950, grid: [1, 1, 1], block: [1, 1, 1], args: [] })).toThrow(/no function @nokernel in the module \(defined: k\)/);
    expect(() => interpret(m, 'k', { target: gfx950, grid: [0, 1, 1], block: [1, 1, 1], args: [null, 1] })).toThrow(/grid must be three positive integers/);
    expect(() => interpret(m, 'k', { target: gfx950, grid: [1, 1, 1], block: [2048, 1, 1], args: [null, 1] })).toThrow(/block of 2048 threads exceeds gfx950's 1024/);
  });
});

describe('LDS', () => {
  it('is sized from the addrspace(3) globals, with dynamic shared memory after them (sm_90)', () => {
    const m = sm90.createModule();
    const stat = m.addGlobal({ name: 'stat', valueType: array(3, f32), addrspace: 3, align: 4 });
    const dyn = m.addGlobal({ name: 'dyn', valueType: array(0, f32), addrspace: 3, linkage: 'external', align: 16 });
    const b = sm90.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 64 });
    const tid = sm90.workitemId(b, 'x');
    b.store(b.uitofp(tid, f32), b.gep(f32, dyn, [tid]));
    b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.i32(0), b.gep(f32, stat, [2])));
    sm90.barrier(b);
    b.store(b.load(f32, b.gep(f32, dyn, [b.sub(63, tid)])), b.gep(f32, b.arg('out'), [tid]));
    // The dynamic array starts at 16 (12 static bytes aligned up): the byte address of dyn[0] is observable.
    b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.ptrtoint(dyn, i32), b.gep(i32, b.arg('out'), [64])));
    b.ret();
    const out = new Float32Array(65);
    interpret(m, 'k', { target: sm90, grid: [1, 1, 1], block: [64, 1, 1], args: [out], dynamicShared: 256 });
    expect(Array.from(out.subarray(0, 64))).toEqual(Array.from({ length: 64 }, (_, i) => 63 - i));
    expect(new Int32Array(out.buffer)[64]).toBe(16);
    expect(() => interpret(m, 'k', { target: sm90, grid: [1, 1, 1], block: [64, 1, 1], args: [out], dynamicShared: 128 }))
      .toThrow(/LDS store of 4 bytes at offset 144 is outside the 144 bytes of LDS/);
    expect(() => interpret(m, 'k', { target: sm90, grid: [1, 1, 1], block: [64, 1, 1], args: [out], dynamicShared: 300 * 1024 }))
      .toThrow(/kernel needs \d+ bytes of LDS; sm_90 has 232448/);
  });

  it('starts every workgroup from the fill pattern, not from the previous workgroup\'s data', () => {
    const m = gfx950.createModule();
    const s = m.addGlobal({ name: 's', valueType: array(1, i32), addrspace: 3 });
    const b = gfx950.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 1, ids: { workitem: [], workgroup: ['x'] } });
    const wg = gfx950.workgroupId(b, 'x');
    b.store(b.load(i32, s), b.gep(i32, b.arg('out'), [wg]));
    b.store(b.i32(5), s);
    b.ret();
    const out = new Int32Array(2);
    interpret(m, 'k', { target: gfx950, grid: [2, 1, 1], block: [1, 1, 1], args: [out], ldsFill: 0x11 });
    expect(Array.from(out)).toEqual([0x11111111, 0x11111111]);
  });
});

describe('LDS across workgroups', () => {
  it('race marks of one workgroup do not leak into the next', () => {
    const m = gfx950.createModule();
    const s = m.addGlobal({ name: 's', valueType: array(1, i32), addrspace: 3 });
    const b = gfx950.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 2, ids: { workitem: ['x'], workgroup: ['x'] } });
    const tid = gfx950.workitemId(b, 'x');
    const wg = gfx950.workgroupId(b, 'x');
    // Thread 0 reads the word, thread 1 (running after it) writes it: a race only if both were in one interval.
    b.ifThen(b.icmp('eq', tid, 0), () => b.store(b.load(i32, s), b.gep(i32, b.arg('out'), [wg])));
    gfx950.barrier(b);
    b.ifThen(b.icmp('eq', tid, 1), () => b.store(b.add(wg, 7), s));
    b.ret();
    const out = new Int32Array(3);
    interpret(m, 'k', { target: gfx950, grid: [3, 1, 1], block: [2, 1, 1], args: [out], ldsFill: 0 });
    expect(Array.from(out)).toEqual([0, 0, 0]);
  });
});

/**
 * The partial-out-of-range rule, from LLVM's `llvm/docs/AMDGPUUsage.rst`, section "Relaxed Buffer
 * OOB (Out Of Bounds) Mode" (llvm/llvm-project#134734): an access of more than 32 bits is
 * range-checked for each 32-bit word independently (unsigned offset, saturating), so a dword that
 * straddles num_records is out of range whole; AMD's gfx950 model in ROCm's rocjitsu
 * (ROCm/rocm-systems#10928) checks dwordx2/3/4 per dword the same way and requires a shorter
 * access to end within num_records.
 */
describe('AMD raw buffer range checking (per dword against num_records)', () => {
  /** out = buffer.load<T>(rsrc(x, numRecords), off); the buffer holds 1, 2, 3, ... as floats. */
  function load(type: Type, numRecords: number, off: number, x: Float32Array) {
    const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }, { name: 'out', type: ptr(1) }], (b) => {
      const buf = gfx950.globalBuffer(b, b.arg('x'), b.i32(numRecords));
      const v = gfx950.globalLoad(b, buf, b.i32(off), type);
      b.store(v, b.arg('out'));
    });
    const out = new Uint8Array(16);
    run1(gfx950, m, [x, out]);
    return out;
  }
  const x = Float32Array.from({ length: 16 }, (_, i) => i + 1);
  const f = (u: Uint8Array, n: number) => Array.from(new Float32Array(u.buffer, 0, n));

  it('a whole vector in range loads normally', () => {
    expect(f(load(vec(4, f32), 64, 16, x), 4)).toEqual([5, 6, 7, 8]);
  });

  it('a vector partly past num_records keeps its in-range dwords and zeroes the rest', () => {
    expect(f(load(vec(4, f32), 24, 16, x), 4)).toEqual([5, 6, 0, 0]);
    expect(f(load(vec(4, f32), 20, 16, x), 4)).toEqual([5, 0, 0, 0]);
  });

  it('a dword that straddles num_records is wholly out of range', () => {
    expect(f(load(f32, 22, 20, x), 1)).toEqual([0]);
    expect(f(load(vec(2, f32), 22, 16, x), 2)).toEqual([5, 0]);
    // Halves inside a straddling dword are dropped together with it.
    expect(Array.from(new Uint16Array(load(vec(4, half), 22, 16, x).buffer, 0, 4).slice(2))).toEqual([0, 0]);
  });

  it("AMDGPUUsage's own example: an <8 x i8> load at offset 6 of an 8-byte buffer loads nothing", () => {
    expect(Array.from(load(vec(8, i8), 8, 6, x).subarray(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const bytes = new Uint8Array(x.buffer);
    // With 2 more bytes of range the first word (bytes 6..9) is in range, the second (10..13) is not.
    expect(Array.from(load(vec(8, i8), 10, 6, x).subarray(0, 8))).toEqual([...bytes.subarray(6, 10), 0, 0, 0, 0]);
  });

  it('sub-dword accesses are in range when offset + size <= num_records', () => {
    const bytes = new Uint8Array(x.buffer);
    expect(load(i16, 10, 8, x)[0]).toBe(bytes[8]);
    expect(Array.from(load(i16, 10, 9, x).subarray(0, 2))).toEqual([0, 0]);
    expect(load(i8, 10, 9, x)[0]).toBe(bytes[9]);
  });

  it('offsets far past the range (masking idiom) return zero without touching memory', () => {
    expect(f(load(vec(4, f32), 64, 0x7ffffff0, x), 4)).toEqual([0, 0, 0, 0]);
  });

  it('an access inside num_records but outside the allocation is an error (the hardware would read other memory)', () => {
    expect(() => load(f32, 1024, 64, x)).toThrow(/load of 4 bytes at address .*byte offset 64 of argument "x" \(64 bytes\) is out of bounds/);
  });

  it('stores past num_records are dropped per dword; memory past the range is untouched', () => {
    const m = oneThread(gfx950, [{ name: 'y', type: ptr(1) }], (b) => {
      const buf = gfx950.globalBuffer(b, b.arg('y'), b.i32(24));
      gfx950.globalStore(b, buf, b.i32(16), b.vector([1, 2, 3, 4].map((v) => b.sitofp(b.i32(v), f32))));
      gfx950.globalStore(b, buf, b.i32(0x7ffffff0), b.sitofp(b.i32(9), f32));
      gfx950.globalStore(b, buf, b.i32(23), b.trunc(b.i32(0x1234), i16));
    });
    const y = new Float32Array(8).fill(-1);
    run1(gfx950, m, [y]);
    expect(Array.from(y)).toEqual([-1, -1, -1, -1, 1, 2, -1, -1]);
  });

  it('num_records is taken modulo 2^32 (the descriptor holds 32 bits)', () => {
    const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }, { name: 'out', type: ptr(1) }], (b) => {
      const rsrc = b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [b.arg('x'), constInt(i16, 0), constInt(i64, 2 ** 32 + 8), 0x27000]);
      const v0 = b.intrinsic('llvm.amdgcn.raw.ptr.buffer.load.f32', f32, [rsrc, 4, 0, 0]);
      const v1 = b.intrinsic('llvm.amdgcn.raw.ptr.buffer.load.f32', f32, [rsrc, 8, 0, 0]);
      [v0, v1].forEach((v, i) => b.store(v, b.gep(f32, b.arg('out'), [i])));
    });
    const out = new Float32Array(2);
    run1(gfx950, m, [x, out]);
    expect(Array.from(out)).toEqual([2, 0]);
  });

  it('a non-zero soffset is refused (the hardware counts it in the range check; not modeled)', () => {
    for (const store of [false, true]) {
      const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }], (b) => {
        const buf = gfx950.globalBuffer(b, b.arg('x'), b.i32(64));
        if (store) b.intrinsic('llvm.amdgcn.raw.ptr.buffer.store.f32', voidT, [b.f32(1), buf.handle, 4, 8, 0]);
        else b.intrinsic('llvm.amdgcn.raw.ptr.buffer.load.f32', f32, [buf.handle, 4, 8, 0]);
      });
      expect(() => run1(gfx950, m, [x])).toThrow(/soffset \(argument [23]\) must be the constant 0; gfx942\/gfx950 count soffset in the range check/);
    }
  });

  it('a raw buffer access through something that is not a resource is an error, not zeros', () => {
    const m = oneThread(gfx950, [{ name: 'out', type: ptr(1) }], (b) => {
      const v = b.intrinsic('llvm.amdgcn.raw.ptr.buffer.load.f32', f32, [nullPtr(8), 0, 0, 0]);
      b.store(v, b.arg('out'));
    });
    expect(() => run1(gfx950, m, [new Float32Array(1)])).toThrow(/raw buffer load through a value that is not a buffer resource/);
  });

  it('a buffer resource with a stride is refused', () => {
    const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }], (b) => {
      b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [b.arg('x'), constInt(i16, 16), constInt(i64, 64), 0x27000]);
    });
    expect(() => run1(gfx950, m, [x])).toThrow(/stride 16 \(only raw buffers, stride 0, are modeled\)/);
  });
});

/**
 * Word 3 of the buffer descriptor: the one value a raw CDNA buffer has, `(7 << 12) | (4 << 15)`
 * (LLVM's `mlir/lib/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.cpp`, `makeBufferRsrc`, which also
 * writes out the field layout; field names as Mesa's `S_008F0C_*`), and every other value refused
 * with the field named.
 */
describe('AMD buffer descriptor word 3', () => {
  const withFlags = (flags: Value | number) => oneThread(gfx950, [{ name: 'x', type: ptr(1) }], (b) => {
    b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [b.arg('x'), constInt(i16, 0), constInt(i64, 64), flags]);
  });
  const run = (flags: number) => () => run1(gfx950, withFlags(flags), [new Float32Array(16)]);

  it("is what the targets build: NUM_FORMAT 7 (float), DATA_FORMAT 4 (32), every other field 0", () => {
    expect(CDNA_BUFFER_FLAGS).toBe(0x27000);
    expect(cdnaRawBufferFlags()).toBe(CDNA_BUFFER_FLAGS);
    expect(run(CDNA_BUFFER_FLAGS)).not.toThrow();
  });

  it.each([
    ['DATA_FORMAT 0 (the invalid format)', 0x00007000, /DATA_FORMAT \(bits 15\.\.18\) is 0, a raw buffer on gfx950 needs 4/],
    ["CK's gfx9 word, NUM_FORMAT 0", 0x00020000, /NUM_FORMAT \(bits 12\.\.14\) is 0, a raw buffer on gfx950 needs 7/],
    ['ADD_TID_ENABLE', 0x00027000 | (1 << 23), /ADD_TID_ENABLE \(bits 23\.\.23\) is 1, .*needs 0 \(it adds thread id × stride to every address\)/],
    ['INDEX_STRIDE 3', 0x00027000 | (3 << 21), /INDEX_STRIDE \(bits 21\.\.22\) is 3/],
    ['DST_SEL_X..W = X, Y, Z, W (a format load\'s selects)', 0x00027000 | 4 | (5 << 3) | (6 << 6) | (7 << 9), /DST_SEL_X \(bits 0\.\.2\) is 4/],
    ['the RDNA word (bit 24, OOB_SELECT 3)', 0x31027000, /bits 24\.\.27 \(reserved on CDNA; bit 27 NV\) \(bits 24\.\.27\) is 1/],
    ['OOB_SELECT alone', 0x00027000 | (2 << 28), /bits 28\.\.29 \(OOB_SELECT on RDNA; none on CDNA\) \(bits 28\.\.29\) is 2/],
    ['the nested-heap bit', 0x00027000 | (1 << 19), /bits 19\.\.20 .* is 1/],
    ['TYPE 2', 0x00027000 | (2 << 30), /TYPE \(bits 30\.\.31\) is 2/],
  ])('refuses %s, naming the field', (_, flags, why) => {
    expect(run(flags)).toThrow(why);
    expect(run(flags)).toThrow(/^buffer resource flags 0x[0-9a-f]{8}: .*the kernels build 0x00027000 \[at @k block %entry instruction #\d+ \(call @llvm\.amdgcn\.make\.buffer\.rsrc\.p8\.p1\)/);
  });

  it('refuses flags that are not a constant', () => {
    const m = oneThread(gfx950, [{ name: 'x', type: ptr(1) }, { name: 'f', type: i32 }], (b) => {
      b.intrinsic('llvm.amdgcn.make.buffer.rsrc.p8.p1', ptr(8), [b.arg('x'), constInt(i16, 0), constInt(i64, 64), b.arg('f')]);
    });
    expect(() => run1(gfx950, m, [new Float32Array(16), 0x27000])).toThrow(/argument 3 of @llvm\.amdgcn\.make\.buffer\.rsrc\.p8\.p1 must be a constant/);
  });
});

describe('sm_90 guarded global access (predicated loads, cp.async zero-fill)', () => {
  it('out-of-range loads give zero and stores are skipped', () => {
    const m = oneThread(sm90, [{ name: 'x', type: ptr(1) }, { name: 'out', type: ptr(1) }], (b) => {
      const buf = sm90.globalBuffer(b, b.arg('x'), b.i32(8));
      const ob = sm90.globalBuffer(b, b.arg('out'), b.i32(8));
      sm90.globalStore(b, ob, b.i32(0), sm90.globalLoad(b, buf, b.i32(4), f32));
      sm90.globalStore(b, ob, b.i32(4), sm90.globalLoad(b, buf, b.i32(8), f32));
      sm90.globalStore(b, ob, b.i32(8), sm90.globalLoad(b, buf, b.i32(0), f32));
    });
    const out = new Float32Array(3).fill(-1);
    run1(sm90, m, [Float32Array.of(1, 2, 3), out]);
    expect(Array.from(out)).toEqual([2, 0, -1]);
  });

  it('cp.async copies synchronously and zero-fills past src_size', () => {
    const m = sm90.createModule();
    const s = m.addGlobal({ name: 's', valueType: array(8, i32), addrspace: 3 });
    const b = sm90.kernel(m, 'k', [{ name: 'x', type: ptr(1) }, { name: 'out', type: ptr(1) }], { workgroupSize: 1 });
    b.intrinsic('llvm.nvvm.cp.async.cg.shared.global.16', voidT, [s, b.arg('x')]);
    b.intrinsic('llvm.nvvm.cp.async.ca.shared.global.16.s', voidT, [b.gep(i32, s, [4]), b.gep(i32, b.arg('x'), [4]), 6]);
    b.intrinsic('llvm.nvvm.cp.async.commit.group', voidT, []);
    b.intrinsic('llvm.nvvm.cp.async.wait.group', voidT, [0]);
    sm90.barrier(b);
    b.forLoop({ from: 0, to: 8 }, (i: Value) => {
      b.store(b.load(i32, b.gep(i32, s, [i])), b.gep(i32, b.arg('out'), [i]));
    });
    b.ret();
    const out = new Int32Array(8);
    const x = Int32Array.from({ length: 8 }, (_, i) => 0x01010101 * (i + 1));
    interpret(m, 'k', { target: sm90, grid: [1, 1, 1], block: [1, 1, 1], args: [x, out] });
    // Bytes 0..5 of x[4..] copied (x[4] whole, low half of x[5]), the rest zero.
    expect(Array.from(out)).toEqual([x[0], x[1], x[2], x[3], x[4], 0x0606, 0, 0]);
  });
});
