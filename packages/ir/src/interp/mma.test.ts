/**
 * Matrix atoms through the interpreter, checked against a plain matmul. The kernels here gather
 * their fragments with lane layouts written out by hand (MFMA: as AMD's Matrix Instruction
 * Calculator prints them, see test-data/mfma-layouts; mma.sync: the PTX ISA's m16n8k16 fragment
 * figures), never with the atoms' layout code, so a wrong layout in either the targets or the
 * interpreter makes these fail.
 */
import { describe, expect, it } from 'vitest';
import type { Value } from '../ir.js';
import { getTarget } from '../targets/index.js';
import type { Target, TargetName } from '../targets/target.js';
import { array, f32, half, bfloat, i16, i32, ptr, struct, vec } from '../types.js';
import type { Type } from '../types.js';
import { interpret } from './index.js';
import { bfloatToBits, halfToBits } from './numeric.js';

type Layout = (lane: number, e: number) => readonly [number, number];

// ---- AMD MFMA (wave64): lanes in groups of `mn`; `kpl` consecutive k per lane.
const amdA = (mn: number, kpl: number): Layout => (l, e) => [l % mn, kpl * Math.floor(l / mn) + e];
const amdB = (mn: number, kpl: number): Layout => (l, e) => [kpl * Math.floor(l / mn) + e, l % mn];
const amdD16: Layout = (l, r) => [4 * (l >> 4) + r, l % 16];
const amdD32: Layout = (l, r) => [8 * (r >> 2) + 4 * (l >> 5) + (r & 3), l % 32];
// ---- NVIDIA mma.sync m16n8k16 (PTX ISA): g = lane>>2, t = lane&3; element e = register q = e>>1, half h = e&1.
const nvA: Layout = (l, e) => [(l >> 2) + 8 * ((e >> 1) & 1), 2 * (l & 3) + (e & 1) + 8 * (e >> 2)];
const nvB: Layout = (l, e) => [2 * (l & 3) + (e & 1) + 8 * (e >> 1), l >> 2];
const nvD: Layout = (l, i) => [(l >> 2) + 8 * (i >> 1), 2 * (l & 3) + (i & 1)];

interface Case {
  readonly target: TargetName;
  readonly intrinsic: string;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: 'f16' | 'bf16';
  readonly ka: number;
  readonly kb: number;
  readonly kc: number;
  readonly a: Layout;
  readonly b: Layout;
  readonly d: Layout;
}

const amd = (target: TargetName, mn: 16 | 32, k: number, dtype: 'f16' | 'bf16', intrinsic: string): Case => {
  const kpl = k / (64 / mn);
  return { target, intrinsic, m: mn, n: mn, k, dtype, ka: kpl, kb: kpl, kc: (mn * mn) / 64, a: amdA(mn, kpl), b: amdB(mn, kpl), d: mn === 16 ? amdD16 : amdD32 };
};
const nv = (dtype: 'f16' | 'bf16'): Case => ({
  target: 'sm_90', intrinsic: dtype === 'bf16' ? 'llvm.nvvm.mma.m16n8k16.row.col.bf16' : 'llvm.nvvm.mma.m16n8k16.row.col.f32.f32',
  m: 16, n: 8, k: 16, dtype, ka: 8, kb: 4, kc: 4, a: nvA, b: nvB, d: nvD,
});

const CASES: readonly Case[] = [
  amd('gfx950', 32, 16, 'bf16', 'llvm.amdgcn.mfma.f32.32x32x16.bf16'),
  amd('gfx950', 32, 16, 'f16', 'llvm.amdgcn.mfma.f32.32x32x16.f16'),
  amd('gfx950', 16, 32, 'bf16', 'llvm.amdgcn.mfma.f32.16x16x32.bf16'),
  amd('gfx950', 16, 32, 'f16', 'llvm.amdgcn.mfma.f32.16x16x32.f16'),
  amd('gfx942', 32, 8, 'bf16', 'llvm.amdgcn.mfma.f32.32x32x8bf16.1k'),
  amd('gfx942', 32, 8, 'f16', 'llvm.amdgcn.mfma.f32.32x32x8f16'),
  amd('gfx942', 16, 16, 'bf16', 'llvm.amdgcn.mfma.f32.16x16x16bf16.1k'),
  amd('gfx942', 16, 16, 'f16', 'llvm.amdgcn.mfma.f32.16x16x16f16'),
  nv('bf16'),
  nv('f16'),
];

/** Per-lane row-major indices of a layout, the table the kernel reads. */
function table(lanes: number, count: number, cols: number, f: Layout): number[] {
  const out: number[] = [];
  for (let l = 0; l < lanes; l++) for (let e = 0; e < count; e++) {
    const [r, c] = f(l, e);
    out.push(r * cols + c);
  }
  return out;
}

/**
 * One wave: lane l loads A[tab_a[l][e]], B[tab_b[l][e]], C[tab_c[l][e]], calls the intrinsic
 * directly, stores D[tab_c[l][r]]. Element bits travel as i16 and are bitcast to the operand type.
 */
function gatherKernel(t: Target, c: Case) {
  const lanes = t.waveSize;
  const m = t.createModule();
  const b = t.kernel(m, 'mma', ['a', 'b', 'c', 'd', 'tab'].map((name) => ({ name, type: ptr(1) })), {
    workgroupSize: lanes, ids: { workitem: ['x'], workgroup: [] },
  });
  const lane = t.workitemId(b, 'x');
  const tabs = { a: 0, b: lanes * c.ka, c: lanes * (c.ka + c.kb) };
  const load = (p: string, type: Type, idx: Value) => b.load(type, b.gep(type, b.arg(p), [idx]));
  const tabAt = (base: number, count: number, e: number) => load('tab', i32, b.add(b.add(b.mul(lane, count), base), e));
  const et = c.dtype === 'bf16' ? bfloat : half;
  const bits = (p: string, base: number, count: number) =>
    Array.from({ length: count }, (_, e) => load(p, i16, tabAt(base, count, e)));
  const aBits = bits('a', tabs.a, c.ka);
  const bBits = bits('b', tabs.b, c.kb);
  const cVals = Array.from({ length: c.kc }, (_, e) => load('c', f32, tabAt(tabs.c, c.kc, e)));
  let dVals: Value[];
  if (t.vendor === 'amd') {
    const oneK = c.intrinsic.endsWith('.1k');
    const operand = (xs: Value[]) => (oneK ? b.vector(xs) : b.bitcast(b.vector(xs), vec(xs.length, et)));
    const d = b.intrinsic(c.intrinsic, vec(c.kc, f32), [operand(aBits), operand(bBits), b.vector(cVals), 0, 0, 0]);
    dVals = b.elements(d);
  } else {
    // Registers: element 2q in bits 15:0, 2q+1 in bits 31:16 (i32 for bf16, <2 x half> for f16).
    const regs = (xs: Value[]) => Array.from({ length: xs.length / 2 }, (_, q) => {
      const word = b.or(b.zext(xs[2 * q]!, i32), b.shl(b.zext(xs[2 * q + 1]!, i32), 16));
      return c.dtype === 'bf16' ? word : b.bitcast(word, vec(2, half));
    });
    const regT = c.dtype === 'bf16' ? i32 : vec(2, half);
    const decl = m.declare(c.intrinsic, struct([f32, f32, f32, f32]), [...Array(6).fill(regT), f32, f32, f32, f32]);
    const d = b.call(decl, [...regs(aBits), ...regs(bBits), ...cVals]);
    dVals = [0, 1, 2, 3].map((q) => b.extractValue(d, [q]));
  }
  dVals.forEach((v, e) => b.store(v, b.gep(f32, b.arg('d'), [tabAt(tabs.c, c.kc, e)])));
  b.ret();
  return m;
}

function run(c: Case, layouts: { a: Layout; b: Layout; d: Layout }, seed: number) {
  const t = getTarget(c.target);
  const lanes = t.waveSize;
  const enc = c.dtype === 'bf16' ? bfloatToBits : halfToBits;
  // Small integers: every product and sum is exact, so the check is equality.
  const av = Array.from({ length: c.m * c.k }, (_, i) => ((i * 7 + seed) % 9) - 4);
  const bv = Array.from({ length: c.k * c.n }, (_, i) => ((i * 5 + 3 * seed) % 7) - 3);
  const cv = Array.from({ length: c.m * c.n }, (_, i) => (i % 11) - 5);
  const tab = Int32Array.from([
    ...table(lanes, c.ka, c.k, layouts.a), ...table(lanes, c.kb, c.n, layouts.b), ...table(lanes, c.kc, c.n, layouts.d),
  ]);
  const d = new Float32Array(c.m * c.n).fill(NaN);
  interpret(gatherKernel(t, c), 'mma', {
    target: t, grid: [1, 1, 1], block: [lanes, 1, 1],
    args: [Uint16Array.from(av, enc), Uint16Array.from(bv, enc), Float32Array.from(cv), d, tab],
  });
  const want: number[] = [];
  for (let i = 0; i < c.m; i++) for (let j = 0; j < c.n; j++) {
    let s = cv[i * c.n + j]!;
    for (let q = 0; q < c.k; q++) s += av[i * c.k + q]! * bv[q * c.n + j]!;
    want.push(s);
  }
  return { got: Array.from(d), want };
}

describe('MMA atoms against a plain matmul (layouts written out by hand, not from the atoms)', () => {
  for (const c of CASES) {
    it(`${c.target} ${c.intrinsic}: D = A·B + C`, () => {
      const { got, want } = run(c, c, 1);
      expect(got).toEqual(want);
    });
  }

  it('a kernel with a wrong lane mapping gets wrong numbers (A rows of the two lane halves swapped)', () => {
    const c = CASES[0]!;
    const wrongA: Layout = (l, e) => c.a(l ^ 32, e);
    const { got, want } = run(c, { a: wrongA, b: c.b, d: c.d }, 2);
    expect(got.filter((x, i) => x !== want[i]).length).toBeGreaterThan(c.m * c.n / 2);
  });

  it('a kernel swapping the two 16-bit halves of the B registers gets wrong numbers (sm_90)', () => {
    const c = CASES[8]!;
    const swappedHalves: Layout = (l, e) => nvB(l, e ^ 1);
    const { got, want } = run(c, { a: c.a, b: swappedHalves, d: c.d }, 3);
    expect(got.filter((x, i) => x !== want[i]).length).toBeGreaterThan(c.m * c.n / 2);
  });

  it('an MFMA from another target is refused by name', () => {
    const c = { ...CASES[0]!, target: 'gfx942' as const };
    expect(() => run(c, c, 1)).toThrow(/MFMA @llvm\.amdgcn\.mfma\.f32\.32x32x16\.bf16 is not an atom of gfx942/);
  });

  it('non-zero cbsz/abid/blgp are refused', () => {
    const t = getTarget('gfx950');
    const m = t.createModule();
    const b = t.kernel(m, 'k', [], { workgroupSize: 64, ids: { workitem: [], workgroup: [] } });
    const z = b.bitcast(b.vector(Array(8).fill(0).map(() => b.trunc(b.i32(0), i16))), vec(8, bfloat));
    b.intrinsic('llvm.amdgcn.mfma.f32.16x16x32.bf16', vec(4, f32), [z, z, b.vector([0, 0, 0, 0].map(() => b.sitofp(b.i32(0), f32))), 1, 0, 0]);
    b.ret();
    expect(() => interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [64, 1, 1], args: [] })).toThrow(/cbsz\/abid\/blgp must be 0/);
  });

  it('an MFMA in a wave with fewer than 64 threads is an error, not a guess', () => {
    const c = CASES[3]!;
    const t = getTarget(c.target);
    const m = gatherKernel(t, c);
    const z = new Uint16Array(1024);
    expect(() => interpret(m, 'mma', { target: t, grid: [1, 1, 1], block: [32, 1, 1], args: [z, z, new Float32Array(256), new Float32Array(256), new Int32Array(4096)] }))
      .toThrow(/needs all 64 lanes of a wave; wave 0 of this workgroup has only 32 threads/);
  });
});

describe('sm_90 shared-memory pipeline: cp.async + ldmatrix + mma.sync (the PTX ldmatrix-to-mma recipe)', () => {
  it('A 16x16 row-major and Bt 8x16 staged by cp.async (zero-filled past the buffer), fragments by ldmatrix x4 / x2', () => {
    const t = getTarget('sm_90');
    const copyTo = t.asyncCopy!;
    const m = t.createModule();
    const sa = m.addGlobal({ name: 'sa', valueType: array(256, bfloat), addrspace: 3, align: 16 });
    const sb = m.addGlobal({ name: 'sb', valueType: array(128, bfloat), addrspace: 3, align: 16 });
    const b = t.kernel(m, 'k', [...['a', 'bt', 'd'].map((name) => ({ name, type: ptr(1) as Type })), { name: 'a_bytes', type: i32 }], { workgroupSize: 32 });
    const l = t.workitemId(b, 'x');
    const aBuf = t.globalBuffer(b, b.arg('a'), b.arg('a_bytes'));
    const bBuf = t.globalBuffer(b, b.arg('bt'), b.i32(256));
    copyTo.copy(b, aBuf, b.mul(l, 16), b.gep(bfloat, sa, [b.mul(l, 8)]));
    b.ifThen(b.icmp('ult', l, 16), () => copyTo.copy(b, bBuf, b.mul(l, 16), b.gep(bfloat, sb, [b.mul(l, 8)])));
    copyTo.commit(b);
    copyTo.wait(b, 0);
    t.barrier(b);
    // A: &A[(l%8) + 8*((l/8)&1)][8*(l/16)];  Bt: &Bt[l%8][8*((l/8)&1)] (lanes 16..31 repeat rows: x2 ignores them).
    const aRow = b.add(b.and(l, 7), b.mul(b.and(b.lshr(l, 3), 1), 8));
    const aAddr = b.gep(bfloat, sa, [b.add(b.mul(aRow, 16), b.mul(b.lshr(l, 4), 8))]);
    const bAddr = b.gep(bfloat, sb, [b.add(b.mul(b.and(l, 7), 16), b.mul(b.and(b.lshr(l, 3), 1), 8))]);
    const aRegs = t.matrixLoad!(b, aAddr, 4);
    const bRegs = t.matrixLoad!(b, bAddr, 2);
    const decl = m.declare('llvm.nvvm.mma.m16n8k16.row.col.bf16', struct([f32, f32, f32, f32]), [...Array(6).fill(i32), f32, f32, f32, f32]);
    const zero = b.sitofp(b.i32(0), f32);
    const d = b.call(decl, [...aRegs, ...bRegs, zero, zero, zero, zero]);
    for (let i = 0; i < 4; i++) {
      const [row, col] = [b.add(b.lshr(l, 2), 8 * (i >> 1)), b.add(b.mul(b.and(l, 3), 2), i & 1)];
      b.store(b.extractValue(d, [i]), b.gep(f32, b.arg('d'), [b.add(b.mul(row, 8), col)]));
    }
    b.ret();

    const av = Array.from({ length: 256 }, (_, i) => ((i * 5 + 1) % 9) - 4);
    const bv = Array.from({ length: 128 }, (_, i) => ((i * 3 + 2) % 7) - 3); // B[k][n]
    const bt = new Uint16Array(128);
    for (let k = 0; k < 16; k++) for (let n = 0; n < 8; n++) bt[n * 16 + k] = bfloatToBits(bv[k * 8 + n]!);
    const out = new Float32Array(128).fill(NaN);
    // a_bytes = 496: the last 16-byte chunk of A (row 15, k 8..15) is past the buffer and arrives as zeros.
    interpret(m, 'k', { target: t, grid: [1, 1, 1], block: [32, 1, 1], args: [Uint16Array.from(av, bfloatToBits), bt, out, 496] });
    const A = (i: number, k: number) => (i * 16 + k >= 248 ? 0 : av[i * 16 + k]!);
    const want: number[] = [];
    for (let i = 0; i < 16; i++) for (let n = 0; n < 8; n++) {
      let s = 0;
      for (let k = 0; k < 16; k++) s += A(i, k) * bv[k * 8 + n]!;
      want.push(s);
    }
    expect(Array.from(out)).toEqual(want);
  });
});
