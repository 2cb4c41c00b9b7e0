/**
 * Small kernels written once against the Target interface (used by the tests and as examples).
 * Each builds a fresh module for the given target.
 */
import type { Value } from './ir.js';
import type { Module } from './module.js';
import type { MmaAtom, Target } from './targets/target.js';
import { array, f32, i32, ptr } from './types.js';

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

