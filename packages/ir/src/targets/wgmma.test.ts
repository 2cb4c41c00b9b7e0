import { describe, expect, it } from 'vitest';
import { printModule } from '../printer.js';
import { wgmmaGemmKernel, wgmmaPlace, wgmmaSwizzledGemmKernel, wgmmaSwizzledPlace } from '../test-kernels.js';
import { compile, findToolchain } from '../toolchain.js';
import { array, f32, i32, i64, i8, ptr } from '../types.js';
import { zero } from '../constants.js';
import { gfx950, sm_90 } from './index.js';
import { TargetError } from './target.js';
import { isWgmmaN, swizzle128, swizzle128Offset, wgmmaAccAt, wgmmaAsmText } from './wgmma.js';

const tc = findToolchain();
const wg = sm_90.warpgroupMma!;

describe('sm_90 warpgroup MMA', () => {
  it('is an sm_90 facility compiled as sm_90a; AMD targets have none', () => {
    expect(sm_90.cpu).toBe('sm_90a');
    expect(wg.threads).toBe(128);
    expect(gfx950.warpgroupMma).toBeUndefined();
  });

  it('takes n = 8..256 in steps of 8 and refuses the rest with a reason', () => {
    expect([8, 112, 128, 256].every(isWgmmaN)).toBe(true);
    expect([0, 4, 12, 264, 7.5].some(isWgmmaN)).toBe(false);
    expect(() => wgmmaAsmText(12, 'bf16')).toThrow(/multiple of 8 in 8\.\.256, got 12/);
  });

  it('asm text names the shape, the dtype and every accumulator in order', () => {
    const s = wgmmaAsmText(16, 'f16');
    expect(s).toBe('{ .reg .pred p; setp.ne.b32 p, $10, 0; wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, $8, $9, p, 1, 1, 0, 0; }');
  });

  it('accumulator layout: warp w owns rows 16w..16w+15; each 64xN element is held exactly once', () => {
    expect(wgmmaAccAt(0, 0)).toEqual({ row: 0, col: 0 });
    expect(wgmmaAccAt(37, 3)).toEqual({ row: 16 + 1 + 8, col: 2 + 1 });
    expect(wgmmaAccAt(127, 127)).toEqual({ row: 63, col: 255 });
    const n = 24;
    const seen = new Set<number>();
    for (let t = 0; t < 128; t++) for (let i = 0; i < n / 2; i++) {
      const { row, col } = wgmmaAccAt(t, i, n);
      seen.add(row * n + col);
    }
    expect(seen.size).toBe(64 * n);
    expect(() => wgmmaAccAt(128, 0)).toThrow(RangeError);
  });

  it('descriptor: start address in 16-byte units, LBO in bits 16.., SBO in bits 32..', () => {
    const m = sm_90.createModule();
    const smem = m.addGlobal({ name: 's', valueType: array(1024, i8), addrspace: 3, align: 128 });
    const b = sm_90.kernel(m, 'desc', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128 });
    wg.descriptor(b, smem, 2048, 128);
    b.ret();
    const ir = printModule(m);
    expect(ir).toContain('and i64 %0, 262143');
    expect(ir).toContain('lshr i64 %1, 4');
    expect(ir).toContain(`or i64 %2, ${(BigInt(128 >> 4) << 32n) | (BigInt(2048 >> 4) << 16n)}`);
    expect(() => wg.descriptor(b, smem, 24, 128)).toThrow(TargetError);
    expect(() => wg.descriptor(b, smem, 1 << 18, 128)).toThrow(/lbo must be a multiple of 16/);
  });

  it('descriptor swizzle option: none is the old descriptor byte for byte; 128B sets layout type 1 in bits 62..63', () => {
    const emit = (options?: Parameters<typeof wg.descriptor>[4]) => {
      const m = sm_90.createModule();
      const smem = m.addGlobal({ name: 's', valueType: array(4096, i8), addrspace: 3, align: 1024 });
      const b = sm_90.kernel(m, 'desc', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128 });
      wg.descriptor(b, smem, 16, 2304, options);
      b.ret();
      return printModule(m);
    };
    const plain = (BigInt(2304 >> 4) << 32n) | (BigInt(16 >> 4) << 16n);
    expect(emit()).toContain(`or i64 %2, ${plain}`);
    expect(emit({ swizzle: 'none' })).toBe(emit());
    expect(emit({})).toBe(emit());
    const swz = emit({ swizzle: '128B' });
    expect(swz).toContain(`or i64 %2, ${BigInt.asIntN(64, plain | (1n << 62n))}`);
    expect(swz.replace(String(BigInt.asIntN(64, plain | (1n << 62n))), String(plain))).toBe(emit());
  });

  it('descriptor swizzle option refuses an SBO off the 128-byte row grid and unknown layouts', () => {
    const m = sm_90.createModule();
    const smem = m.addGlobal({ name: 's', valueType: array(4096, i8), addrspace: 3, align: 1024 });
    const b = sm_90.kernel(m, 'bad', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128 });
    expect(() => wg.descriptor(b, smem, 16, 1040, { swizzle: '128B' })).toThrow(/128B-swizzled operand needs sbo .* multiple of 128, got 1040/);
    expect(() => wg.descriptor(b, smem, 16, 1040, { swizzle: '64B' as 'none' })).toThrow(/swizzle must be 'none' or '128B', got 64B/);
    expect(() => wg.descriptor(b, smem, 16, 1040)).not.toThrow();
    expect(() => wg.descriptor(b, smem, 16, 2304, { swizzle: '128B' })).not.toThrow();
  });

  it('swizzle128Offset reproduces the TMA 128B pattern: chunk j of the row at A lands at chunk j ^ ((A >> 7) & 7)', () => {
    for (const base of [0, 1024, 4096 + 384]) {
      for (let row = 0; row < 16; row++) {
        const a = base + row * 128;
        for (let j = 0; j < 8; j++) for (let e = 0; e < 16; e++) expect(swizzle128Offset(a + 16 * j + e)).toBe(a + (j ^ ((a >> 7) & 7)) * 16 + e);
      }
    }
    expect(swizzle128Offset(128 + 16)).toBe(128);
    expect(swizzle128Offset(7 * 128 + 3)).toBe(7 * 128 + 7 * 16 + 3);
    expect(() => swizzle128Offset(-1)).toThrow(RangeError);
    expect(wgmmaSwizzledPlace({ pitch: 9, shift: 3 }, 8, 8)).toBe(swizzle128Offset((3 + 9) * 128 + 16));
  });

  it('swizzle128 emits the same function on i32 and i64 and refuses other types', () => {
    const m = sm_90.createModule();
    const b = sm_90.kernel(m, 'swz', [{ name: 'u', type: i32 }, { name: 'v', type: i64 }], { workgroupSize: 128 });
    swizzle128(b, b.arg('u'), 'x');
    swizzle128(b, b.arg('v'));
    b.ret();
    const ir = printModule(m);
    expect(ir).toMatch(/lshr i32 %u, 3\n.*and i32 %\d+, 112\n.*%x = xor i32 %u, %\d+/);
    expect(ir).toMatch(/lshr i64 %v, 3\n.*and i64 %\d+, 112\n.*xor i64 %v, %\d+/);
    expect(swizzle128(b, b.i32(7 * 128 + 16), 'c')).toMatchObject({ kind: 'const.int', value: BigInt(7 * 128 + 96) });
    expect(() => swizzle128(b, b.f32(0))).toThrow(/swizzle128: the byte address must be i32 or i64, got float/);
  });

  it('refuses a wrong accumulator count, a non-i64 descriptor and a non-shared address', () => {
    const m = sm_90.createModule();
    const b = sm_90.kernel(m, 'bad', [{ name: 'p', type: ptr(1) }], { workgroupSize: 128 });
    const d = b.i64(0);
    expect(() => wg.mma(b, { n: 16, dtype: 'bf16', a: d, b: d, acc: [zero(f32)] })).toThrow(/8 accumulators per thread, got 1/);
    expect(() => wg.mma(b, { n: 8, dtype: 'bf16', a: b.i32(0), b: d, acc: Array(4).fill(zero(f32)) })).toThrow(/A descriptor must be i64/);
    expect(() => wg.descriptor(b, b.arg('p'), 128, 128)).toThrow(/ptr addrspace\(3\)/);
  });

  it.each([
    [128, 'bf16', { lbo: 128, sbo: 512 }, { lbo: 128, sbo: 512 }],
    [112, 'f16', { lbo: 1024, sbo: 128 }, { lbo: 14 * 128, sbo: 128 }],
    [256, 'bf16', { lbo: 128, sbo: 560 }, { lbo: 256, sbo: 1040 }],
  ] as const)('m64n%sk32 %s GEMM compiles with LLVM 22 and ptxas for sm_90a', async (n, dtype, a, bl) => {
    const m = wgmmaGemmKernel(sm_90, { n, k: 32, dtype, a, b: bl });
    const r = await compile(printModule(m), sm_90, { toolchain: tc });
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    expect(r.ptx).toContain('.target sm_90a');
    expect(r.ptx.match(new RegExp(`wgmma\\.mma_async\\.sync\\.aligned\\.m64n${n}k16\\.f32\\.${dtype}\\.${dtype}`, 'g'))).toHaveLength(2);
    expect(r.ptx).toContain('wgmma.fence.sync.aligned');
    expect(r.ptx).toContain('wgmma.commit_group.sync.aligned');
    expect(r.ptx).toContain('fence.proxy.async.shared::cta');
    expect(r.cubin?.[0]).toBe(0x7f);
  });

  it.each([
    [128, 'bf16', { pitch: 8, shift: 0 }, { pitch: 8, shift: 0 }],
    [64, 'bf16', { pitch: 9, shift: 3 }, { pitch: 18, shift: 5 }],
  ] as const)('128B-swizzled m64n%sk64 %s GEMM compiles with LLVM 22 and ptxas; the operands are 1 KiB aligned', async (n, dtype, a, bl) => {
    const m = wgmmaSwizzledGemmKernel(sm_90, { n, dtype, a, b: bl });
    const r = await compile(printModule(m), sm_90, { toolchain: tc });
    if (r.vendor !== 'nvidia') throw new Error('expected PTX');
    expect(r.ptx).toMatch(/\.shared \.align 1024 \.b8 operands\[/);
    expect(r.ptx.match(new RegExp(`wgmma\\.mma_async\\.sync\\.aligned\\.m64n${n}k16\\.f32\\.${dtype}\\.${dtype}`, 'g'))).toHaveLength(4);
    expect(r.cubin?.[0]).toBe(0x7f);
  });

  it('wgmmaPlace: core matrices of 128 contiguous bytes at the LBO/SBO strides', () => {
    const l = { lbo: 256, sbo: 1040 };
    expect(wgmmaPlace(l, 0, 0)).toBe(0);
    expect(wgmmaPlace(l, 7, 7)).toBe(7 * 16 + 14);
    expect(wgmmaPlace(l, 8, 0)).toBe(1040);
    expect(wgmmaPlace(l, 9, 9)).toBe(1040 + 256 + 16 + 2);
  });
});
