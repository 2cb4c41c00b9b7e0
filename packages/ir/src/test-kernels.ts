/**
 * Small kernels written once against the Target interface (used by the tests and as examples).
 * Each builds a fresh module for the given target.
 */
import type { Builder } from './builder.js';
import type { Value } from './ir.js';
import type { Module } from './module.js';
import { zero } from './constants.js';
import type { GlobalBuffer, MmaAtom, Target } from './targets/target.js';
import { swizzle128, swizzle128Offset } from './targets/wgmma.js';
import { array, bfloat, f32, half, i32, i8, ptr } from './types.js';

const WG = 256;

/** y[i] = a * x[i] + y[i] over `n` floats; out-of-range lanes read zero and store nothing. */
export function axpyKernel(t: Target): Module {
  const m = t.createModule();
  const b = t.kernel(m, 'axpy', [
    { name: 'x', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'y', type: ptr(1), attributes: ['noalias'] },
    { name: 'a', type: f32 },
    { name: 'n', type: i32 },
  ], { workgroupSize: WG, ids: { workitem: ['x'], workgroup: ['x'] } });
  const bytes = b.mul(b.arg('n'), 4, 'bytes');
  const x = t.globalBuffer(b, b.arg('x'), bytes);
  const y = t.globalBuffer(b, b.arg('y'), bytes);
  const gid = b.add(b.mul(t.workgroupId(b, 'x'), WG), t.workitemId(b, 'x'), 'gid');
  const off = b.shl(gid, 2, 'off');
  const xv = t.globalLoad(b, x, off, f32, { name: 'xv' });
  const yv = t.globalLoad(b, y, off, f32, { name: 'yv' });
  t.globalStore(b, y, off, b.fadd(b.fmul(b.arg('a'), xv), yv));
  b.ret();
  return m;
}

/** Reverses each block of WG floats through LDS: y[blk*WG + i] = x[blk*WG + WG-1-i]. */
export function ldsReverseKernel(t: Target): Module {
  const m = t.createModule();
  const tile = m.addGlobal({ name: 'tile', valueType: array(WG, f32), addrspace: 3, align: 16 });
  const b = t.kernel(m, 'lds_reverse', [
    { name: 'x', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'y', type: ptr(1), attributes: ['noalias'] },
    { name: 'n', type: i32 },
  ], { workgroupSize: WG, ids: { workitem: ['x'], workgroup: ['x'] } });
  const bytes = b.mul(b.arg('n'), 4);
  const x = t.globalBuffer(b, b.arg('x'), bytes);
  const y = t.globalBuffer(b, b.arg('y'), bytes);
  const tid = t.workitemId(b, 'x');
  const base = b.mul(t.workgroupId(b, 'x'), WG, 'base');
  const v = t.globalLoad(b, x, b.shl(b.add(base, tid), 2), f32);
  b.store(v, b.gep(f32, tile, [tid], { inbounds: true }), { align: 4 });
  t.barrier(b);
  const r = b.load(f32, b.gep(f32, tile, [b.sub(WG - 1, tid)], { inbounds: true }), { align: 4, name: 'mirrored' });
  t.globalStore(b, y, b.shl(b.add(base, tid), 2), r);
  b.ret();
  return m;
}

/**
 * One wave computes D = A·B + C for a single atom tile. A is m×k row-major, B is k×n row-major,
 * C and D are m×n row-major f32; every lane gathers its fragments through the atom's layout.
 */
export function mmaKernel(t: Target, atom: MmaAtom): Module {
  const m = t.createModule();
  const b = t.kernel(m, `mma_${atom.name.replace('.', '_')}`, [
    { name: 'a', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'b', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'c', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'd', type: ptr(1), attributes: ['noalias'] },
  ], { workgroupSize: atom.lanes, ids: { workitem: ['x'], workgroup: [] } });
  const elemBytes = 2;
  const aBuf = t.globalBuffer(b, b.arg('a'), b.i32(atom.m * atom.k * elemBytes));
  const bBuf = t.globalBuffer(b, b.arg('b'), b.i32(atom.k * atom.n * elemBytes));
  const cBuf = t.globalBuffer(b, b.arg('c'), b.i32(atom.m * atom.n * 4));
  const dBuf = t.globalBuffer(b, b.arg('d'), b.i32(atom.m * atom.n * 4));
  const lane = t.laneId(b);
  const gather = (count: number, at: (i: number) => { row: Value; col: Value }, ld: number, buf: typeof aBuf, elemType: Value['type'], bytesPer: number) => {
    const vals: Value[] = [];
    for (let i = 0; i < count; i++) {
      const { row, col } = at(i);
      const off = b.mul(b.add(b.mul(row, ld), col), bytesPer);
      vals.push(t.globalLoad(b, buf, off, elemType));
    }
    return b.vector(vals);
  };
  const av = gather(atom.aType.count, (i) => atom.aAt(b, lane, i), atom.k, aBuf, atom.aType.elem, elemBytes);
  const bv = gather(atom.bType.count, (i) => atom.bAt(b, lane, i), atom.n, bBuf, atom.bType.elem, elemBytes);
  const cv = gather(atom.cType.count, (i) => atom.cAt(b, lane, i), atom.n, cBuf, f32, 4);
  const dv = atom.emit(b, av, bv, cv);
  b.elements(dv).forEach((v, i) => {
    const { row, col } = atom.cAt(b, lane, i);
    t.globalStore(b, dBuf, b.mul(b.add(b.mul(row, atom.n), col), 4), v);
  });
  b.ret();
  return m;
}


/** Shared-memory placement of one K-major wgmma operand: core matrix (row group, K group) strides in bytes. */
export interface WgmmaOperandLayout {
  /** Bytes between core matrices adjacent along K (the descriptor's LBO). */
  readonly lbo: number;
  /** Bytes between core matrices adjacent along M or N (the descriptor's SBO). */
  readonly sbo: number;
}

/** Byte offset of element (row, k) of a K-major operand placed with `l` (8x8-element core matrices of 128 bytes). */
export const wgmmaPlace = (l: WgmmaOperandLayout, row: number, k: number): number => (row >> 3) * l.sbo + (k >> 3) * l.lbo + (row & 7) * 16 + (k & 7) * 2;

/** Stores a warpgroup's m64nN f32 accumulators row-major into D (accAt's formula as IR: warp w holds rows 16w.., the mma.sync C layout per 8 columns). */
function storeWgmmaAccumulators(b: Builder, t: Target, dBuf: GlobalBuffer, tid: Value, n: number, acc: readonly Value[]): void {
  acc.forEach((v, i) => {
    const warp = b.lshr(tid, 5);
    const lane = b.and(tid, 31);
    const row = b.add(b.add(b.mul(warp, 16), b.lshr(lane, 2)), 8 * ((i >> 1) & 1));
    const col = b.add(b.mul(b.and(lane, 3), 2), 8 * (i >> 2) + (i & 1));
    t.globalStore(b, dBuf, b.mul(b.add(b.mul(row, n), col), 4), v);
  });
}

/**
 * One warpgroup computes D = A·Bᵀ with sm_90a wgmma m64n{n}k16: A is 64×k row-major, Bt is n×k
 * row-major (B stored K-major, as conv weights and NHWC activations are), D is 64×n row-major f32.
 * Threads copy A and Bt element by element into shared memory with the layouts given, then one
 * wgmma per 16 values of k accumulates (the first one with accumulate off).
 */
export function wgmmaGemmKernel(t: Target, o: { n: number; k: number; dtype: 'bf16' | 'f16'; a: WgmmaOperandLayout; b: WgmmaOperandLayout }): Module {
  const wg = t.warpgroupMma;
  if (!wg) throw new Error(`${t.name} has no warpgroup MMA`);
  const m = t.createModule();
  const elem = o.dtype === 'bf16' ? bfloat : half;
  const aBytes = wgmmaPlace(o.a, 63, o.k - 1) + 2;
  const bBase = Math.ceil(aBytes / 128) * 128;
  const smemBytes = bBase + wgmmaPlace(o.b, o.n - 1, o.k - 1) + 2;
  const smem = m.addGlobal({ name: 'operands', valueType: array(smemBytes, i8), addrspace: 3, align: 128 });
  const b = t.kernel(m, `wgmma_m64n${o.n}k${o.k}_${o.dtype}`, [
    { name: 'a', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'bt', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'd', type: ptr(1), attributes: ['noalias'] },
  ], { workgroupSize: 128, ids: { workitem: ['x'], workgroup: [] } });
  const aBuf = t.globalBuffer(b, b.arg('a'), b.i32(64 * o.k * 2));
  const btBuf = t.globalBuffer(b, b.arg('bt'), b.i32(o.n * o.k * 2));
  const dBuf = t.globalBuffer(b, b.arg('d'), b.i32(64 * o.n * 4));
  const tid = t.workitemId(b, 'x');
  // Element e of a rows×k operand goes to its core-matrix slot; the layout math runs on the host, per element, as constants.
  const stage = (rows: number, buf: GlobalBuffer, layout: WgmmaOperandLayout, base: number) => {
    for (let e0 = 0; e0 < rows * o.k; e0 += 128) {
      const e = b.add(tid, e0);
      const row = b.udiv(e, o.k);
      const k = b.urem(e, o.k);
      const off = b.add(b.add(b.mul(b.lshr(row, 3), layout.sbo), b.mul(b.lshr(k, 3), layout.lbo)), b.add(b.mul(b.and(row, 7), 16), b.mul(b.and(k, 7), 2)));
      const v = t.globalLoad(b, buf, b.mul(e, 2), elem);
      b.store(v, b.gep(i8, smem, [b.add(off, base)]), { align: 2 });
    }
  };
  stage(64, aBuf, o.a, 0);
  stage(o.n, btBuf, o.b, bBase);
  wg.proxyFence(b);
  t.barrier(b);
  const aDesc = wg.descriptor(b, smem, o.a.lbo, o.a.sbo);
  const bDesc = wg.descriptor(b, b.gep(i8, smem, [b.i32(bBase)]), o.b.lbo, o.b.sbo);
  wg.fence(b);
  let acc: Value[] = Array.from({ length: o.n / 2 }, () => zero(f32));
  for (let s = 0; s < o.k / 16; s++) {
    // Step s reads K groups 2s and 2s+1: the start moves by two LBOs, in 16-byte descriptor units.
    const step = (l: WgmmaOperandLayout) => (2 * s * l.lbo) / 16;
    acc = wg.mma(b, { n: o.n, dtype: o.dtype, a: b.add(aDesc, BigInt(step(o.a))), b: b.add(bDesc, BigInt(step(o.b))), acc, accumulate: s > 0 });
  }
  wg.commit(b);
  wg.wait(b, 0);
  storeWgmmaAccumulators(b, t, dBuf, tid, o.n, acc);
  b.ret();
  return m;
}

/**
 * Shared-memory placement of one K-major 128B-swizzled wgmma operand of 64 values per row (one
 * 128-byte row each): row r is 128-byte row `shift + ⌊r/8⌋·pitch + r%8` of a 1 KiB-aligned buffer,
 * so the descriptor starts `shift` rows in and SBO = 128·pitch. `shift` not a multiple of 8 and
 * `pitch` not a multiple of 8 give the row-shifted windows of a direct conv's halo (start off the
 * 1 KiB swizzle atom, SBO not a multiple of 1024).
 */
export interface WgmmaSwizzledLayout {
  /** 128-byte rows between consecutive 8-row groups (≥ 8). */
  readonly pitch: number;
  /** 128-byte rows before row 0. */
  readonly shift: number;
}

/** Byte offset (in the 1 KiB-aligned buffer) where element (row, k < 64) of a swizzled operand placed with `l` is stored. */
export const wgmmaSwizzledPlace = (l: WgmmaSwizzledLayout, row: number, k: number): number =>
  swizzle128Offset((l.shift + (row >> 3) * l.pitch + (row & 7)) * 128 + k * 2);

/**
 * `wgmmaGemmKernel` with both operands K-major in 128B-swizzled shared memory, k = 64 (one
 * 128-byte row per M / N index): threads store A (64×64) and Bt (n×64) element by element at
 * `swizzle128(logical offset)` inside a 1 KiB-aligned buffer, then 4 wgmmas read them, the start
 * moving 32 bytes per k-step. `store: 'linear'` leaves the XOR out of the stores (a wrong kernel:
 * the descriptors still say 128B swizzle).
 */
export function wgmmaSwizzledGemmKernel(t: Target, o: { n: number; dtype: 'bf16' | 'f16'; a: WgmmaSwizzledLayout; b: WgmmaSwizzledLayout; store?: 'swizzled' | 'linear' }): Module {
  const wg = t.warpgroupMma;
  if (!wg) throw new Error(`${t.name} has no warpgroup MMA`);
  const K = 64;
  const m = t.createModule();
  const elem = o.dtype === 'bf16' ? bfloat : half;
  const rowsOf = (l: WgmmaSwizzledLayout, rows: number) => l.shift + ((rows >> 3) - 1) * l.pitch + 8;
  const bBase = Math.ceil((rowsOf(o.a, 64) * 128) / 1024) * 1024;
  const smemBytes = bBase + rowsOf(o.b, o.n) * 128;
  const smem = m.addGlobal({ name: 'operands', valueType: array(smemBytes, i8), addrspace: 3, align: 1024 });
  const b = t.kernel(m, `wgmma_swz_m64n${o.n}k${K}_${o.dtype}`, [
    { name: 'a', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'bt', type: ptr(1), attributes: ['noalias', 'readonly'] },
    { name: 'd', type: ptr(1), attributes: ['noalias'] },
  ], { workgroupSize: 128, ids: { workitem: ['x'], workgroup: [] } });
  const aBuf = t.globalBuffer(b, b.arg('a'), b.i32(64 * K * 2));
  const btBuf = t.globalBuffer(b, b.arg('bt'), b.i32(o.n * K * 2));
  const dBuf = t.globalBuffer(b, b.arg('d'), b.i32(64 * o.n * 4));
  const tid = t.workitemId(b, 'x');
  const stage = (rows: number, buf: GlobalBuffer, l: WgmmaSwizzledLayout, base: number) => {
    for (let e0 = 0; e0 < rows * K; e0 += 128) {
      const e = b.add(tid, e0);
      const row = b.lshr(e, 6);
      const k = b.and(e, 63);
      const line = b.add(b.add(b.mul(b.lshr(row, 3), l.pitch), b.and(row, 7)), l.shift + base / 128);
      const logical = b.add(b.mul(line, 128), b.mul(k, 2));
      const off = o.store === 'linear' ? logical : swizzle128(b, logical, 'swz');
      b.store(t.globalLoad(b, buf, b.mul(e, 2), elem), b.gep(i8, smem, [off]), { align: 2 });
    }
  };
  stage(64, aBuf, o.a, 0);
  stage(o.n, btBuf, o.b, bBase);
  wg.proxyFence(b);
  t.barrier(b);
  const aDesc = wg.descriptor(b, b.gep(i8, smem, [b.i32(o.a.shift * 128)]), 16, o.a.pitch * 128, { swizzle: '128B' });
  const bDesc = wg.descriptor(b, b.gep(i8, smem, [b.i32(bBase + o.b.shift * 128)]), 16, o.b.pitch * 128, { swizzle: '128B' });
  wg.fence(b);
  let acc: Value[] = Array.from({ length: o.n / 2 }, () => zero(f32));
  for (let s = 0; s < K / 16; s++) {
    // A k-step of 16 values is 32 bytes along the row: 2 descriptor units.
    acc = wg.mma(b, { n: o.n, dtype: o.dtype, a: b.add(aDesc, BigInt(2 * s)), b: b.add(bDesc, BigInt(2 * s)), acc, accumulate: s > 0 });
  }
  wg.commit(b);
  wg.wait(b, 0);
  storeWgmmaAccumulators(b, t, dBuf, tid, o.n, acc);
  b.ret();
  return m;
}
