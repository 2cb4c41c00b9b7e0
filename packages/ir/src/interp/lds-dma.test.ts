/**
 * AMD direct-to-LDS buffer loads: the target op's capability gating, the interpreter's placement
 * rule (lane l at base + l*size, one base per wave), zero-filled out-of-range dwords, the
 * vmcnt-wait check at barriers, and what LLVM 22 makes of it on gfx950 and gfx942.
 */
import { describe, expect, it } from 'vitest';
import type { Builder } from '../builder.js';
import type { Value } from '../ir.js';
import { printModule } from '../printer.js';
import { WAITCNT_VMCNT0 } from '../targets/amd.js';
import { gfx942, gfx950, sm_90 } from '../targets/index.js';
import type { Target } from '../targets/target.js';
import { TargetError } from '../targets/target.js';
import { compile, disassemble, findToolchain, type CompileResult } from '../toolchain.js';
import { array, i32, i8, ptr, vec } from '../types.js';
import { interpret } from './index.js';

const THREADS = 128;

interface DmaKernelOptions {
  readonly size: number;
  /** Leave out the vmcnt wait before the barrier. */
  readonly noWait?: boolean;
  /** Give each lane its own LDS base (not a valid M0). */
  readonly perLaneBase?: boolean;
}

/**
 * Two waves; lane l of wave w loads `size` bytes of x at slot (63 - l) + 64 w (reversed lanes, so
 * placement by lane and placement by address differ) into the wave's LDS block (base 64 w size).
 * After the wait and a barrier, thread t copies LDS slot 127 - t (the other wave's) to out[t].
 */
function dmaKernel(t: Target, o: DmaKernelOptions): ReturnType<Target['createModule']> {
  const { size } = o;
  const m = t.createModule();
  const s = m.addGlobal({ name: 's', valueType: array(THREADS * size, i8), addrspace: 3 });
  const b = t.kernel(m, 'k', [{ name: 'x', type: ptr(1) }, { name: 'n', type: i32 }, { name: 'out', type: ptr(1) }], { workgroupSize: THREADS });
  const tid = t.workitemId(b, 'x');
  const lane = b.and(tid, 63);
  const wave = b.lshr(tid, 6);
  const buf = t.globalBuffer(b, b.arg('x'), b.arg('n'));
  const slot = b.add(b.sub(63, lane), b.mul(wave, 64));
  const base = o.perLaneBase ? b.mul(tid, size) : b.mul(wave, 64 * size);
  t.ldsDma!.load(b, buf, b.mul(slot, size), b.gep(i8, s, [base]), size);
  if (!o.noWait) t.ldsDma!.wait(b);
  t.barrier(b);
  const from = b.mul(b.sub(THREADS - 1, tid), size);
  const words = Math.ceil(size / 4);
  for (let w = 0; w < Math.floor(size / 4); w++) copyWord(b, s, b.add(from, 4 * w), b.add(b.mul(tid, 4 * words), 4 * w));
  if (size < 4) {
    const ty = size === 1 ? i8 : vec(2, i8);
    b.store(b.load(ty, b.gep(i8, s, [from])), b.gep(i8, b.arg('out'), [b.mul(tid, 4)]));
  }
  b.ret();
  return m;
}

function copyWord(b: Builder, s: Value, from: Value, to: Value): void {
  b.store(b.load(i32, b.gep(i8, s, [from])), b.gep(i8, b.arg('out'), [to]));
}

/** What thread t should find: x's bytes of slot 127 - t's load, zero for out-of-range dwords (or the whole access when size <= 4). */
function expected(x: Uint8Array, n: number, size: number): Uint8Array {
  const words = Math.ceil(size / 4);
  const out = new Uint8Array(THREADS * 4 * words);
  for (let t = 0; t < THREADS; t++) {
    const s = THREADS - 1 - t;
    const lane = s % 64;
    const wave = Math.floor(s / 64);
    const off = ((63 - lane) + 64 * wave) * size;
    for (let i = 0; i < size; i++) {
      const inRange = size <= 4 ? off + size <= n : off + (i & ~3) + 4 <= n;
      out[t * 4 * words + i] = inRange ? x[off + i]! : 0;
    }
  }
  return out;
}

function run(t: Target, o: DmaKernelOptions, n: number): { out: Uint8Array; want: Uint8Array } {
  const x = Uint8Array.from({ length: THREADS * o.size }, (_, i) => (i * 37 + 11) & 0xff);
  const out = new Uint8Array(THREADS * 4 * Math.ceil(o.size / 4));
  interpret(dmaKernel(t, o), 'k', { target: t, grid: [1, 1, 1], block: [THREADS, 1, 1], args: [x, n, out] });
  return { out, want: expected(x, n, o.size) };
}

describe('target capability', () => {
  it('gfx950 loads 1, 2, 4, 12 or 16 bytes per lane, gfx942 1, 2 or 4, sm_90 none (it has cp.async)', () => {
    expect(gfx950.ldsDma?.sizes).toEqual([1, 2, 4, 12, 16]);
    expect(gfx942.ldsDma?.sizes).toEqual([1, 2, 4]);
    expect(sm_90.ldsDma).toBeUndefined();
  });

  it('a size the target lacks, or a base outside LDS, is a TargetError naming the sizes', () => {
    expect(() => dmaKernel(gfx942, { size: 16 })).toThrow(TargetError);
    expect(() => dmaKernel(gfx942, { size: 16 })).toThrow('gfx942: direct-to-LDS loads move 1, 2, 4 bytes per lane, not 16');
    expect(() => dmaKernel(gfx950, { size: 8 })).toThrow('gfx950: direct-to-LDS loads move 1, 2, 4, 12, 16 bytes per lane, not 8');
    const m = gfx950.createModule();
    const b = gfx950.kernel(m, 'k', [{ name: 'x', type: ptr(1) }], { workgroupSize: 64 });
    const buf = gfx950.globalBuffer(b, b.arg('x'), b.i32(64));
    expect(() => gfx950.ldsDma!.load(b, buf, b.i32(0), b.arg('x'), 4)).toThrow('gfx950: the LDS base of a direct-to-LDS load must be ptr addrspace(3), got ptr addrspace(1)');
  });

  it('emits the intrinsic with soffset, immediate offset and aux 0, and s_waitcnt vmcnt(0)', () => {
    const text = printModule(dmaKernel(gfx950, { size: 16 }));
    expect(text).toMatch(/call void @llvm\.amdgcn\.raw\.ptr\.buffer\.load\.lds\(ptr addrspace\(8\) %rsrc, ptr addrspace\(3\) %\S+, i32 16, i32 %\S+, i32 0, i32 0, i32 0\)/);
    expect(text).toContain(`call void @llvm.amdgcn.s.waitcnt(i32 ${WAITCNT_VMCNT0})`);
  });
});

describe('interpreter: direct-to-LDS buffer loads', () => {
  it.each([16, 12, 4, 2, 1])('gfx950, %i bytes per lane: lane l lands at base + l*size, one base per wave', (size) => {
    const { out, want } = run(gfx950, { size }, THREADS * size);
    expect(Array.from(out)).toEqual(Array.from(want));
  });

  it('out-of-range lanes write zeros; a 16-byte load straddling the range keeps its in-range dwords', () => {
    // 16 bytes per lane; the range ends 8 bytes into slot 100: slot 100 keeps 2 dwords, slots 101.. are zero.
    const n = 100 * 16 + 8;
    const { out, want } = run(gfx950, { size: 16 }, n);
    expect(Array.from(out)).toEqual(Array.from(want));
    // Slot 100 is wave 1 lane 27 (slot = 63 - 27 + 64), read back by thread 127 - (64 + 27) = 36.
    const t = 36;
    expect(Array.from(out.slice(t * 16 + 8, t * 16 + 16))).toEqual(new Array(8).fill(0));
    expect(out.slice(t * 16, t * 16 + 8).some((v) => v !== 0)).toBe(true);
    // A lane wholly past the range (slot 127: wave 1 lane 0, read by thread 63) is all zeros.
    expect(Array.from(out.slice(63 * 16, 64 * 16))).toEqual(new Array(16).fill(0));
  });

  it('gfx942: the 4-byte form, a 1-byte lane past the range is zero', () => {
    for (const [size, n] of [[4, 4 * 90], [1, 77]] as const) {
      const { out, want } = run(gfx942, { size }, n);
      expect(Array.from(out)).toEqual(Array.from(want));
    }
  });

  it('a barrier before s_waitcnt vmcnt(0) is an error naming the thread', () => {
    expect(() => run(gfx950, { size: 16, noWait: true }, THREADS * 16)).toThrow(/direct-to-LDS load not waited for: thread 0 reaches the barrier at @k .* with 1 load\(s\) since its last s_waitcnt vmcnt\(0\)/);
  });

  it('an LDS base that differs between lanes is an error (M0 is one per wave)', () => {
    expect(() => run(gfx950, { size: 4, perLaneBase: true }, THREADS * 4)).toThrow(/the LDS base must be the same in every lane of the wave \(M0 holds one per wave\); lane 0 passes \d+, lane 1 \d+/);
  });

  it('a size the target lacks is refused when the IR is run too', () => {
    const text = dmaKernel(gfx950, { size: 16 });
    expect(() => interpret(text, 'k', { target: gfx942, grid: [1, 1, 1], block: [THREADS, 1, 1], args: [new Uint8Array(16), 16, new Uint8Array(THREADS * 16)] }))
      .toThrow(/gfx942 loads 1, 2, 4 bytes per lane directly to LDS, not 16/);
  });
});

const amdObject = (r: CompileResult): Uint8Array => {
  if (r.vendor !== 'amd') throw new Error(`expected an AMD code object, got ${r.vendor}`);
  return r.object;
};

describe('LLVM 22', () => {
  const tc = findToolchain();
  const code = async (t: Target, size: number) =>
    (await disassemble(amdObject(await compile(printModule(dmaKernel(t, { size })), t, { toolchain: tc })), t, tc))
      .split('\n').map((l) => l.split('//')[0]!.trim().replace(/\s+/g, ' ')).filter((l) => l.length > 0);

  it.each([['gfx950', gfx950, 16, 'buffer_load_dwordx4'], ['gfx942', gfx942, 4, 'buffer_load_dword']] as const)('%s: %i bytes become %s ... lds, M0 set, vmcnt(0) before the barrier', async (_, t, size, mnemonic) => {
    const lines = await code(t, size);
    const load = lines.findIndex((l) => l.startsWith(`${mnemonic} `) && l.endsWith(' lds'));
    const barrier = lines.indexOf('s_barrier');
    expect(load).toBeGreaterThanOrEqual(0);
    expect(lines.slice(0, load).some((l) => /^s_mov_b32 m0, /.test(l))).toBe(true);
    expect(barrier).toBeGreaterThan(load);
    expect(lines.slice(load + 1, barrier)).toContain('s_waitcnt vmcnt(0)');
  });
});

