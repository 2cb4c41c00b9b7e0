/**
 * Wave-collective operations: they run once every lane of a wave (warp) has arrived, reading
 * each lane's operands from its register file and writing each lane's result.
 * MFMA and mma.sync take their lane↔element layouts from the target's MMA atoms (one source of
 * truth with the kernels); ldmatrix and shuffles follow the PTX ISA (warp-level matrix load `ldmatrix`, `shfl.sync`).
 */
import type { MmaAtom } from '../targets/target.js';
import { InterpretError } from './errors.js';
import { S_THREAD } from './machine.js';
import type { Machine, Regs } from './machine.js';
import { bfloatFromBits } from './numeric.js';

/**
 * A wave-wide operation; `run` gets the register files of the wave's lanes in lane order. With
 * `warpgroup` it spans the 128 threads of an sm_90 warpgroup instead (4 consecutive warps,
 * threads 128g..128g+127), and `run` gets theirs in thread order.
 */
export interface Collective {
  readonly name: string;
  readonly warpgroup?: boolean;
  run(regs: readonly Regs[]): void;
}

/** Flattened layout: `idx[lane * count + e]` = row-major index of the element in the `rows × cols` matrix. */
function flatten(atom: MmaAtom, which: 'a' | 'b' | 'c', count: number, cols: number, total: number): Int32Array {
  const idx = new Int32Array(atom.lanes * count);
  const seen = new Uint8Array(total);
  for (let l = 0; l < atom.lanes; l++) {
    for (let e = 0; e < count; e++) {
      const { row, col } = atom[which](l, e);
      const k = row * cols + col;
      if (!(k >= 0 && k < total)) throw new InterpretError(`atom ${atom.name}: ${which} layout of lane ${l} element ${e} is outside the matrix`);
      idx[l * count + e] = k;
      seen[k]! += 1;
    }
  }
  // A layout the hardware could have must place every element exactly once.
  if (seen.some((s) => s !== 1)) throw new InterpretError(`atom ${atom.name}: ${which} layout does not cover the matrix exactly once`);
  return idx;
}

/** `D = A·B + C` with products summed in double and one rounding to f32 at the end (D may be C). */
function matmulAcc(A: Float64Array, B: Float64Array, C: Float64Array, m: number, n: number, k: number, D: Float64Array): void {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let q = 0; q < k; q++) s += A[i * k + q]! * B[q * n + j]!;
      D[i * n + j] = Math.fround(C[i * n + j]! + s);
    }
  }
}

/**
 * AMD MFMA `D = mfma(A, B, C, cbsz, abid, blgp)`. `bitsAsI16`: the gfx942 `.1k` bf16 forms carry
 * bf16 bit patterns in `<4 x i16>`.
 */
export function mfmaCollective(atom: MmaAtom, a: number, b: number, c: number, d: number, bitsAsI16: boolean): Collective {
  const { m, n, k } = atom;
  const ka = atom.aType.count;
  const kb = atom.bType.count;
  const kc = atom.cType.count;
  const aIdx = flatten(atom, 'a', ka, k, m * k);
  const bIdx = flatten(atom, 'b', kb, n, k * n);
  const cIdx = flatten(atom, 'c', kc, n, m * n);
  const lanes = atom.lanes;
  // Scratch matrices reused by every execution (collectives never run re-entrantly).
  const A = new Float64Array(m * k);
  const B = new Float64Array(k * n);
  const C = new Float64Array(m * n);
  return {
    name: atom.intrinsic,
    run(regs) {
      for (let l = 0; l < lanes; l++) {
        const r = regs[l]!;
        const av = r[a];
        const bv = r[b];
        const cv = r[c];
        if (bitsAsI16) {
          for (let e = 0; e < ka; e++) A[aIdx[l * ka + e]!] = bfloatFromBits(av[e]);
          for (let e = 0; e < kb; e++) B[bIdx[l * kb + e]!] = bfloatFromBits(bv[e]);
        } else {
          for (let e = 0; e < ka; e++) A[aIdx[l * ka + e]!] = av[e];
          for (let e = 0; e < kb; e++) B[bIdx[l * kb + e]!] = bv[e];
        }
        for (let e = 0; e < kc; e++) C[cIdx[l * kc + e]!] = cv[e];
      }
      const D = C;
      matmulAcc(A, B, C, m, n, k, D);
      for (let l = 0; l < lanes; l++) {
        const out = new Array<number>(kc);
        for (let e = 0; e < kc; e++) out[e] = D[cIdx[l * kc + e]!]!;
        regs[l]![d] = out;
      }
    },
  };
}

/**
 * NVIDIA `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}`: 4 A registers, 2 B registers, 4 C
 * floats → `{float,float,float,float}`. bf16 registers are i32 with the lower-index element in
 * bits 15:0; f16 registers are `<2 x half>`. Register q half h is atom vector element 2q + h.
 */
export function mmaSyncCollective(atom: MmaAtom, args: readonly number[], d: number): Collective {
  const { m, n, k } = atom;
  const aIdx = flatten(atom, 'a', 8, k, m * k);
  const bIdx = flatten(atom, 'b', 4, n, k * n);
  const cIdx = flatten(atom, 'c', 4, n, m * n);
  const bf16 = atom.dtype === 'bf16';
  const lanes = atom.lanes;
  const A = new Float64Array(m * k);
  const B = new Float64Array(k * n);
  const C = new Float64Array(m * n);
  // Register q of an operand holds elements 2q (bits 15:0) and 2q + 1 (bits 31:16).
  const unpack = (reg: unknown, dst: Float64Array, idx: Int32Array, at: number): void => {
    if (bf16) {
      dst[idx[at]!] = bfloatFromBits((reg as number) & 0xffff);
      dst[idx[at + 1]!] = bfloatFromBits((reg as number) >>> 16);
    } else {
      dst[idx[at]!] = (reg as number[])[0]!;
      dst[idx[at + 1]!] = (reg as number[])[1]!;
    }
  };
  return {
    name: atom.intrinsic,
    run(regs) {
      for (let l = 0; l < lanes; l++) {
        const r = regs[l]!;
        for (let q = 0; q < 4; q++) unpack(r[args[q]!], A, aIdx, l * 8 + 2 * q);
        for (let q = 0; q < 2; q++) unpack(r[args[4 + q]!], B, bIdx, l * 4 + 2 * q);
        for (let e = 0; e < 4; e++) C[cIdx[l * 4 + e]!] = r[args[6 + e]!];
      }
      matmulAcc(A, B, C, m, n, k, C);
      for (let l = 0; l < lanes; l++) regs[l]![d] = [C[cIdx[l * 4]!]!, C[cIdx[l * 4 + 1]!]!, C[cIdx[l * 4 + 2]!]!, C[cIdx[l * 4 + 3]!]!];
    },
  };
}

/**
 * `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16` from LDS: lane `8j + i` gives the 16-byte row
 * i of matrix j; register j of lane l is `M_j[l/4][2(l%4) + h]` (trans: `M_j[2(l%4) + h][l/4]`).
 */
export function ldmatrixCollective(name: string, count: number, trans: boolean, p: number, d: number, m: Machine, asStruct: boolean): Collective {
  return {
    name,
    run(regs) {
      const rows: number[] = [];
      for (let j = 0; j < count; j++) {
        for (let i = 0; i < 8; i++) {
          const lane = 8 * j + i;
          const addr = regs[lane]![p] as number;
          if (addr % 16 !== 0) throw new InterpretError(`${name}: lane ${lane} row address ${addr} is not 16-byte aligned`);
          m.ldsAt(addr, 16, false, regs[lane]![S_THREAD] as number);
          rows.push(addr);
        }
      }
      const dv = m.lds.view;
      for (let l = 0; l < 32; l++) {
        const out: number[] = [];
        for (let j = 0; j < count; j++) {
          let word: number;
          if (!trans) word = dv.getUint32(rows[8 * j + (l >> 2)]! + 4 * (l & 3), true);
          else {
            const lo = dv.getUint16(rows[8 * j + 2 * (l & 3)]! + 2 * (l >> 2), true);
            const hi = dv.getUint16(rows[8 * j + 2 * (l & 3) + 1]! + 2 * (l >> 2), true);
            word = (lo | (hi << 16)) >>> 0;
          }
          out.push(word);
        }
        regs[l]![d] = asStruct ? out : out[0];
      }
    },
  };
}

/** `llvm.nvvm.shfl.sync.{idx,up,down,bfly}.{i32,f32}(mask, value, b, c)` with the PTX lane rules. */
export function shuffleCollective(name: string, mode: 'idx' | 'up' | 'down' | 'bfly', args: readonly number[], d: number): Collective {
  const [maskS, valS, bS, cS] = args as [number, number, number, number];
  return {
    name,
    run(regs) {
      const vals = regs.map((r) => r[valS]);
      for (let l = 0; l < regs.length; l++) {
        const r = regs[l]!;
        if (r[maskS] !== 0xffffffff) throw new InterpretError(`${name}: only the full-warp member mask 0xffffffff is modeled, got 0x${(r[maskS] as number).toString(16)}`);
        const b = (r[bS] as number) & 0x1f;
        const c = r[cS] as number;
        const segmask = (c >>> 8) & 0x1f;
        const maxLane = (l & segmask) | (c & 0x1f & ~segmask);
        const minLane = l & segmask;
        let j: number;
        let ok: boolean;
        switch (mode) {
          case 'up': j = l - b; ok = j >= maxLane; break;
          case 'down': j = l + b; ok = j <= maxLane; break;
          case 'bfly': j = l ^ b; ok = j <= maxLane; break;
          case 'idx': j = minLane | (b & ~segmask); ok = j <= maxLane; break;
        }
        r[d] = vals[ok ? j : l];
      }
    },
  };
}

/** `llvm.amdgcn.readfirstlane`: every lane gets lane 0's value (all lanes are active here). */
export function readFirstLaneCollective(name: string, v: number, d: number): Collective {
  return {
    name,
    run(regs) {
      const x = regs[0]![v];
      for (const r of regs) r[d] = x;
    },
  };
}
