/**
 * Calls: the intrinsics the targets emit (ids, barriers, buffer resources and raw buffer
 * loads/stores, direct-to-LDS buffer loads and the vmcnt wait, MFMA, NVVM special registers, mma.sync, ldmatrix, cp.async, shuffles, wgmma
 * fence/commit/wait) and a few generic LLVM ones. A call becomes a lane-local closure, a barrier,
 * a wave- (or warpgroup-) collective operation, or nothing (scheduling hints). Anything else —
 * including every inline asm but the exact wgmma text of targets/wgmma.ts — is an error naming it.
 */
import type { CallInst, Instruction } from '../ir.js';
import type { Type } from '../types.js';
import { i16, i32, i8, typeToString, vec } from '../types.js';
import { ldmatrixCollective, mfmaCollective, mmaSyncCollective, readFirstLaneCollective, shuffleCollective } from './collectives.js';
import type { Collective } from './collectives.js';
import { checkCdnaBufferFlags } from './descriptor.js';
import { InterpretError } from './errors.js';
import type { CallContext, Lowered } from './lowering.js';
import { BufferResource, S_LANE, S_NTID_X, S_NWG_X, S_THREAD, S_TID_X, S_WG_X } from './machine.js';
import type { Machine, Regs } from './machine.js';
import { codecOf } from './memory.js';
import type { Codec } from './memory.js';
import { fusedMultiplyAdd, u64Number } from './numeric.js';
import { rounder } from './scalar.js';
import { lowerWgmmaAsm, lowerWgmmaIntrinsic } from './wgmma.js';

export type { CallContext, Collective, Lowered };

const axisIndex = (a: string): number => (a === 'x' ? 0 : a === 'y' ? 1 : 2);
const copy = (d: number, s: number): Lowered => ({ kind: 'op', op: (r) => { r[d] = r[s]; } });

function constArg(inst: CallInst, n: number): number {
  const v = inst.args[n];
  if (!v || v.kind !== 'const.int') throw new InterpretError(`argument ${n} of @${(inst.callee as { name: string }).name} must be a constant`);
  return Number(v.value);
}

const ZERO = new DataView(new ArrayBuffer(64));

/**
 * Raw buffer range checking on gfx942/gfx950, as LLVM documents it (`llvm/docs/AMDGPUUsage.rst`,
 * "Relaxed Buffer OOB (Out Of Bounds) Mode", llvm/llvm-project#134734): an access of more than 32
 * bits is range-checked for each 32-bit word independently, with the offset taken as unsigned and
 * saturating arithmetic. So dword `w` of an access at `voffset` is in range iff
 * `voffset + 4w + 4 <= num_records`: a dword that straddles num_records is out of range as a whole
 * (AMDGPUUsage's example: an `<8 x i8>` load at offset 6 of an 8-byte buffer loads nothing). An
 * out-of-range dword loads 0 and is not stored. AMD's gfx950 model in ROCm's rocjitsu
 * (ROCm/rocm-systems#10928) states the same per-dword rule, and that an access of 32 bits or less
 * is in range only when it ends within num_records; it also counts soffset, which is why a
 * non-zero soffset is refused at lowering. Offsets here are u32 and the sums are exact, which is
 * the saturating check.
 */
function bufferLoad(m: Machine, rs: BufferResource, vo: number, codec: Codec, thread: number): unknown {
  if (!(rs instanceof BufferResource)) throw new InterpretError('raw buffer load through a value that is not a buffer resource (make.buffer.rsrc)');
  const size = codec.size;
  const addr = rs.base + vo;
  if (vo + size <= rs.numRecords) return codec.read(m.resolve(addr, size, false, thread), m.off);
  if (size <= 4) return codec.read(ZERO, 0);
  const tmp = new DataView(new ArrayBuffer(size));
  for (let w = 0; w < size; w += 4) {
    if (vo + w + 4 <= rs.numRecords) tmp.setUint32(w, m.resolve(addr + w, 4, false, thread).getUint32(m.off, true), true);
  }
  return codec.read(tmp, 0);
}

/** Raw buffer store under the same rule: out-of-range dwords are dropped. */
function bufferStore(m: Machine, rs: BufferResource, vo: number, codec: Codec, value: unknown, thread: number): void {
  if (!(rs instanceof BufferResource)) throw new InterpretError('raw buffer store through a value that is not a buffer resource (make.buffer.rsrc)');
  const size = codec.size;
  const addr = rs.base + vo;
  if (vo + size <= rs.numRecords) {
    codec.write(m.resolve(addr, size, true, thread), m.off, value);
    return;
  }
  if (size <= 4) return;
  const tmp = new DataView(new ArrayBuffer(size));
  codec.write(tmp, 0, value);
  for (let w = 0; w < size; w += 4) {
    if (vo + w + 4 <= rs.numRecords) m.resolve(addr + w, 4, true, thread).setUint32(m.off, tmp.getUint32(w, true), true);
  }
}

/** The soffset operand (argument `n`) must be the constant 0: its part in the range check is not modeled. */
function checkNoSoffset(inst: CallInst, n: number, name: string): void {
  const v = inst.args[n];
  if (v?.kind !== 'const.int' || v.value !== 0n) {
    throw new InterpretError(`${name}: soffset (argument ${n}) must be the constant 0; gfx942/gfx950 count soffset in the range check, which the interpreter does not model`);
  }
}

function bufferCodec(t: Type, name: string): Codec {
  const c = codecOf(t);
  if (![1, 2, 4, 8, 12, 16].includes(c.size)) throw new InterpretError(`${name}: buffer access of ${typeToString(t)} (${c.size} bytes) is not modeled`);
  return c;
}

/** The integer type a direct-to-LDS load of `size` bytes moves (the bytes are copied, never interpreted). */
const DMA_TYPES: Readonly<Record<number, Type>> = { 1: i8, 2: i16, 4: i32, 12: vec(3, i32), 16: vec(4, i32) };

/**
 * `llvm.amdgcn.raw.ptr.buffer.load.lds(rsrc, lds, size, voffset, soffset, imm, aux)`, a wave
 * collective because the LDS base is one per wave (M0): lane `l` reads `size` bytes at
 * `voffset + imm` of the buffer (zero out of range, per dword as in `bufferLoad`) and writes them to
 * LDS at `lds + imm + l * size`. The whole wave must take part with the same base; the target
 * decides the sizes (12 and 16 on gfx950 only).
 */
function ldsDmaCollective(inst: CallInst, name: string, ctx: CallContext): Collective {
  const m = ctx.machine;
  const size = constArg(inst, 2);
  const sizes = ctx.target.ldsDma?.sizes ?? [];
  if (!sizes.includes(size)) throw new InterpretError(`${name}: ${ctx.target.name} loads ${sizes.join(', ') || 'no'} bytes per lane directly to LDS, not ${size}`);
  checkNoSoffset(inst, 4, name);
  const imm = constArg(inst, 5);
  constArg(inst, 6);
  const codec = codecOf(DMA_TYPES[size]!);
  const [rs, lds, vo] = [0, 1, 3].map((n) => ctx.slot(inst.args[n]!)) as [number, number, number];
  return {
    name,
    run(regs) {
      const base = regs[0]![lds] as number;
      regs.forEach((r, l) => {
        if (r[lds] !== base) throw new InterpretError(`${name}: the LDS base must be the same in every lane of the wave (M0 holds one per wave); lane 0 passes ${base}, lane ${l} ${r[lds]}`);
      });
      regs.forEach((r, l) => {
        const th = r[S_THREAD];
        const v = bufferLoad(m, r[rs], (r[vo] + imm) >>> 0, codec, th);
        codec.write(m.ldsAt(base + imm + l * size, size, true, th), m.off, v);
        m.lds.dma?.issued(th);
      });
    },
  };
}

function popcount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v; v &= v - 1) n++;
  return n;
}

/**
 * Fence scopes that order LDS for the whole workgroup: llc-22 puts `s_waitcnt lgkmcnt(0)` before
 * the `s_barrier` only for these (system is no syncscope); for `wavefront` and the `-one-as`
 * scopes it emits none (checked in sync.test.ts).
 */
const WORKGROUP_OR_WIDER: ReadonlySet<string | undefined> = new Set(['workgroup', 'agent', undefined]);

const fenceText = (i: Instruction | undefined): string =>
  !i ? 'nothing' : i.op !== 'fence' ? `a ${i.op}` : `fence${i.syncscope === undefined ? '' : ` syncscope("${i.syncscope}")`} ${i.ordering}`;

/**
 * An AMD workgroup barrier must be `fence release` / `s.barrier` / `fence acquire` at workgroup
 * scope or wider, back to back (what target.barrier() emits). A bare s_barrier does not wait for
 * the wave's outstanding LDS writes on gfx942/gfx950: without the release fence llc emits no
 * `s_waitcnt lgkmcnt(0)` before it, so reads after the barrier can miss other waves' writes.
 */
function checkBarrierFences(ctx: CallContext): void {
  const { before, after } = ctx;
  const release = before?.op === 'fence' && before.ordering !== 'acquire' && WORKGROUP_OR_WIDER.has(before.syncscope);
  const acquire = after?.op === 'fence' && after.ordering !== 'release' && WORKGROUP_OR_WIDER.has(after.syncscope);
  if (release && acquire) return;
  throw new InterpretError(
    `unfenced workgroup barrier: @llvm.amdgcn.s.barrier needs a workgroup (or wider) release fence right before it and an acquire fence right after it; `
    + `before it is ${fenceText(before)}, after it ${fenceText(after)}. Without them llc emits no s_waitcnt lgkmcnt(0) before the s_barrier, `
    + 'so LDS writes before it may still be in flight when other waves read after it (emit it with target.barrier())',
  );
}

/** Lowers one call instruction. */
export function lowerCall(inst: CallInst, ctx: CallContext): Lowered {
  const callee = inst.callee;
  // The only inline asm the targets emit is the sm_90a wgmma (LLVM 22 has no intrinsic for it); any other asm is refused by name.
  if (callee.kind === 'asm') {
    const wgmma = lowerWgmmaAsm(inst, callee, ctx);
    if (wgmma) return wgmma;
    throw new InterpretError(`inline asm "${callee.asm}" (constraints "${callee.constraints}") is not modeled by the interpreter`);
  }
  const name = callee.name;
  if (callee.blocks.length > 0) throw new InterpretError(`call of the defined function @${name}: calls are not modeled (only intrinsics)`);
  if (!name.startsWith('llvm.')) throw new InterpretError(`call of the external function @${name}: only intrinsics are modeled`);
  const vendor = ctx.target.vendor;
  if (name.startsWith('llvm.amdgcn.') && vendor !== 'amd') throw new InterpretError(`AMD intrinsic @${name} in a kernel run for ${ctx.target.name}`);
  if (name.startsWith('llvm.nvvm.') && vendor !== 'nvidia') throw new InterpretError(`NVVM intrinsic @${name} in a kernel run for ${ctx.target.name}`);
  const lowered = name.startsWith('llvm.amdgcn.') ? lowerAmd(inst, name, ctx) : name.startsWith('llvm.nvvm.') ? lowerNvvm(inst, name, ctx) : lowerGeneric(inst, name, ctx);
  if (!lowered) throw new InterpretError(`intrinsic @${name} is not modeled by the interpreter`);
  return lowered;
}

function lowerAmd(inst: CallInst, name: string, ctx: CallContext): Lowered | undefined {
  const { dest: d, machine: m } = ctx;
  const s = (n: number) => ctx.slot(inst.args[n]!);
  let x: RegExpExecArray | null;
  if ((x = /^llvm\.amdgcn\.workitem\.id\.([xyz])$/.exec(name))) return copy(d, S_TID_X + axisIndex(x[1]!));
  if ((x = /^llvm\.amdgcn\.workgroup\.id\.([xyz])$/.exec(name))) return copy(d, S_WG_X + axisIndex(x[1]!));
  if (name === 'llvm.amdgcn.mbcnt.lo' || name === 'llvm.amdgcn.mbcnt.hi') {
    const mask = s(0);
    const acc = s(1);
    const hi = name.endsWith('hi');
    // lo counts mask bits 0..31 below the lane; hi counts bits 32..63 below it (bit b of the hi word is lane 32 + b).
    return {
      kind: 'op',
      op: (r) => {
        const below = hi ? Math.max(0, r[S_LANE] - 32) : Math.min(32, r[S_LANE]);
        const bits = below >= 32 ? 0xffffffff : (1 << below) - 1;
        r[d] = (r[acc] + popcount(r[mask] & bits)) >>> 0;
      },
    };
  }
  if (name === 'llvm.amdgcn.s.barrier') {
    checkBarrierFences(ctx);
    return { kind: 'barrier' };
  }
  if (name === 'llvm.amdgcn.s.waitcnt') {
    // gfx9 encoding: vmcnt in bits 3:0 and 15:14. vmcnt(0) retires this wave's direct-to-LDS loads.
    const imm = constArg(inst, 0);
    if ((imm & 0xc00f) !== 0) return { kind: 'none' };
    return { kind: 'op', op: (r) => m.lds.dma?.waited(r[S_THREAD]) };
  }
  if (name === 'llvm.amdgcn.raw.ptr.buffer.load.lds') return { kind: 'collective', collective: ldsDmaCollective(inst, name, ctx) };
  if (/^llvm\.amdgcn\.(sched\.barrier|sched\.group\.barrier|iglp\.opt|s\.setprio|wave\.barrier)$/.test(name)) return { kind: 'none' };
  if (name === 'llvm.amdgcn.make.buffer.rsrc.p8.p1') {
    const base = s(0);
    const stride = constArg(inst, 1);
    if (stride !== 0) throw new InterpretError(`${name}: stride ${stride} (only raw buffers, stride 0, are modeled)`);
    const nr = s(2);
    checkCdnaBufferFlags(constArg(inst, 3), ctx.target.name);
    // Before gfx1250 only the low 32 bits of num_records reach the descriptor.
    return { kind: 'op', op: (r) => { r[d] = new BufferResource(r[base], u64Number(r[nr]) % 4294967296); } };
  }
  if ((x = /^llvm\.amdgcn\.raw\.ptr\.buffer\.(load|store)\.(\w+)$/.exec(name))) {
    if (x[1] === 'load') {
      const codec = bufferCodec(inst.type, name);
      const rs = s(0);
      const vo = s(1);
      checkNoSoffset(inst, 2, name);
      return { kind: 'op', op: (r) => { r[d] = bufferLoad(m, r[rs], r[vo], codec, r[S_THREAD]); } };
    }
    const codec = bufferCodec(inst.args[0]!.type, name);
    const v = s(0);
    const rs = s(1);
    const vo = s(2);
    checkNoSoffset(inst, 3, name);
    return { kind: 'op', op: (r) => bufferStore(m, r[rs], r[vo], codec, r[v], r[S_THREAD]) };
  }
  if (name.startsWith('llvm.amdgcn.mfma.')) {
    const atom = ctx.target.atoms.find((a) => a.intrinsic === name);
    if (!atom) throw new InterpretError(`MFMA @${name} is not an atom of ${ctx.target.name} (atoms: ${ctx.target.atoms.map((a) => a.intrinsic).join(', ')})`);
    if (inst.args.length !== 6) throw new InterpretError(`${name} takes 6 arguments (A, B, C, cbsz, abid, blgp), got ${inst.args.length}`);
    for (const n of [3, 4, 5]) if (constArg(inst, n) !== 0) throw new InterpretError(`${name}: cbsz/abid/blgp must be 0 (argument ${n} is ${constArg(inst, n)})`);
    const at = inst.args[0]!.type;
    const bitsAsI16 = at.kind === 'vector' && at.elem.kind === 'int';
    return { kind: 'collective', collective: mfmaCollective(atom, s(0), s(1), s(2), d, bitsAsI16) };
  }
  if (/^llvm\.amdgcn\.readfirstlane(\.\w+)?$/.test(name)) return { kind: 'collective', collective: readFirstLaneCollective(name, s(0), d) };
  return undefined;
}

function lowerNvvm(inst: CallInst, name: string, ctx: CallContext): Lowered | undefined {
  const { dest: d, machine: m } = ctx;
  const s = (n: number) => ctx.slot(inst.args[n]!);
  let x: RegExpExecArray | null;
  if ((x = /^llvm\.nvvm\.read\.ptx\.sreg\.(tid|ntid|ctaid|nctaid)\.([xyz])$/.exec(name))) {
    const base = { tid: S_TID_X, ntid: S_NTID_X, ctaid: S_WG_X, nctaid: S_NWG_X }[x[1] as 'tid'];
    return copy(d, base + axisIndex(x[2]!));
  }
  if (name === 'llvm.nvvm.read.ptx.sreg.laneid') return copy(d, S_LANE);
  if (name === 'llvm.nvvm.read.ptx.sreg.warpsize') return { kind: 'op', op: (r) => { r[d] = m.waveSize; } };
  if (name === 'llvm.nvvm.barrier.cta.sync.aligned.all' || name === 'llvm.nvvm.barrier.sync' || name === 'llvm.nvvm.barrier0') {
    if (inst.args.length > 0 && constArg(inst, 0) !== 0) throw new InterpretError(`${name}: only barrier 0 is modeled`);
    return { kind: 'barrier' };
  }
  if (name === 'llvm.nvvm.mma.m16n8k16.row.col.bf16' || name === 'llvm.nvvm.mma.m16n8k16.row.col.f32.f32') {
    const atom = ctx.target.atoms.find((a) => a.intrinsic === name);
    if (!atom) throw new InterpretError(`@${name} is not an atom of ${ctx.target.name}`);
    if (inst.args.length !== 10) throw new InterpretError(`${name} takes 10 arguments (4 A, 2 B registers, 4 C floats), got ${inst.args.length}`);
    return { kind: 'collective', collective: mmaSyncCollective(atom, inst.args.map((a) => ctx.slot(a)), d) };
  }
  if ((x = /^llvm\.nvvm\.ldmatrix\.sync\.aligned\.m8n8\.x([124])(\.trans)?\.b16(\.p3)?$/.exec(name))) {
    const pt = inst.args[0]!.type;
    if (pt.kind !== 'ptr' || pt.addrspace !== 3) throw new InterpretError(`${name}: only shared-memory (addrspace 3) addresses are modeled`);
    const count = Number(x[1]);
    return { kind: 'collective', collective: ldmatrixCollective(name, count, x[2] !== undefined, s(0), d, m, count > 1) };
  }
  if ((x = /^llvm\.nvvm\.cp\.async\.(ca|cg)\.shared\.global\.(4|8|16)(\.s)?$/.exec(name))) {
    const size = Number(x[2]);
    const dst = s(0);
    const src = s(1);
    const srcSize = x[3] ? s(2) : -1;
    // Synchronous copy: the wait_group/bar.sync pair that must follow makes it visible anyway.
    return {
      kind: 'op',
      op: (r) => {
        const n = srcSize < 0 ? size : Math.min(size, r[srcSize]);
        const th = r[S_THREAD];
        const bytes = new Uint8Array(size);
        if (n > 0) {
          const dv = m.resolve(r[src], n, false, th);
          for (let i = 0; i < n; i++) bytes[i] = dv.getUint8(m.off + i);
        }
        const lv = m.ldsAt(r[dst], size, true, th);
        const o = m.off;
        for (let i = 0; i < size; i++) lv.setUint8(o + i, bytes[i]!);
      },
    };
  }
  if (/^llvm\.nvvm\.cp\.async\.(commit\.group|wait\.group|wait\.all)$/.test(name)) return { kind: 'none' };
  // One grid at a time here: the grid a dependent launch waits for has always completed.
  if (name === 'llvm.nvvm.griddepcontrol.wait' || name === 'llvm.nvvm.griddepcontrol.launch.dependents') return { kind: 'none' };
  const wgmma = lowerWgmmaIntrinsic(inst, name, ctx);
  if (wgmma) return wgmma;
  if ((x = /^llvm\.nvvm\.shfl\.sync\.(idx|up|down|bfly)\.(i32|f32)$/.exec(name))) {
    return { kind: 'collective', collective: shuffleCollective(name, x[1] as 'idx', inst.args.map((a) => ctx.slot(a)), d) };
  }
  return undefined;
}

function lowerGeneric(inst: CallInst, name: string, ctx: CallContext): Lowered | undefined {
  const d = ctx.dest;
  const a = inst.args.map((v) => ctx.slot(v));
  const t = inst.type;
  const st = t.kind === 'vector' ? t.elem : t;
  const each = (f: (...xs: number[]) => number): Lowered => {
    if (t.kind === 'vector') {
      const n = t.count;
      return { kind: 'op', op: (r: Regs) => { r[d] = Array.from({ length: n }, (_, i) => f(...a.map((s) => r[s][i]))); } };
    }
    if (a.length === 1) { const [x] = a as [number]; return { kind: 'op', op: (r) => { r[d] = f(r[x]); } }; }
    if (a.length === 2) { const [x, y] = a as [number, number]; return { kind: 'op', op: (r) => { r[d] = f(r[x], r[y]); } }; }
    const [x, y, z] = a as [number, number, number];
    return { kind: 'op', op: (r) => { r[d] = f(r[x], r[y], r[z]); } };
  };
  let x: RegExpExecArray | null;
  if ((x = /^llvm\.(fma|fmuladd|fabs|minnum|maxnum|sqrt|exp2)\.\w+$/.exec(name)) && st.kind === 'float') {
    const rnd = rounder(st.name);
    switch (x[1]) {
      // One rounding (fmuladd may fuse, and does here); double keeps the plain double expression.
      case 'fma': case 'fmuladd': return st.name === 'double' ? each((p, q, c) => p * q + c) : each((p, q, c) => fusedMultiplyAdd(p, q, c, rnd));
      case 'fabs': return each(Math.abs);
      case 'sqrt': return each((p) => rnd(Math.sqrt(p)));
      // Correctly rounded; the hardware's (v_exp_f32, ex2.approx.f32) are within 2 ulp of it.
      case 'exp2': return each((p) => rnd(2 ** p));
      case 'minnum': return each((p, q) => (p !== p ? q : q !== q ? p : Math.min(p, q)));
      case 'maxnum': return each((p, q) => (p !== p ? q : q !== q ? p : Math.max(p, q)));
    }
  }
  if ((x = /^llvm\.(smin|smax|umin|umax)\.i(\d+)$/.exec(name)) && st.kind === 'int' && st.bits <= 32) {
    const bits = st.bits;
    const sg = (v: number) => (bits === 32 ? v | 0 : (v << (32 - bits)) >> (32 - bits));
    switch (x[1]) {
      case 'smin': return each((p, q) => (sg(p) <= sg(q) ? p : q));
      case 'smax': return each((p, q) => (sg(p) >= sg(q) ? p : q));
      case 'umin': return each(Math.min);
      case 'umax': return each(Math.max);
    }
  }
  if (name === 'llvm.assume' || name.startsWith('llvm.lifetime.')) return { kind: 'none' };
  if (name.startsWith('llvm.expect.')) return { kind: 'op', op: (r) => { r[d] = r[a[0]!]; } };
  return undefined;
}
