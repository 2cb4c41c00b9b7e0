/**
 * sm_90a warpgroup MMA: `wgmma.mma_async` with both operands in shared memory (K-major, no
 * swizzle or 128-byte swizzle) and f32 accumulators. LLVM 22 has intrinsics for the fence, commit and wait but not
 * for the MMA itself, so that one is inline asm whose exact text the interpreter recognises.
 * Descriptor fields (LBO = K-direction core-matrix stride in bits 16..29, SBO = M/N-direction
 * stride in bits 32..45) were confirmed on the H200 (both field orders tried); device/run.sh keeps checking them.
 */
import type { Builder } from '../builder.js';
import type { Value } from '../ir.js';
import { constI32, constI64 } from '../constants.js';
import { f32, i32, i64, struct, typeToString, voidT } from '../types.js';
import type { MatrixCoord, MmaDtype, WarpgroupMma, WgmmaDescriptorOptions } from './target.js';
import { TargetError } from './target.js';

/** Largest LBO/SBO: 14 bits of 16-byte units. */
const MAX_OFFSET = 1 << 18;

function checkOffset(what: string, bytes: number): void {
  if (!Number.isInteger(bytes) || bytes < 0 || bytes >= MAX_OFFSET || bytes % 16 !== 0) {
    throw new TargetError(`sm_90 wgmma: ${what} must be a multiple of 16 in 0..${MAX_OFFSET - 16}, got ${bytes}`);
  }
}

/** Layout-type field (bits 62..63) of a 128-byte-swizzled operand; 0 is no swizzle (2 = 64B, 3 = 32B are not emitted). */
export const WGMMA_SWIZZLE_128B = 1;

/**
 * 128-byte swizzle of a shared-memory byte address (the TMA / wgmma pattern): 16-byte chunk bits
 * 4..6 XORed with bits 7..9, i.e. chunk j of the 128-byte row at `a & ~127` lands at chunk
 * `j ^ ((a >> 7) & 7)`. The hardware applies it to the absolute shared address, so an offset
 * works only inside a 1 KiB-aligned buffer. JS twin of `swizzle128`.
 */
export function swizzle128Offset(byteAddress: number): number {
  if (!Number.isInteger(byteAddress) || byteAddress < 0 || byteAddress >= 2 ** 31) throw new RangeError(`swizzle128Offset: byte address must be an integer in 0..2^31-1, got ${byteAddress}`);
  return byteAddress ^ ((byteAddress >> 3) & 0x70);
}

/** IR twin of `swizzle128Offset`: `a ^ ((a >> 3) & 0x70)` on an i32 or i64 byte address or offset. */
export function swizzle128(b: Builder, byteAddress: Value, name?: string): Value {
  if (byteAddress.type.kind !== 'int' || (byteAddress.type.bits !== 32 && byteAddress.type.bits !== 64)) {
    throw new TargetError(`swizzle128: the byte address must be i32 or i64, got ${typeToString(byteAddress.type)}`);
  }
  return b.xor(byteAddress, b.and(b.lshr(byteAddress, 3), 0x70), name);
}

/** True for the n values wgmma m64nNk16 takes with f16/bf16 inputs: multiples of 8 up to 256. */
export function isWgmmaN(n: number): boolean {
  return Number.isInteger(n) && n >= 8 && n <= 256 && n % 8 === 0;
}

function checkN(n: number): void {
  if (!isWgmmaN(n)) throw new TargetError(`sm_90 wgmma: n must be a multiple of 8 in 8..256, got ${n}`);
}

/** The asm text of one m64n{n}k16 wgmma: `$0..$(q-1)` accumulators, `$q`/`$q+1` descriptors, `$q+2` scale-d. */
export function wgmmaAsmText(n: number, dtype: MmaDtype): string {
  checkN(n);
  const q = n / 2;
  const d = Array.from({ length: q }, (_, i) => `$${i}`).join(', ');
  return `{ .reg .pred p; setp.ne.b32 p, $${q + 2}, 0; wgmma.mma_async.sync.aligned.m64n${n}k16.f32.${dtype}.${dtype} {${d}}, $${q}, $${q + 1}, p, 1, 1, 0, 0; }`;
}

/** The operand constraints of that asm: n/2 f32 outputs, two i64 descriptors, the i32 scale-d, n/2 inputs tied to the outputs. */
export function wgmmaConstraints(n: number): string {
  checkN(n);
  const q = n / 2;
  return [...Array(q).fill('=f'), 'l', 'l', 'r', ...Array.from({ length: q }, (_, i) => `${i}`)].join(',');
}

/** D element of accumulator `i` of warpgroup thread `thread`: warp w owns rows 16w..16w+15, mma.sync C layout per 8 columns. */
export function wgmmaAccAt(thread: number, i: number, n = 256): MatrixCoord {
  if (!Number.isInteger(thread) || thread < 0 || thread > 127) throw new RangeError(`wgmma: thread ${thread} outside 0..127`);
  if (!Number.isInteger(i) || i < 0 || i >= n / 2) throw new RangeError(`wgmma: accumulator ${i} outside 0..${n / 2 - 1}`);
  const warp = thread >> 5;
  const lane = thread & 31;
  return { row: 16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1), col: 8 * (i >> 2) + 2 * (lane & 3) + (i & 1) };
}

export const warpgroupMma: WarpgroupMma = {
  threads: 128,

  descriptor(b: Builder, address: Value, lbo: number, sbo: number, options?: WgmmaDescriptorOptions): Value {
    if (address.type.kind !== 'ptr' || address.type.addrspace !== 3) throw new TargetError(`sm_90 wgmma: descriptor address must be ptr addrspace(3), got ${typeToString(address.type)}`);
    checkOffset('lbo', lbo);
    checkOffset('sbo', sbo);
    const swizzle = options?.swizzle ?? 'none';
    if (swizzle !== 'none' && swizzle !== '128B') throw new TargetError(`sm_90 wgmma: swizzle must be 'none' or '128B', got ${String(swizzle)}`);
    // Rows of a 128B-swizzled group are whole 128-byte swizzle rows; a group stride off that grid
    // would split rows across two XOR phases (never what a TMA or swizzle128 writer produces).
    if (swizzle === '128B' && sbo % 128 !== 0) throw new TargetError(`sm_90 wgmma: a 128B-swizzled operand needs sbo (bytes between 8-row groups) to be a multiple of 128, got ${sbo}`);
    const start = b.lshr(b.and(b.ptrtoint(address, i64), 0x3ffff), 4);
    const layout = swizzle === '128B' ? BigInt(WGMMA_SWIZZLE_128B) << 62n : 0n;
    const fields = (BigInt(lbo >> 4) << 16n) | (BigInt(sbo >> 4) << 32n) | layout;
    return b.or(start, fields, 'wgmma.desc');
  },

  fence: (b) => void b.intrinsic('llvm.nvvm.wgmma.fence.sync.aligned', voidT, []),
  commit: (b) => void b.intrinsic('llvm.nvvm.wgmma.commit_group.sync.aligned', voidT, []),
  wait(b, pending) {
    if (!Number.isInteger(pending) || pending < 0 || pending > 7) throw new TargetError(`sm_90 wgmma: wait count must be an integer in 0..7, got ${pending}`);
    b.intrinsic('llvm.nvvm.wgmma.wait_group.sync.aligned', voidT, [constI64(pending)]);
  },
  proxyFence: (b) => void b.intrinsic('llvm.nvvm.fence.proxy.async.shared_cta', voidT, []),

  mma(b, o) {
    checkN(o.n);
    const q = o.n / 2;
    if (o.acc.length !== q) throw new TargetError(`sm_90 wgmma m64n${o.n}k16: ${q} accumulators per thread, got ${o.acc.length}`);
    for (const v of o.acc) if (v.type.kind !== 'float' || v.type.name !== 'float') throw new TargetError(`sm_90 wgmma: accumulators must be f32, got ${typeToString(v.type)}`);
    for (const [what, v] of [['A', o.a], ['B', o.b]] as const) {
      if (v.type.kind !== 'int' || v.type.bits !== 64) throw new TargetError(`sm_90 wgmma: ${what} descriptor must be i64, got ${typeToString(v.type)}`);
    }
    const acc = o.accumulate ?? true;
    let scale: Value;
    if (typeof acc === 'boolean') scale = constI32(acc ? 1 : 0);
    else if (acc.type.kind === 'int' && acc.type.bits === 1) scale = b.zext(acc, i32);
    else throw new TargetError(`sm_90 wgmma: accumulate must be a boolean or i1, got ${typeToString(acc.type)}`);
    const ret = struct(Array(q).fill(f32));
    const asm = b.inlineAsm(wgmmaAsmText(o.n, o.dtype), wgmmaConstraints(o.n), { ret, params: [i64, i64, i32, ...Array(q).fill(f32)] });
    const d = b.call(asm, [o.a, o.b, scale, ...o.acc], { name: 'wgmma' });
    return Array.from({ length: q }, (_, i) => b.extractValue(d, [i]));
  },

  accAt: (thread, i) => wgmmaAccAt(thread, i),
  asmText: wgmmaAsmText,
};
