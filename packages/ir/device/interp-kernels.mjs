// Small sm_90 kernels run both natively and through the @rocke/ir interpreter
// (interp-vs-native.mjs). Built from the package's public API only; `ir` is the imported package
// namespace (dist), so the generator here and the device script build byte-identical modules.
import { buildConvKernel, convLaunch } from '../bench/conv-kernel.mjs';

/** Deterministic inputs: a 32-bit xorshift stream. */
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const WG = 256;

/** y = a*x + 0.25, half(a*x), bfloat(x), (bits(x) >> 3) ^ i over n floats, with a guarded tail. */
function elementwise(ir, t) {
  const { f32, half, bfloat, i32, ptr } = ir;
  const m = t.createModule();
  const params = ['x', 'yf', 'yh', 'yb', 'yi'].map((name) => ({ name, type: ptr(1) }));
  const b = t.kernel(m, 'ew', [...params, { name: 'a', type: f32 }, { name: 'n', type: i32 }], { workgroupSize: WG });
  const n = b.arg('n');
  const buf = (name, bytes) => t.globalBuffer(b, b.arg(name), b.mul(n, bytes));
  const x = buf('x', 4);
  const gid = b.add(b.mul(t.workgroupId(b, 'x'), WG), t.workitemId(b, 'x'));
  const v = t.globalLoad(b, x, b.shl(gid, 2), f32);
  const ax = b.fmul(v, b.arg('a'));
  t.globalStore(b, buf('yf', 4), b.shl(gid, 2), b.fadd(ax, 0.25));
  t.globalStore(b, buf('yh', 2), b.shl(gid, 1), b.fptrunc(ax, half));
  t.globalStore(b, buf('yb', 2), b.shl(gid, 1), b.fptrunc(v, bfloat));
  t.globalStore(b, buf('yi', 4), b.shl(gid, 2), b.xor(b.ashr(b.bitcast(v, i32), 3), gid));
  b.ret();
  return m;
}

/** Each block mirrors its 256 floats through shared memory, then mixes neighbours after a barrier. */
function ldsMirror(ir, t) {
  const { array, f32, i32, ptr } = ir;
  const m = t.createModule();
  const tile = m.addGlobal({ name: 'tile', valueType: array(WG, f32), addrspace: 3, align: 16 });
  const b = t.kernel(m, 'lds_mirror', [{ name: 'x', type: ptr(1) }, { name: 'y', type: ptr(1) }, { name: 'n', type: i32 }], { workgroupSize: WG });
  const bytes = b.mul(b.arg('n'), 4);
  const x = t.globalBuffer(b, b.arg('x'), bytes);
  const y = t.globalBuffer(b, b.arg('y'), bytes);
  const tid = t.workitemId(b, 'x');
  const base = b.mul(t.workgroupId(b, 'x'), WG);
  b.store(t.globalLoad(b, x, b.shl(b.add(base, tid), 2), f32), b.gep(f32, tile, [tid]), { align: 4 });
  t.barrier(b);
  const mirrored = b.load(f32, b.gep(f32, tile, [b.sub(WG - 1, tid)]), { align: 4 });
  const next = b.load(f32, b.gep(f32, tile, [b.and(b.add(tid, 1), WG - 1)]), { align: 4 });
  t.barrier(b);
  b.store(b.fsub(mirrored, next), b.gep(f32, tile, [tid]), { align: 4 });
  t.barrier(b);
  const r = b.fadd(b.load(f32, b.gep(f32, tile, [b.xor(tid, 1)]), { align: 4 }), mirrored);
  t.globalStore(b, y, b.shl(b.add(base, tid), 2), r);
  b.ret();
  return m;
}

/** One warp: D = A·B + C for the 16x8x16 bf16 atom, fragments gathered from global through the atom's layout. */
function mma(ir, t) {
  const { f32, ptr } = ir;
  const atom = t.atom('16x8x16.bf16');
  const m = t.createModule();
  const b = t.kernel(m, 'mma', ['a', 'b', 'c', 'd'].map((name) => ({ name, type: ptr(1) })), { workgroupSize: 32 });
  const lane = t.laneId(b);
  const buf = (name, bytes) => t.globalBuffer(b, b.arg(name), b.i32(bytes));
  const [A, B, C, D] = [buf('a', 512), buf('b', 256), buf('c', 512), buf('d', 512)];
  const gather = (count, at, ld, g, type, size) =>
    b.vector(Array.from({ length: count }, (_, i) => {
      const { row, col } = at(i);
      return t.globalLoad(b, g, b.mul(b.add(b.mul(row, ld), col), size), type);
    }));
  const av = gather(8, (i) => atom.aAt(b, lane, i), 16, A, atom.aType.elem, 2);
  const bv = gather(4, (i) => atom.bAt(b, lane, i), 8, B, atom.bType.elem, 2);
  const cv = gather(4, (i) => atom.cAt(b, lane, i), 8, C, f32, 4);
  b.elements(atom.emit(b, av, bv, cv)).forEach((v, i) => {
    const { row, col } = atom.cAt(b, lane, i);
    t.globalStore(b, D, b.mul(b.add(b.mul(row, 8), col), 4), v);
  });
  b.ret();
  return m;
}

/** Stores warpgroup `group`'s m64nN f32 accumulators row-major into D (warp w of the group holds rows 64·group + 16w..). */
function storeAccumulators(b, t, D, tid, group, n, acc) {
  const t128 = b.and(tid, 127);
  const warp = b.lshr(t128, 5);
  const lane = b.and(t128, 31);
  acc.forEach((v, i) => {
    const row = b.add(b.add(b.mul(group, 64), b.mul(warp, 16)), b.add(b.lshr(lane, 2), 8 * ((i >> 1) & 1)));
    const col = b.add(b.mul(b.and(lane, 3), 2), 8 * (i >> 2) + (i & 1));
    t.globalStore(b, D, b.mul(b.add(b.mul(row, n), col), 4), v);
  });
}

/**
 * Two warpgroups: D (128×n f32) = A (128×64) · Btᵀ (Bt n×64), both row-major 16-bit. Operands go
 * to shared memory with 16-byte cp.async (one core-matrix row each) in the layouts `la` / `lb`
 * ({lbo, sbo}, see wgmma descriptors); warpgroup g multiplies rows 64g.. with four m64n{n}k16
 * wgmmas in two commit groups (wait_group 1, then 0), accumulating across both.
 */
function wgmmaGemm(ir, t, o) {
  const { array, f32, i8, ptr, zero } = ir;
  const wg = t.warpgroupMma;
  const cp = t.asyncCopy;
  const K = 64;
  const place = (l, row, k) => (row >> 3) * l.sbo + (k >> 3) * l.lbo + (row & 7) * 16 + (k & 7) * 2;
  const aBytes = place(o.a, 127, K - 1) + 2;
  const bBase = Math.ceil(aBytes / 128) * 128;
  const m = t.createModule();
  const smem = m.addGlobal({ name: 'operands', valueType: array(bBase + place(o.b, o.n - 1, K - 1) + 2, i8), addrspace: 3, align: 128 });
  const b = t.kernel(m, o.name, ['a', 'bt', 'd'].map((name) => ({ name, type: ptr(1) })), { workgroupSize: 256, ids: { workitem: ['x'], workgroup: [] } });
  const tid = t.workitemId(b, 'x');
  const buf = (name, bytes) => t.globalBuffer(b, b.arg(name), b.i32(bytes));
  const [A, Bt, D] = [buf('a', 128 * K * 2), buf('bt', o.n * K * 2), buf('d', 128 * o.n * 4)];
  // 16-byte chunk c of a row-major rows×64 operand is row c/8, k 8(c%8)..: one core-matrix row.
  const stage = (rows, g, l, base) => {
    for (let c0 = 0; c0 < rows * 8; c0 += 256) {
      const c = b.add(tid, c0);
      const row = b.lshr(c, 3);
      const kg = b.and(c, 7);
      const off = b.add(b.add(b.mul(b.lshr(row, 3), l.sbo), b.mul(kg, l.lbo)), b.add(b.mul(b.and(row, 7), 16), base));
      cp.copy(b, g, b.mul(c, 16), b.gep(i8, smem, [off]));
    }
  };
  stage(128, A, o.a, 0);
  stage(o.n, Bt, o.b, bBase);
  cp.commit(b);
  cp.wait(b, 0);
  wg.proxyFence(b);
  t.barrier(b);
  const group = b.lshr(tid, 7);
  const aDesc = wg.descriptor(b, b.gep(i8, smem, [b.mul(group, 8 * o.a.sbo)]), o.a.lbo, o.a.sbo);
  const bDesc = wg.descriptor(b, b.gep(i8, smem, [b.i32(bBase)]), o.b.lbo, o.b.sbo);
  wg.fence(b);
  let acc = Array.from({ length: o.n / 2 }, () => zero(f32));
  for (let s = 0; s < K / 16; s++) {
    const step = (l) => BigInt((2 * s * l.lbo) / 16);
    acc = wg.mma(b, { n: o.n, dtype: o.dtype, a: b.add(aDesc, step(o.a)), b: b.add(bDesc, step(o.b)), acc, accumulate: s > 0 });
    if (s % 2 === 1) wg.commit(b);
  }
  wg.wait(b, 1);
  wg.wait(b, 0);
  storeAccumulators(b, t, D, tid, group, o.n, acc);
  b.ret();
  return m;
}

/**
 * `wgmmaGemm` with both operands K-major in 128B-swizzled shared memory (one 128-byte row of 64
 * values per M / N index): row r is 128-byte row `shift + ⌊r/8⌋·pitch + r%8` of a 1 KiB-aligned
 * region, 16-byte chunk j of it copied by cp.async to `swizzle128(row offset + 16j)`. Descriptors:
 * 128B swizzle, SBO = 128·pitch, start = the group's first row (row-shifted: off the 1 KiB atom when
 * `shift` or `pitch` is not a multiple of 8), +32 bytes per k-step. Two commit groups as above.
 */
function wgmmaSwizzledGemm(ir, t, o) {
  const { array, f32, i8, ptr, zero, swizzle128 } = ir;
  const wg = t.warpgroupMma;
  const cp = t.asyncCopy;
  const K = 64;
  const lines = (l, rows) => l.shift + ((rows >> 3) - 1) * l.pitch + 8;
  const bBase = Math.ceil((lines(o.a, 128) * 128) / 1024) * 1024;
  const m = t.createModule();
  const smem = m.addGlobal({ name: 'operands', valueType: array(bBase + lines(o.b, o.n) * 128, i8), addrspace: 3, align: 1024 });
  const b = t.kernel(m, o.name, ['a', 'bt', 'd'].map((name) => ({ name, type: ptr(1) })), { workgroupSize: 256, ids: { workitem: ['x'], workgroup: [] } });
  const tid = t.workitemId(b, 'x');
  const buf = (name, bytes) => t.globalBuffer(b, b.arg(name), b.i32(bytes));
  const [A, Bt, D] = [buf('a', 128 * K * 2), buf('bt', o.n * K * 2), buf('d', 128 * o.n * 4)];
  const stage = (rows, g, l, base) => {
    for (let c0 = 0; c0 < rows * 8; c0 += 256) {
      const c = b.add(tid, c0);
      const row = b.lshr(c, 3);
      const line = b.add(b.add(b.mul(b.lshr(row, 3), l.pitch), b.and(row, 7)), l.shift + base / 128);
      const off = swizzle128(b, b.add(b.mul(line, 128), b.mul(b.and(c, 7), 16)));
      cp.copy(b, g, b.mul(c, 16), b.gep(i8, smem, [off]));
    }
  };
  stage(128, A, o.a, 0);
  stage(o.n, Bt, o.b, bBase);
  cp.commit(b);
  cp.wait(b, 0);
  wg.proxyFence(b);
  t.barrier(b);
  const group = b.lshr(tid, 7);
  const aDesc = wg.descriptor(b, b.gep(i8, smem, [b.add(b.mul(group, 8 * o.a.pitch * 128), o.a.shift * 128)]), 16, o.a.pitch * 128, { swizzle: '128B' });
  const bDesc = wg.descriptor(b, b.gep(i8, smem, [b.i32(bBase + o.b.shift * 128)]), 16, o.b.pitch * 128, { swizzle: '128B' });
  wg.fence(b);
  let acc = Array.from({ length: o.n / 2 }, () => zero(f32));
  for (let s = 0; s < K / 16; s++) {
    acc = wg.mma(b, { n: o.n, dtype: o.dtype, a: b.add(aDesc, BigInt(2 * s)), b: b.add(bDesc, BigInt(2 * s)), acc, accumulate: s > 0 });
    if (s % 2 === 1) wg.commit(b);
  }
  wg.wait(b, 1);
  wg.wait(b, 0);
  storeAccumulators(b, t, D, tid, group, o.n, acc);
  b.ret();
  return m;
}

const f32Bits = (x) => new Uint32Array(Float32Array.of(x).buffer)[0];
const bf16 = (x) => f32Bits(x) >>> 16; // exact for the small integers used below
/** Half bits of a small integer (|x| < 2048). */
const f16 = (x) => {
  if (x === 0) return 0;
  const a = Math.abs(x);
  const e = Math.floor(Math.log2(a));
  return (x < 0 ? 0x8000 : 0) | ((e + 15) << 10) | ((a / 2 ** e - 1) * 1024);
};

/** A wgmma GEMM launch: small-integer A (128×64) and Bt (n×64), D 128×n. */
function wgmmaCase(ir, t, o, seed, build = wgmmaGemm) {
  return {
    name: o.name, module: build(ir, t, o), grid: [1, 1, 1], block: [256, 1, 1], outputs: [2],
    signature: ['a', 'bt', 'd'].map((name) => ({ name, type: 'ptr' })),
    inputs() {
      const r = rng(seed);
      const bits = o.dtype === 'bf16' ? bf16 : f16;
      const int = () => bits(Math.floor(r() * 9) - 4);
      return [Uint16Array.from({ length: 128 * 64 }, int), Uint16Array.from({ length: o.n * 64 }, int), new Float32Array(128 * o.n).fill(NaN)];
    },
  };
}

/**
 * The kernels with their launches. `inputs()` returns the arguments in order: typed arrays are
 * buffers (uploaded / passed to the interpreter), numbers are scalars; `outputs` lists which
 * buffer arguments to compare.
 */
export function interpKernels(ir) {
  const t = ir.sm_90;
  const conv = { N: 1, H: 16, W: 16, C: 64, K: 64 };
  return [
    {
      name: 'ew', module: elementwise(ir, t), grid: [4, 1, 1], block: [WG, 1, 1], outputs: [1, 2, 3, 4],
      signature: [...['x', 'yf', 'yh', 'yb', 'yi'].map((name) => ({ name, type: 'ptr' })), { name: 'a', type: 'f32' }, { name: 'n', type: 'i32' }],
      inputs() {
        const n = 1000; // not a multiple of the block: the tail is guarded
        const r = rng(7);
        // Wide magnitudes: subnormal and overflowing halves, bf16 ties, negative zeros.
        const x = Float32Array.from({ length: n }, (_, i) => (i % 97 === 0 ? -0 : (r() - 0.5) * 2 ** Math.floor(r() * 48 - 30)));
        return [x, new Float32Array(n + 8), new Uint16Array(n + 8), new Uint16Array(n + 8), new Int32Array(n + 8), 1.1, n];
      },
    },
    {
      name: 'lds_mirror', module: ldsMirror(ir, t), grid: [3, 1, 1], block: [WG, 1, 1], outputs: [1],
      signature: [{ name: 'x', type: 'ptr' }, { name: 'y', type: 'ptr' }, { name: 'n', type: 'i32' }],
      inputs() {
        const r = rng(11);
        const n = 3 * WG;
        return [Float32Array.from({ length: n }, () => r() * 100 - 50), new Float32Array(n), n];
      },
    },
    {
      name: 'mma', module: mma(ir, t), grid: [1, 1, 1], block: [32, 1, 1], outputs: [3],
      signature: ['a', 'b', 'c', 'd'].map((name) => ({ name, type: 'ptr' })),
      inputs() {
        const r = rng(3);
        const int = (k) => Math.floor(r() * (2 * k + 1)) - k;
        return [
          Uint16Array.from({ length: 256 }, () => bf16(int(8))), Uint16Array.from({ length: 128 }, () => bf16(int(8))),
          Float32Array.from({ length: 128 }, () => int(100)), new Float32Array(128),
        ];
      },
    },
    {
      name: 'conv3x3', module: buildConvKernel(t, '16x8x16.bf16'), ...(() => {
        const { grid, block } = convLaunch(t, conv);
        return { grid, block };
      })(), outputs: [2],
      signature: [...['x', 'w', 'y'].map((name) => ({ name, type: 'ptr' })), ...['N', 'H', 'W', 'C', 'K'].map((name) => ({ name, type: 'i32' }))],
      inputs() {
        const r = rng(5);
        const int = () => Math.floor(r() * 5) - 2;
        return [
          Uint16Array.from({ length: conv.N * conv.H * conv.W * conv.C }, () => bf16(int())),
          Uint16Array.from({ length: conv.K * 9 * conv.C }, () => bf16(int())),
          new Float32Array(conv.N * conv.H * conv.W * conv.K), conv.N, conv.H, conv.W, conv.C, conv.K,
        ];
      },
    },
    // sm_90a wgmma, operands through cp.async: K core matrices adjacent with padded row groups / row groups adjacent.
    wgmmaCase(ir, t, { name: 'wgmma_bf16', n: 128, dtype: 'bf16', a: { lbo: 128, sbo: 8 * 128 + 16 }, b: { lbo: 128, sbo: 8 * 128 } }, 13),
    wgmmaCase(ir, t, { name: 'wgmma_f16', n: 96, dtype: 'f16', a: { lbo: 16 * 128, sbo: 128 }, b: { lbo: 12 * 128 + 32, sbo: 128 } }, 17),
    // 128B swizzle: row-shifted windows (start off the 1 KiB atom, SBO = 9 / 13 rows) against canonical operands.
    wgmmaCase(ir, t, { name: 'wgmma_swz_bf16', n: 128, dtype: 'bf16', a: { pitch: 9, shift: 3 }, b: { pitch: 8, shift: 0 } }, 19, wgmmaSwizzledGemm),
    wgmmaCase(ir, t, { name: 'wgmma_swz_f16', n: 96, dtype: 'f16', a: { pitch: 8, shift: 0 }, b: { pitch: 13, shift: 5 } }, 23, wgmmaSwizzledGemm),
  ];
}
