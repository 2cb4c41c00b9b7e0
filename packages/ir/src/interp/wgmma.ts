/**
 * sm_90a warpgroup MMA: the exact inline asm `wgmmaAsmText(n, dtype)` that targets/wgmma.ts emits
 * runs as a collective of the 128 threads of a warpgroup, reading A (64×16) and B (n×16, K-major)
 * from shared memory through their descriptors (no swizzle, or 128-byte swizzle):
 * D[m][j] = Σ_k A[m][k]·B[j][k] (+ D when scale-d is non-zero).
 *
 * Shared addresses: the descriptor's start is the interpreter's LDS offset, and the 128B swizzle
 * XORs bits 7..9 of that offset into bits 4..6. On the H200 the XOR uses the absolute shared
 * address; the two agree because LDS offset 0 stands for a 1 KiB-aligned shared address and the
 * LDS layout keeps every global's alignment, so a buffer declared `align 1024` (or aligned at run
 * time from its ptrtoint, which also gives the LDS offset here) has the same bits 7..9 in both. The wgmma fence / commit / wait intrinsics feed the hazard
 * bookkeeping of wgmma-state.ts; the proxy fence is a no-op (memory has one proxy here).
 */
import type { CallInst, InlineAsm } from '../ir.js';
import type { MmaDtype } from '../targets/target.js';
import { isWgmmaN, wgmmaAccAt, wgmmaAsmText, wgmmaConstraints } from '../targets/wgmma.js';
import { typeToString } from '../types.js';
import type { Collective } from './collectives.js';
import { InterpretError } from './errors.js';
import type { CallContext, Lowered } from './lowering.js';
import { S_THREAD } from './machine.js';
import type { Machine } from './machine.js';
import { HALF_VALUES, bfloatFromBits } from './numeric.js';
import { CORE_BYTES, SWIZZLE_CHUNK, WARPGROUP } from './wgmma-state.js';
import type { WgmmaState } from './wgmma-state.js';

let bf16Values: Float64Array | undefined;
/** Value of every bfloat bit pattern, indexed by the pattern. */
function bfloatValues(): Float64Array {
  if (!bf16Values) {
    bf16Values = new Float64Array(65536);
    for (let b = 0; b < 65536; b++) bf16Values[b] = bfloatFromBits(b);
  }
  return bf16Values;
}

/** `{ n, dtype }` when `asm` is exactly the wgmma `mma()` emits (text and constraints), else undefined. */
export function parseWgmmaAsm(asm: InlineAsm): { n: number; dtype: MmaDtype } | undefined {
  const x = /wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(bf16|f16)\./.exec(asm.asm);
  if (!x) return undefined;
  const n = Number(x[1]);
  const dtype = x[2] as MmaDtype;
  if (!isWgmmaN(n) || asm.asm !== wgmmaAsmText(n, dtype) || asm.constraints !== wgmmaConstraints(n)) return undefined;
  return { n, dtype };
}

/** A decoded shared-memory matrix descriptor (bytes); `swizzled`: layout type 1 (128B swizzle). */
interface Descriptor {
  readonly start: number;
  readonly lbo: number;
  readonly sbo: number;
  readonly swizzled: boolean;
}

const FIELDS = 0x3fff;
const hex = (v: unknown): string => `0x${BigInt.asUintN(64, BigInt(v as number | bigint)).toString(16)}`;
const LAYOUTS = ['no swizzle', '128B swizzle', '64B swizzle', '32B swizzle'];

/** Start (bits 0..13), LBO (16..29), SBO (32..45), all in 16-byte units, layout type (62..63: 0 or 1); any other bit set is refused. */
function decodeDescriptor(v: unknown, what: string): Descriptor {
  const u = BigInt.asUintN(64, BigInt(v as number | bigint));
  const layout = Number(u >> 62n);
  const rest = u & ((1n << 62n) - 1n);
  // Every field fits below 2^46, so the rest of a valid descriptor is a non-negative safe number.
  if (layout <= 1 && rest < 2n ** 46n) {
    const r = Number(rest);
    const lo = r % 4294967296;
    const hi = (r - lo) / 4294967296;
    if ((lo & 0xc000c000) === 0 && (hi & ~FIELDS) === 0) return { start: (lo & FIELDS) * 16, lbo: ((lo >>> 16) & FIELDS) * 16, sbo: hi * 16, swizzled: layout === 1 };
  }
  const why = layout > 1 ? `layout type ${layout} (${LAYOUTS[layout]}; only 0, no swizzle, and 1, 128B swizzle, are modeled)` : 'bits outside the start (0..13), LBO (16..29), SBO (32..45) and layout type (62..63) fields (base offset is not modeled)';
  throw new InterpretError(`wgmma ${what} descriptor ${hex(v)} has ${why}`);
}

/**
 * One `wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype}`: slots `args` = [A desc,
 * B desc, scale-d, acc 0..n/2-1]; writes each thread's n/2 results (a struct) to `d`.
 */
function wgmmaCollective(n: number, dtype: MmaDtype, args: readonly number[], d: number, m: Machine, site: () => string): Collective {
  const q = n / 2;
  const [sa, sb, ss] = args as [number, number, number];
  const acc = Int32Array.from(args.slice(3));
  const name = `wgmma m64n${n}k16 ${dtype}`;
  // Row-major index into the 64×n D of accumulator i of thread t: accIdx[t * q + i].
  const accIdx = new Int32Array(WARPGROUP * q);
  for (let t = 0; t < WARPGROUP; t++) for (let i = 0; i < q; i++) {
    const { row, col } = wgmmaAccAt(t, i, n);
    accIdx[t * q + i] = row * n + col;
  }
  const values = dtype === 'bf16' ? bfloatValues() : HALF_VALUES;
  // Scratch reused by every execution (collectives never run re-entrantly).
  const A = new Float64Array(64 * 16);
  const B = new Float64Array(n * 16);
  const D = new Float64Array(64 * n);
  let u16: Uint16Array | undefined;

  /**
   * 128B swizzle, K-major: row r's 32 bytes of this k16 step start at logical byte
   * start + (r % 8)·128 + ⌊r / 8⌋·SBO (LBO unused); each 16-byte chunk at logical byte x is read at
   * x ^ (((x >> 7) & 7) << 4). `chunks` gets every chunk's offset (bounds and races checked per chunk).
   */
  const loadSwizzled = (desc: Descriptor, rows: number, dst: Float64Array, chunks: Int32Array, at: number, which: string, t0: number, who: string, words: Uint16Array): void => {
    const lds = m.lds;
    const where = `(start ${desc.start}, SBO ${desc.sbo}, 128B swizzle)`;
    if (desc.sbo % 128 !== 0) throw new InterpretError(`${name}: ${which} descriptor ${where}: a 128B-swizzled SBO must be a multiple of 128 (rows are whole 128-byte swizzle rows)`);
    // The 32 bytes of a k16 step must stay inside their 128-byte row; past it they would be the next row's.
    if (desc.start % 128 > 96) throw new InterpretError(`${name}: ${which} descriptor ${where}: the k16 step's 32 bytes at row offset ${desc.start % 128} cross the end of the 128-byte swizzled row`);
    for (let r = 0; r < rows; r++) {
      const row = desc.start + (r & 7) * 128 + (r >> 3) * desc.sbo;
      for (let c = 0; c < 2; c++) {
        const x = row + 16 * c;
        const chunk = x ^ ((x >> 3) & 0x70);
        if (chunk + SWIZZLE_CHUNK > lds.size) {
          throw new InterpretError(`${name}: ${which} row ${r}, k ${8 * c}..${8 * c + 7} at shared bytes ${chunk}..${chunk + SWIZZLE_CHUNK - 1} (0x${chunk.toString(16)}) is outside the ${lds.size} bytes of shared memory ${where}`);
        }
        lds.checkGroupRead(chunk, SWIZZLE_CHUNK, t0, t0 + WARPGROUP, who);
        chunks[at++] = chunk;
        const w = chunk >> 1;
        const o = r * 16 + 8 * c;
        for (let e = 0; e < 8; e++) dst[o + e] = values[words[w + e]!]!;
      }
    }
  };

  /** Decodes `rows`×16 elements at `desc` into `dst` (row-major, 16 per row), checking bounds and races core by core. */
  const load = (desc: Descriptor, rows: number, dst: Float64Array, cores: Int32Array, at: number, which: string, t0: number, who: string): void => {
    const lds = m.lds;
    if (!u16 || u16.buffer !== lds.view.buffer) u16 = new Uint16Array(lds.view.buffer, 0, lds.size >> 1);
    const words = u16;
    if (desc.swizzled) {
      loadSwizzled(desc, rows, dst, cores, at, which, t0, who, words);
      return;
    }
    for (let rg = 0; rg < rows / 8; rg++) {
      for (let kg = 0; kg < 2; kg++) {
        const core = desc.start + rg * desc.sbo + kg * desc.lbo;
        if (core + CORE_BYTES > lds.size) {
          throw new InterpretError(`${name}: ${which} core matrix (rows ${8 * rg}..${8 * rg + 7}, k ${8 * kg}..${8 * kg + 7}) at shared bytes ${core}..${core + CORE_BYTES - 1} (0x${core.toString(16)}) is outside the ${lds.size} bytes of shared memory (start ${desc.start}, LBO ${desc.lbo}, SBO ${desc.sbo})`);
        }
        lds.checkGroupRead(core, CORE_BYTES, t0, t0 + WARPGROUP, who);
        cores[at++] = core;
        const w0 = core >> 1;
        for (let r = 0; r < 8; r++) {
          const o = (8 * rg + r) * 16 + 8 * kg;
          const w = w0 + 8 * r;
          for (let e = 0; e < 8; e++) dst[o + e] = values[words[w + e]!]!;
        }
      }
    }
  };

  return {
    name,
    warpgroup: true,
    run(regs) {
      const r0 = regs[0]!;
      const t0 = r0[S_THREAD] as number;
      const da = r0[sa];
      const db = r0[sb];
      const sc = r0[ss];
      for (let t = 1; t < WARPGROUP; t++) {
        const r = regs[t]!;
        if (r[sa] !== da || r[sb] !== db || r[ss] !== sc) {
          const [what, x, y] = r[sa] !== da ? ['A descriptor', hex(da), hex(r[sa])] : r[sb] !== db ? ['B descriptor', hex(db), hex(r[sb])] : ['scale-d', String(sc), String(r[ss])];
          throw new InterpretError(`${name}: non-uniform ${what} across the warpgroup: thread ${t0} passes ${x}, thread ${r[S_THREAD]} passes ${y} (every thread must pass the same)`);
        }
      }
      const a = decodeDescriptor(da, 'A');
      const b = decodeDescriptor(db, 'B');
      const wg = t0 / WARPGROUP;
      const who = `${name} of warpgroup ${wg}`;
      const state = m.lds.wgmma as WgmmaState;
      const what = () => `${who} (issued at ${site()})`;
      state.checkIssue(wg, what);
      // What the hazard tracker keeps: core matrices (128 bytes) of unswizzled operands, 16-byte chunks of swizzled ones.
      const aUnits = a.swizzled ? 128 : 16;
      const aRead = new Int32Array(aUnits);
      const bRead = new Int32Array(b.swizzled ? 2 * n : n / 4);
      load(a, 64, A, aRead, 0, 'A', t0, who);
      load(b, n, B, bRead, 0, 'B', t0, who);
      state.issue(wg, [[aRead, a.swizzled ? SWIZZLE_CHUNK : CORE_BYTES], [bRead, b.swizzled ? SWIZZLE_CHUNK : CORE_BYTES]], what);
      // D = A·Bᵀ, products summed in double from +0 in k order (as matmulAcc), rounded once below.
      for (let i = 0; i < 64; i++) {
        const o = i * 16;
        const a0 = A[o]!, a1 = A[o + 1]!, a2 = A[o + 2]!, a3 = A[o + 3]!, a4 = A[o + 4]!, a5 = A[o + 5]!, a6 = A[o + 6]!, a7 = A[o + 7]!;
        const a8 = A[o + 8]!, a9 = A[o + 9]!, a10 = A[o + 10]!, a11 = A[o + 11]!, a12 = A[o + 12]!, a13 = A[o + 13]!, a14 = A[o + 14]!, a15 = A[o + 15]!;
        const row = i * n;
        for (let j = 0; j < n; j++) {
          const p = j * 16;
          D[row + j] = 0 + a0 * B[p]! + a1 * B[p + 1]! + a2 * B[p + 2]! + a3 * B[p + 3]! + a4 * B[p + 4]! + a5 * B[p + 5]! + a6 * B[p + 6]! + a7 * B[p + 7]!
            + a8 * B[p + 8]! + a9 * B[p + 9]! + a10 * B[p + 10]! + a11 * B[p + 11]! + a12 * B[p + 12]! + a13 * B[p + 13]! + a14 * B[p + 14]! + a15 * B[p + 15]!;
        }
      }
      const scale = sc !== 0;
      for (let t = 0; t < WARPGROUP; t++) {
        const r = regs[t]!;
        const out = new Array<number>(q);
        const base = t * q;
        if (scale) for (let i = 0; i < q; i++) out[i] = Math.fround(r[acc[i]!] + D[accIdx[base + i]!]!);
        else for (let i = 0; i < q; i++) out[i] = Math.fround(D[accIdx[base + i]!]!);
        r[d] = out;
      }
    },
  };
}

/** The wgmma inline asm as a warpgroup collective, or undefined when `inst` is some other asm. */
export function lowerWgmmaAsm(inst: CallInst, asm: InlineAsm, ctx: CallContext): Lowered | undefined {
  const shape = parseWgmmaAsm(asm);
  if (!shape) return undefined;
  const { n, dtype } = shape;
  const q = n / 2;
  if (!ctx.target.warpgroupMma) throw new InterpretError(`wgmma m64n${n}k16 (sm_90a warpgroup MMA) in a kernel run for ${ctx.target.name}`);
  const types = inst.args.map((a) => typeToString(a.type));
  const want = ['i64', 'i64', 'i32', ...Array<string>(q).fill('float')];
  if (types.join(',') !== want.join(',')) throw new InterpretError(`wgmma m64n${n}k16 takes (i64 A desc, i64 B desc, i32 scale-d, ${q} floats), got (${types.join(', ')})`);
  const rt = inst.type;
  if (rt.kind !== 'struct' || rt.fields.length !== q || rt.fields.some((f) => f.kind !== 'float' || f.name !== 'float')) {
    throw new InterpretError(`wgmma m64n${n}k16 returns a struct of ${q} floats, got ${typeToString(rt)}`);
  }
  return { kind: 'collective', collective: wgmmaCollective(n, dtype, inst.args.map((v) => ctx.slot(v)), ctx.dest, ctx.machine, ctx.site) };
}

/** The wgmma fence / commit / wait intrinsics and the async-proxy fence, or undefined for other names. */
export function lowerWgmmaIntrinsic(inst: CallInst, name: string, ctx: CallContext): Lowered | undefined {
  const m = ctx.machine;
  switch (name) {
    case 'llvm.nvvm.wgmma.fence.sync.aligned':
      return { kind: 'op', op: (r) => m.lds.wgmma!.fence(r[S_THREAD]) };
    case 'llvm.nvvm.wgmma.commit_group.sync.aligned':
      return { kind: 'op', op: (r) => m.lds.wgmma!.commit(r[S_THREAD]) };
    case 'llvm.nvvm.wgmma.wait_group.sync.aligned': {
      const v = inst.args[0];
      if (!v || v.kind !== 'const.int' || v.value < 0n) throw new InterpretError(`${name} takes one constant non-negative i64 (the groups left pending)`);
      const pending = Number(v.value);
      return { kind: 'op', op: (r) => m.lds.wgmma!.wait(r[S_THREAD], pending) };
    }
    case 'llvm.nvvm.fence.proxy.async.shared_cta':
      return { kind: 'none' };
    default:
      return undefined;
  }
}
