/**
 * sm_90a warpgroup MMA through the interpreter: the wgmma GEMM test kernel against a plain matmul
 * over several operand layouts (and a mismatched descriptor giving wrong numbers), then the errors
 * a sloppy kernel must hit: divergence, non-uniform descriptors, missing fence, operands read out
 * of range, and shared-memory stores into operands a wgmma may still be reading.
 */
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import { constI64 } from '../constants.js';
import type { Value } from '../ir.js';
import type { Module } from '../module.js';
import { sm_90 } from '../targets/index.js';
import { wgmmaAsmText } from '../targets/wgmma.js';
import { wgmmaGemmKernel, wgmmaSwizzledGemmKernel } from '../test-kernels.js';
import type { WgmmaOperandLayout, WgmmaSwizzledLayout } from '../test-kernels.js';
import { array, f32, i32, i64, i8, ptr, struct } from '../types.js';
import { InterpretError, interpret } from './index.js';
import { bfloatToBits, halfToBits } from './numeric.js';

const t = sm_90;
const wg = t.warpgroupMma!;

interface Gemm {
  readonly n: number;
  readonly k: number;
  readonly dtype: 'bf16' | 'f16';
  readonly a: WgmmaOperandLayout;
  readonly b: WgmmaOperandLayout;
}

/** Small integers in -4..4 (every product and sum exact in any precision). */
function ints(count: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 16) % 9 - 4;
  });
}

/** Runs wgmma GEMM module `m` on A (64×k) and Bt (n×k), both row-major; returns D (64×n). */
function runGemm(m: Module, g: Gemm, A: readonly number[], Bt: readonly number[]): Float32Array {
  const bits = g.dtype === 'bf16' ? bfloatToBits : halfToBits;
  const d = new Float32Array(64 * g.n).fill(NaN);
  interpret(m, `wgmma_m64n${g.n}k${g.k}_${g.dtype}`, {
    target: t, grid: [1, 1, 1], block: [128, 1, 1], args: [Uint16Array.from(A, bits), Uint16Array.from(Bt, bits), d],
  });
  return d;
}

/** D[i][j] = Σ_q A[i][q]·Bt[j][q] in double. */
function matmul(g: Pick<Gemm, 'n' | 'k'>, A: readonly number[], Bt: readonly number[]): Float64Array {
  const d = new Float64Array(64 * g.n);
  for (let i = 0; i < 64; i++) for (let j = 0; j < g.n; j++) {
    let s = 0;
    for (let q = 0; q < g.k; q++) s += A[i * g.k + q]! * Bt[j * g.k + q]!;
    d[i * g.n + j] = s;
  }
  return d;
}

const mismatches = (got: Float32Array, want: Float64Array) => got.filter((v, i) => v !== want[i]).length;

describe('wgmma GEMM vs a plain matmul', () => {
  const cases: readonly [string, Gemm][] = [
    ['m64n128k32 bf16, K core matrices adjacent', { n: 128, k: 32, dtype: 'bf16', a: { lbo: 128, sbo: 512 }, b: { lbo: 128, sbo: 512 } }],
    ['m64n112k32 f16, row groups adjacent', { n: 112, k: 32, dtype: 'f16', a: { lbo: 8 * 128, sbo: 128 }, b: { lbo: 14 * 128, sbo: 128 } }],
    ['m64n256k32 bf16, padded strides', { n: 256, k: 32, dtype: 'bf16', a: { lbo: 128, sbo: 560 }, b: { lbo: 256, sbo: 1040 } }],
    ['m64n8k16 f16, one step', { n: 8, k: 16, dtype: 'f16', a: { lbo: 128, sbo: 256 }, b: { lbo: 128, sbo: 256 } }],
    ['m64n64k64 bf16, A row groups adjacent, B padded', { n: 64, k: 64, dtype: 'bf16', a: { lbo: 8 * 128, sbo: 128 }, b: { lbo: 128, sbo: 8 * 128 + 64 } }],
  ];
  it.each(cases)('%s: exact', (_, g) => {
    const A = ints(64 * g.k, 1);
    const Bt = ints(g.n * g.k, 2);
    const d = runGemm(wgmmaGemmKernel(t, g), g, A, Bt);
    expect(mismatches(d, matmul(g, A, Bt))).toBe(0);
  });

  it('a descriptor with LBO and SBO swapped (data placed the right way) gives wrong numbers', () => {
    const g: Gemm = { n: 64, k: 32, dtype: 'bf16', a: { lbo: 128, sbo: 512 }, b: { lbo: 128, sbo: 512 } };
    const m = wgmmaGemmKernel(t, g);
    // The descriptor is `or (start, fields)` with the constant fields last: swap them in the A descriptor.
    const descs = m.functions.flatMap((f) => f.blocks.flatMap((b) => b.instructions)).filter((i) => i.op === 'or' && i.name === 'wgmma.desc');
    expect(descs).toHaveLength(2);
    (descs[0] as unknown as { rhs: Value }).rhs = constI64((BigInt(512 >> 4) << 16n) | (BigInt(128 >> 4) << 32n));
    const A = ints(64 * g.k, 3);
    const Bt = ints(g.n * g.k, 4);
    const d = runGemm(m, g, A, Bt);
    expect(mismatches(d, matmul(g, A, Bt))).toBeGreaterThan(64 * g.n / 2);
  });

  it('sums the 16 products of a wgmma in double and rounds once (the interpreter convention, as mma.sync)', () => {
    const g: Gemm = { n: 8, k: 16, dtype: 'bf16', a: { lbo: 128, sbo: 256 }, b: { lbo: 128, sbo: 256 } };
    const A = new Array<number>(64 * 16).fill(0);
    A[0] = 2 ** 24;
    A[1] = 1;
    A[2] = 1;
    const Bt = new Array<number>(8 * 16).fill(1);
    // Accumulating in f32 step by step would lose both ones (2^24 + 1 rounds back to 2^24).
    expect(runGemm(wgmmaGemmKernel(t, g), g, A, Bt)[0]).toBe(2 ** 24 + 2);
  });
});

interface SwizzledGemm {
  readonly n: number;
  readonly dtype: 'bf16' | 'f16';
  readonly a: WgmmaSwizzledLayout;
  readonly b: WgmmaSwizzledLayout;
}

/** Runs swizzled GEMM module `m` (k = 64) on A (64×64) and Bt (n×64); returns D (64×n). */
function runSwizzled(m: Module, g: SwizzledGemm, A: readonly number[], Bt: readonly number[]): Float32Array {
  const bits = g.dtype === 'bf16' ? bfloatToBits : halfToBits;
  const d = new Float32Array(64 * g.n).fill(NaN);
  interpret(m, `wgmma_swz_m64n${g.n}k64_${g.dtype}`, {
    target: t, grid: [1, 1, 1], block: [128, 1, 1], args: [Uint16Array.from(A, bits), Uint16Array.from(Bt, bits), d],
  });
  return d;
}

/** The `or (start, fields)` descriptor instructions of a module (A first, then B). */
const descriptorOrs = (m: Module) => m.functions.flatMap((f) => f.blocks.flatMap((b) => b.instructions)).filter((i) => i.op === 'or' && i.name === 'wgmma.desc') as unknown as { rhs: { value: bigint } }[];

describe('wgmma with 128B-swizzled operands vs a plain matmul', () => {
  const canonical = { pitch: 8, shift: 0 };
  const cases: readonly [string, SwizzledGemm][] = [
    ['m64n128k64 bf16, both canonical (SBO 1024, starts on 1 KiB)', { n: 128, dtype: 'bf16', a: canonical, b: canonical }],
    // The probe's tap windows: starts rows into the buffer (off the 1 KiB atom), SBO = pitch·128 not a multiple of 1024.
    ['m64n64k64 bf16, row-shifted windows (A pitch 9 shift 3, B pitch 18 shift 5)', { n: 64, dtype: 'bf16', a: { pitch: 9, shift: 3 }, b: { pitch: 18, shift: 5 } }],
    ['m64n96k64 f16, A shifted (pitch 13, shift 1), B canonical', { n: 96, dtype: 'f16', a: { pitch: 13, shift: 1 }, b: canonical }],
    ['m64n256k64 bf16, A canonical, B shifted (pitch 10, shift 7)', { n: 256, dtype: 'bf16', a: canonical, b: { pitch: 10, shift: 7 } }],
  ];
  it.each(cases)('%s: exact', (_, g) => {
    const A = ints(64 * 64, 5);
    const Bt = ints(g.n * 64, 6);
    const d = runSwizzled(wgmmaSwizzledGemmKernel(t, g), g, A, Bt);
    expect(mismatches(d, matmul({ ...g, k: 64 }, A, Bt))).toBe(0);
  });

  it('the shifted case really starts off the 1 KiB atom with an SBO that is no multiple of 1024', () => {
    const g = cases[1]![1];
    const descs = descriptorOrs(wgmmaSwizzledGemmKernel(t, g));
    const sbo = (v: bigint) => Number((v >> 32n) & 0x3fffn) * 16;
    expect(descs.map((x) => sbo(x.rhs.value))).toEqual([9 * 128, 18 * 128]);
    expect(descs.map((x) => x.rhs.value >> 62n)).toEqual([1n, 1n]);
    expect([(g.a.shift * 128) % 1024, (g.b.shift * 128) % 1024]).toEqual([384, 640]);
  });

  it('the same kernel storing without the XOR (descriptors still 128B) gives wrong numbers', () => {
    const g = cases[1]![1];
    const A = ints(64 * 64, 7);
    const Bt = ints(g.n * 64, 8);
    const d = runSwizzled(wgmmaSwizzledGemmKernel(t, { ...g, store: 'linear' }), g, A, Bt);
    expect(mismatches(d, matmul({ ...g, k: 64 }, A, Bt))).toBeGreaterThan(64 * g.n / 2);
  });

  it('reading the swizzled bytes with the layout type cleared (no swizzle) gives wrong numbers', () => {
    const g = cases[0]![1];
    const m = wgmmaSwizzledGemmKernel(t, g);
    // Clear bits 62..63 of both descriptors; LBO 16 / SBO 1024 are then read as core-matrix strides.
    for (const x of descriptorOrs(m)) x.rhs = constI64(x.rhs.value & ((1n << 62n) - 1n)) as unknown as { value: bigint };
    const A = ints(64 * 64, 9);
    const Bt = ints(g.n * 64, 10);
    expect(mismatches(runSwizzled(m, g, A, Bt), matmul({ ...g, k: 64 }, A, Bt))).toBeGreaterThan(64 * g.n / 2);
  });
});

interface Tiny {
  /** Threads per block (default 128). */
  readonly threads?: number;
  /** Leave out the barrier after staging. */
  readonly noBarrier?: boolean;
  /** Emit wgmma.fence (default true). */
  readonly fence?: boolean;
  /** Only threads where this is true issue the wgmma (default all). */
  readonly issue?: (b: Builder, tid: Value) => Value;
  /** Byte offset of A in shared memory (default 0; may depend on the thread). */
  readonly aAt?: (b: Builder, tid: Value) => Value | number;
  /** Extra descriptor bits or'ed into A's descriptor. */
  readonly aBits?: bigint;
  /** Second wgmma reading B at byte 2304, in its own commit group. */
  readonly second?: boolean;
  /** Code before the fence. */
  readonly beforeIssue?: (b: Builder, tid: Value) => void;
  /** Code after the wgmma (before its commit), after the commit(s) (before the wait), and after the wait. */
  readonly beforeCommit?: (b: Builder, tid: Value, smem: Value) => void;
  readonly beforeWait?: (b: Builder, tid: Value, smem: Value) => void;
  readonly afterWait?: (b: Builder, tid: Value, smem: Value) => void;
  /** wait_group count (default 0). */
  readonly pending?: number;
}

/**
 * One m64n8k16 bf16 wgmma per warpgroup: A at byte 0 (K groups adjacent: LBO 128, SBO 256, 2 KiB),
 * B at byte 2048 (256 bytes); operands staged by the threads; results stored to `out`.
 */
function tinyKernel(o: Tiny = {}): Module {
  const threads = o.threads ?? 128;
  const m = t.createModule();
  const smem = m.addGlobal({ name: 'smem', valueType: array(4096, i8), addrspace: 3, align: 128 });
  const b = t.kernel(m, 'k', [{ name: 'src', type: ptr(1) }, { name: 'out', type: ptr(1) }], { workgroupSize: threads, ids: { workitem: ['x'], workgroup: [] } });
  const tid = t.workitemId(b, 'x');
  const src = t.globalBuffer(b, b.arg('src'), b.i32(4096));
  // Each thread stages its own 16-byte slices of the first 4 KiB (zeros from `src`).
  for (let s = 0; s < 4096; s += 16 * threads) {
    b.ifThen(b.icmp('ult', tid, (4096 - s) / 16), () => {
      const off = b.add(b.mul(tid, 16), s);
      b.store(t.globalLoad(b, src, off, array(4, i32)), b.gep(i8, smem, [off]), { align: 16 });
    });
  }
  wg.proxyFence(b);
  if (!o.noBarrier) t.barrier(b);
  const body = () => {
    o.beforeIssue?.(b, tid);
    if (o.fence ?? true) wg.fence(b);
    const aOff = o.aAt ? o.aAt(b, tid) : 0;
    let aDesc = wg.descriptor(b, b.gep(i8, smem, [aOff]), 128, 256);
    if (o.aBits !== undefined) aDesc = b.or(aDesc, o.aBits);
    const zeros = Array.from({ length: 4 }, () => b.f32(0));
    let acc = wg.mma(b, { n: 8, dtype: 'bf16', a: aDesc, b: wg.descriptor(b, b.gep(i8, smem, [b.i32(2048)]), 128, 256), acc: zeros, accumulate: false });
    o.beforeCommit?.(b, tid, smem);
    wg.commit(b);
    if (o.second) {
      acc = wg.mma(b, { n: 8, dtype: 'bf16', a: aDesc, b: wg.descriptor(b, b.gep(i8, smem, [b.i32(2304)]), 128, 256), acc });
      wg.commit(b);
    }
    o.beforeWait?.(b, tid, smem);
    wg.wait(b, o.pending ?? 0);
    o.afterWait?.(b, tid, smem);
    acc.forEach((v, i) => b.store(v, b.gep(f32, b.arg('out'), [b.add(b.mul(tid, 4), i)]), { align: 4 }));
  };
  if (o.issue) b.ifThen(o.issue(b, tid), body, 'issue');
  else body();
  b.ret();
  return m;
}

function runTiny(m: Module, threads = 128) {
  const out = new Float32Array(4 * threads);
  interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [threads, 1, 1], args: [new Uint8Array(4096), out] });
  return out;
}

/** Thread `tid` stores a zero bf16 at shared byte `at(tid)`. */
const storeAt = (at: (b: Builder, tid: Value) => Value) => (b: Builder, tid: Value, smem: Value) => {
  b.store(b.i32(0), b.gep(i8, smem, [at(b, tid)]), { align: 4 });
};

describe('wgmma scheduling and operand checks', () => {
  it('the tiny kernel runs clean (zeros in, zeros out) on one and on two warpgroups', () => {
    expect(Array.from(runTiny(tinyKernel())).every((v) => Object.is(v, 0))).toBe(true);
    expect(Array.from(runTiny(tinyKernel({ threads: 256, second: true }), 256)).every((v) => Object.is(v, 0))).toBe(true);
  });

  it('a warpgroup whose threads do not all reach the wgmma is a divergence error', () => {
    const m = tinyKernel({ issue: (b, tid) => b.icmp('ult', tid, 96) });
    expect(() => runTiny(m)).toThrow(/divergent warpgroup-collective: thread 0 of workgroup \(0,0,0\) waits at @k block %issue\.then instruction #\d+ \(call asm "[^"]*wgmma[^"]*" %wgmma\) but thread 96 of workgroup \(0,0,0\) returned \(all 128 threads of its warpgroup must reach it together\)/);
  });

  it('a warp that first finishes a wave collective of its own is not divergence', () => {
    const m = tinyKernel({
      beforeIssue: (b, tid) => b.ifThen(b.icmp('eq', b.lshr(tid, 5), 1), () => void b.intrinsic('llvm.nvvm.shfl.sync.idx.i32', i32, [b.i32(-1), tid, b.i32(0), b.i32(31)]), 'warp1'),
    });
    expect(Array.from(runTiny(m)).every((v) => Object.is(v, 0))).toBe(true);
  });

  it('a block that is not whole warpgroups cannot issue one', () => {
    expect(() => runTiny(tinyKernel({ threads: 96 }), 96)).toThrow(/warpgroup-collective wgmma m64n8k16 bf16 at .* needs 128 threads \(4 whole waves\); the workgroup has 96 threads/);
  });

  it('descriptors must be uniform across the warpgroup', () => {
    const m = tinyKernel({ aAt: (b, tid) => b.mul(b.lshr(tid, 5), 16) });
    expect(() => runTiny(m)).toThrow(/wgmma m64n8k16 bf16: non-uniform A descriptor across the warpgroup: thread 0 passes 0x1000080000, thread 32 passes 0x1000080001 \(every thread must pass the same\) \[at @k block %[\w.]+/);
  });

  it('refuses the 64B and 32B layout types and other unmodeled bits', () => {
    expect(() => runTiny(tinyKernel({ aBits: 2n << 62n }))).toThrow(/wgmma A descriptor 0x8000001000080000 has layout type 2 \(64B swizzle; only 0, no swizzle, and 1, 128B swizzle, are modeled\)/);
    expect(() => runTiny(tinyKernel({ aBits: 3n << 62n }))).toThrow(/wgmma A descriptor 0xc000001000080000 has layout type 3 \(32B swizzle;/);
    expect(() => runTiny(tinyKernel({ aBits: 1n << 49n }))).toThrow(/wgmma A descriptor 0x2001000080000 has bits outside the start/);
    expect(() => runTiny(tinyKernel({ aBits: (1n << 62n) | (1n << 49n) }))).toThrow(/wgmma A descriptor 0x4002001000080000 has bits outside the start .* \(base offset is not modeled\)/);
  });

  it('128B swizzle (tiny kernel, A start 0, SBO 256): runs; bad starts, SBOs and bytes outside shared memory are errors', () => {
    const swz = 1n << 62n;
    expect(Array.from(runTiny(tinyKernel({ aBits: swz }))).every((v) => Object.is(v, 0))).toBe(true);
    expect(() => runTiny(tinyKernel({ aBits: swz, aAt: () => 112 }))).toThrow(/wgmma m64n8k16 bf16: A descriptor \(start 112, SBO 256, 128B swizzle\): the k16 step's 32 bytes at row offset 112 cross the end of the 128-byte swizzled row/);
    // Bit 32 turns SBO 256 (16 units) into 272.
    expect(() => runTiny(tinyKernel({ aBits: swz | (1n << 32n) }))).toThrow(/A descriptor \(start 0, SBO 272, 128B swizzle\): a 128B-swizzled SBO must be a multiple of 128/);
    expect(() => runTiny(tinyKernel({ aBits: swz, aAt: () => 3968 }))).toThrow(/wgmma m64n8k16 bf16: A row 1, k 0\.\.7 at shared bytes 4096\.\.4111 \(0x1000\) is outside the 4096 bytes of shared memory \(start 3968, SBO 256, 128B swizzle\)/);
  });

  it('an operand outside shared memory is an error naming the bytes', () => {
    expect(() => runTiny(tinyKernel({ aAt: () => 4000 }))).toThrow(/wgmma m64n8k16 bf16: A core matrix \(rows 0\.\.7, k 0\.\.7\) at shared bytes 4000\.\.4127 \(0xfa0\) is outside the 4096 bytes of shared memory \(start 4000, LBO 128, SBO 256\)/);
  });

  it('a wgmma without a prior wgmma.fence is an error', () => {
    expect(() => runTiny(tinyKernel({ fence: false }))).toThrow(/wgmma m64n8k16 bf16 of warpgroup 0 \(issued at @k block %[\w.]+ instruction #\d+\): thread 0 never executed wgmma\.fence\.sync\.aligned/);
  });

  it('operands written since the last barrier by another warpgroup are a race; by its own warpgroup they are not', () => {
    // Unstaged barrier: thread t writes bytes 16t..16t+15, so B (bytes 2048..2303) comes from warpgroup 1 when there is one.
    expect(() => runTiny(tinyKernel({ threads: 256, noBarrier: true }), 256)).toThrow(/LDS data race: wgmma m64n8k16 bf16 of warpgroup 0 reads byte 2048 that thread 128 wrote since the last barrier \(missing barrier\?\)/);
    expect(() => runTiny(tinyKernel({ noBarrier: true }))).not.toThrow();
  });

  it('inline asm other than the exact wgmma text (or with other constraints) is still refused', () => {
    const build = (text: string, constraints: string) => {
      const m = t.createModule();
      const b = t.kernel(m, 'k', [{ name: 'out', type: ptr(1) }], { workgroupSize: 128 });
      const asm = b.inlineAsm(text, constraints, { ret: struct(Array(4).fill(f32)), params: [i64, i64, i32, f32, f32, f32, f32] });
      b.call(asm, [b.i64(0), b.i64(0), b.i32(0), b.f32(0), b.f32(0), b.f32(0), b.f32(0)]);
      b.ret();
      return () => interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [128, 1, 1], args: [new Float32Array(4)] });
    };
    const text = wgmmaAsmText(8, 'bf16');
    const good = '=f,=f,=f,=f,l,l,r,0,1,2,3';
    expect(build(text.replace('p, 1, 1, 0, 0', 'p, -1, 1, 0, 0'), good)).toThrow(/inline asm "\{ \.reg \.pred p; .*" \(constraints "=f,=f,=f,=f,l,l,r,0,1,2,3"\) is not modeled by the interpreter/);
    expect(build(text, '=f,=f,=f,=f,l,l,r,f,f,f,f')).toThrow(/inline asm .* is not modeled by the interpreter/);
    // The exact text and constraints are the wgmma: it gets as far as the missing fence.
    expect(build(text, good)).toThrow(/never executed wgmma\.fence/);
  });
});

describe('wgmma hazard: shared-memory stores into operands not yet waited for', () => {
  it('a store into A after commit, before wait_group, names the byte, the wgmma and the store', () => {
    const m = tinyKernel({ beforeWait: storeAt((b, tid) => b.mul(tid, 4)) });
    expect(() => runTiny(m)).toThrow(/wgmma operand overwritten: thread 0 stores to shared byte 0 \(0x0\) that wgmma m64n8k16 bf16 of warpgroup 0 \(issued at @k block %[\w.]+ instruction #\d+\) may still be reading: it is in commit group 0 of warpgroup 0 and thread 0 has waited for only 0 of its 1 committed groups \(wgmma\.wait_group first\) \[at @k block %[\w.]+ instruction #\d+ \(store\) `store i32 0, ptr addrspace\(3\) %\d+, align 4`, thread \(0,0,0\)/);
  });

  it('a store before the commit is reported as uncommitted; the same store after the wait is fine', () => {
    expect(() => runTiny(tinyKernel({ beforeCommit: storeAt((b, tid) => b.add(b.mul(tid, 4), 2048)) }))).toThrow(/thread 0 stores to shared byte 2048 \(0x800\) .*: its wgmma is not committed yet/);
    expect(() => runTiny(tinyKernel({ afterWait: storeAt((b, tid) => b.mul(tid, 4)) }))).not.toThrow();
  });

  it('cp.async into an operand before the wait is caught at the cp.async', () => {
    const m = tinyKernel({
      beforeWait: (b, tid, smem) => {
        const src = t.globalBuffer(b, b.arg('src'), b.i32(4096));
        t.asyncCopy!.copy(b, src, b.mul(tid, 16), b.gep(i8, smem, [b.add(b.mul(tid, 16), 1024)]));
      },
    });
    expect(() => runTiny(m)).toThrow(/wgmma operand overwritten: thread 0 stores to shared byte 1024 \(0x400\) .* \[at @k block %[\w.]+ instruction #\d+ \(call @llvm\.nvvm\.cp\.async\.cg\.shared\.global\.16\.s\)/);
  });

  it('wait_group 1 completes the older group only', () => {
    const older = storeAt((b, tid) => b.add(b.mul(b.and(tid, 63), 4), 2048));
    const newer = storeAt((b, tid) => b.add(b.mul(b.and(tid, 63), 4), 2304));
    expect(() => runTiny(tinyKernel({ second: true, pending: 1, afterWait: (b, tid, smem) => b.ifThen(b.icmp('eq', tid, 0), () => older(b, tid, smem)) }))).not.toThrow();
    expect(() => runTiny(tinyKernel({ second: true, pending: 1, afterWait: (b, tid, smem) => b.ifThen(b.icmp('eq', tid, 0), () => newer(b, tid, smem)) }))).toThrow(/shared byte 2304 .* it is in commit group 1 of warpgroup 0 and thread 0 has waited for only 1 of its 2 committed groups/);
  });

  it('another warpgroup may overwrite the operands only after the wait and a barrier', () => {
    const store = storeAt((b, tid) => b.mul(b.sub(tid, 128), 4));
    const late = (withBarrier: boolean) => tinyKernel({
      threads: 256,
      afterWait: (b, tid, smem) => {
        if (withBarrier) t.barrier(b);
        b.ifThen(b.icmp('uge', tid, 128), () => store(b, tid, smem));
      },
    });
    expect(() => runTiny(late(false), 256)).toThrow(/thread 128 stores to shared byte 0 \(0x0\) that wgmma m64n8k16 bf16 of warpgroup 0 .* thread 128 is in warpgroup 1: it may overwrite the operands of warpgroup 0 only after that warpgroup's wgmma\.wait_group and a barrier/);
    expect(() => runTiny(late(true), 256)).not.toThrow();
  });

  it('a swizzled operand is pending exactly at its swizzled bytes', () => {
    // A (128B swizzle, start 0, SBO 256): 128-byte line 2 (bytes 256..383, XOR phase 2) is read only
    // by rows whose logical chunks 0 and 1 land at chunks 2 and 3, i.e. bytes 288..319.
    const at = (byte: number) => tinyKernel({ aBits: 1n << 62n, beforeWait: (b, tid, smem) => b.ifThen(b.icmp('eq', tid, 0), () => storeAt(() => b.i32(byte))(b, tid, smem)) });
    expect(() => runTiny(at(288))).toThrow(/wgmma operand overwritten: thread 0 stores to shared byte 288 \(0x120\)/);
    expect(() => runTiny(at(316))).toThrow(/stores to shared byte 316/);
    // Unswizzled, these would be the pending core matrix bytes; swizzled they are not read.
    expect(() => runTiny(at(256))).not.toThrow();
    expect(() => runTiny(at(320))).not.toThrow();
    expect(() => runTiny(tinyKernel({ beforeWait: (b, tid, smem) => b.ifThen(b.icmp('eq', tid, 0), () => storeAt(() => b.i32(256))(b, tid, smem)) }))).toThrow(/stores to shared byte 256/);
  });

  it('errors are InterpretErrors', () => {
    expect(() => runTiny(tinyKernel({ beforeWait: storeAt((b, tid) => b.mul(tid, 4)) }))).toThrow(InterpretError);
  });
});
