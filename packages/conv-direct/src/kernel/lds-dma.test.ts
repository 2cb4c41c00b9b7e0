/**
 * Direct-to-LDS weight staging (`lds_dma`, schedule `lds-dma-weights`): the MFMA fragment slots of
 * the weights go from global memory to LDS by `buffer_load_dwordx4 ... lds` on gfx950. Interpreter
 * numerics against the fp64 oracle (dense 3x3 over several chunks with partial tiles and an uneven
 * last staging pass; 1x1 with a channel tail), what the IR holds, and the validation reasons on
 * the targets and specs that cannot have it.
 */
import { printModule } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { problemGeometry, type Problem } from '../problem.js';
import type { Spec } from '../spec.js';
import { gfx950Spec, pointwiseSpec, problem1x1, problem3x3, sm90Spec } from '../test-fixtures.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { interpretConv } from './cpu-run.js';
import { fromBits, mismatches, naiveConv, randomBits } from './test-oracle.js';

const dma = { double_buffer: true, lds_dma: true } as const;

interface Case {
  readonly name: string;
  readonly spec: Spec;
  readonly problem: Problem;
}

const cases: Case[] = [
  {
    // tile_k 96 over 32x32 atoms: 3*9 tap-slices of 64 slots over 256 threads = 6.75 passes, so the last pass stages whole waves only.
    name: 'gfx950 3x3 s1 bf16 32x32x16, 3 chunks, partial H/W/K tiles, uneven last pass',
    spec: gfx950Spec({ ...dma, tile_k: 96, ck: 16, waves_m: 1, waves_n: 4 }),
    problem: problem3x3({ N: 1, H: 10, W: 20, C: 48, K: 80 }),
  },
  {
    name: 'gfx950 3x3 s2 fp16 16x16x32, 2 images, 2 chunks',
    spec: gfx950Spec({ ...dma, atom: '16x16x32', dtype: 'fp16', stride_h: 2, stride_w: 2, tile_w: 16, tile_k: 32, waves_m: 1 }),
    problem: problem3x3({ N: 2, H: 13, W: 30, C: 64, K: 32, strideH: 2, strideW: 2, dtype: 'fp16' }),
  },
  {
    // C 40 over ck 16: the third chunk holds 8 live channels; the weights past them come from the sentinel (zero).
    name: 'gfx950 1x1 pointwise bf16 32x32x16, C 40 -> K 24 (c_tail 8, k_tail)',
    spec: pointwiseSpec(gfx950Spec({ ...dma, tile_k: 32, ck: 16, waves_m: 1 }), { c_tail: 8, k_tail: true }),
    problem: problem1x1({ N: 2, H: 7, W: 9, C: 40, K: 24 }),
  },
];

function run(c: Case) {
  const g = problemGeometry(c.problem);
  const x = randomBits(g.xBytes / 2, c.problem.dtype, 31);
  const w = randomBits(g.wBytes / 2, c.problem.dtype, 37);
  const kernel = buildConvKernel(c.spec);
  const y = Array.from(interpretConv(kernel, c.problem, x, w).y, fromBits(c.problem.dtype));
  return { kernel, x, w, y };
}

describe('lds_dma numerics (interpreter vs naive fp64 conv)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(validate(c.spec, c.problem)).toEqual({ ok: true });
    const { kernel, x, w, y } = run(c);
    expect(kernel.schedule).toBe('lds-dma-weights');
    expect(mismatches(y, naiveConv(c.problem, x, w), c.problem.dtype, c.problem.R * c.problem.S * c.problem.C)).toEqual({ count: 0, first: null });
  });

  it('the oracle would see a lost weight chunk (the check is not vacuous)', () => {
    const c = cases[0]!;
    const { x, w, y } = run(c);
    const w2 = w.slice();
    for (let i = 0; i < w2.length; i++) if (i % c.problem.C >= 32) w2[i] = 0;
    expect(mismatches(y, naiveConv(c.problem, x, w2), c.problem.dtype, 9 * c.problem.C).count).toBeGreaterThan(100);
  });

  it('a kernel built without the vmcnt wait is caught by the interpreter at the barrier', () => {
    const c = cases[2]!;
    const g = problemGeometry(c.problem);
    const kernel = buildConvKernel(c.spec, { mutation: { skipLdsDmaWait: true } });
    expect(() => interpretConv(kernel, c.problem, randomBits(g.xBytes / 2, c.problem.dtype, 1), randomBits(g.wBytes / 2, c.problem.dtype, 2)))
      .toThrow(/direct-to-LDS load not waited for: thread 0 reaches the barrier/);
  });

  it('gives the bits of the register-prefetch kernel of the same tile (same sums, same order)', () => {
    const c = cases[0]!;
    const { x, w } = run(c);
    const { lds_dma: _, ...plain } = c.spec;
    const a = interpretConv(buildConvKernel(c.spec), c.problem, x, w).y;
    const b = interpretConv(buildConvKernel(plain), c.problem, x, w).y;
    expect(Array.from(a)).toEqual(Array.from(b));
  });
});

describe('lds_dma IR', () => {
  it('stages weights with 16-byte direct-to-LDS loads and waits for them before the barrier; no weight ds_write', () => {
    const spec = gfx950Spec(dma);
    const { lds_dma: _, ...plain } = spec;
    const text = (s: Spec) => buildConvKernel(s).module;
    const count = (s: Spec, re: RegExp) => (printModule(text(s)).match(re) ?? []).length;
    const loads = /call void @llvm\.amdgcn\.raw\.ptr\.buffer\.load\.lds\(ptr addrspace\(8\) %\S+, ptr addrspace\(3\) %\S+, i32 16,/g;
    // Prologue + loop body, one load per weight staging pass.
    expect(count(spec, loads)).toBeGreaterThan(0);
    expect(count(plain, loads)).toBe(0);
    expect(count(spec, /call void @llvm\.amdgcn\.s\.waitcnt\(i32 3952\)/g)).toBe(2);
    // The LDS stores left are the activations' (and the staged epilogue's): fewer than with register-staged weights.
    expect(count(spec, /store <8 x bfloat>/g)).toBeLessThan(count(plain, /store <8 x bfloat>/g));
  });
});

describe('lds_dma validation', () => {
  it('is refused with a reason where the target or the spec cannot have it', () => {
    const reason = (s: Spec) => {
      const v = validate(s);
      return v.ok ? 'ok' : v.reason;
    };
    expect(reason(gfx950Spec(dma))).toBe('ok');
    expect(reason(gfx950Spec({ ...dma, target: 'gfx942', atom: '32x32x8', ck: 16 }))).toBe(
      "lds_dma: a weight fragment slot of 32x32x8 is 8 bytes per lane and gfx942's direct-to-LDS loads move 1, 2, 4 bytes (the lane-contiguous placement admits no split)",
    );
    expect(reason(sm90Spec(dma))).toBe('lds_dma: sm_90 has no direct-to-LDS loads (its kernels stage with cp.async)');
    expect(reason(gfx950Spec({ lds_dma: true }))).toBe('lds_dma: the loads land while the MMAs read the other stage: double_buffer must be true');
    expect(reason(gfx950Spec({ ...dma, c_tail: 4 }))).toBe('lds_dma: the weight slots load in pieces of 4 channels (c_tail 4); direct-to-LDS loads move whole 8-channel slots');
  });
});
