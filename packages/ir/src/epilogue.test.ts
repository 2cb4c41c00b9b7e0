import { describe, expect, it } from 'vitest';
import { ACTIVATIONS, NO_EPILOGUE, epilogueKernargs, epilogueTag, openEpilogue, type Activation, type Epilogue } from './epilogue.js';
import { decodeFloat16, encodeFloat16 } from './float.js';
import { interpret } from './interp/index.js';
import type { Module } from './module.js';
import { printModule } from './printer.js';
import { getTarget } from './targets/index.js';
import type { TargetName } from './targets/target.js';
import { compile, findToolchain } from './toolchain.js';
import { f32, i32, ptr, vec } from './types.js';
import type { Type } from './types.js';

const RUN = 4; // consecutive channels per thread, one vector
const K = 8;
const THREADS = 24;
const COUNT = RUN * THREADS;
const PARAMS = { alpha: 0.5, beta: -0.75, slope: 0.125, lo: -1.5, hi: 2.5 };

const ARG_TYPES: Record<'ptr' | 'i32' | 'f32', Type> = { ptr: ptr(1), i32, f32 };

/**
 * A kernel: thread i reads acc[4i .. 4i+3], applies the epilogue at channel 4i % K, element 4i, and
 * stores fp32 — as one run through `apply`, or (`storeAll`) as four one-element stores.
 */
function epilogueKernel(target: TargetName, e: Epilogue, dtype: 'fp16' | 'bf16', m?: Module, stores: 'apply' | 'storeAll' = 'apply'): Module {
  const t = getTarget(target);
  const mod = m ?? t.createModule();
  const params = [
    { name: 'acc', type: ptr(1) },
    { name: 'out', type: ptr(1) },
    ...epilogueKernargs(e).map((a) => ({ name: a.name, type: ARG_TYPES[a.type] })),
  ];
  const b = t.kernel(mod, `ep_${epilogueTag(e) || 'bare'}_${dtype}`, params, { workgroupSize: THREADS, ids: { workitem: ['x'], workgroup: ['x'] } });
  const ep = openEpilogue(t, b, e, dtype);
  const first = b.mul(t.workitemId(b, 'x'), RUN);
  const accBuf = t.globalBuffer(b, b.arg('acc'), b.i32(COUNT * 4));
  const outBuf = t.globalBuffer(b, b.arg('out'), b.i32(COUNT * 4));
  const acc = t.globalLoad(b, accBuf, b.mul(first, 4), vec(RUN, f32), { align: 16 });
  if (stores === 'apply') {
    const y = ep.apply(b, acc, { channel: b.urem(first, K), element: first });
    t.globalStore(b, outBuf, b.mul(first, 4), y, { align: 16 });
  } else {
    ep.storeAll(b, Array.from({ length: RUN }, (_, i) => () => {
      const element = b.add(first, i);
      return { acc: b.extractElement(acc, i), at: { channel: b.urem(element, K), element }, store: (bb, v) => t.globalStore(bb, outBuf, bb.mul(element, 4), v, { align: 4 }) };
    }));
  }
  b.ret();
  return mod;
}

const GELU_C = Math.sqrt(2 / Math.PI);
function act64(act: Activation, z: number): number {
  switch (act) {
    case 'none': return z;
    case 'relu': return Math.max(z, 0);
    case 'relu6': return Math.min(Math.max(z, 0), 6);
    case 'leaky_relu': return z > 0 ? z : PARAMS.slope * z;
    case 'silu': return z / (1 + Math.exp(-z));
    case 'hard_swish': return (z * Math.min(Math.max(z + 3, 0), 6)) / 6;
    case 'gelu': return 0.5 * z * (1 + Math.tanh(GELU_C * (z + 0.044715 * z ** 3)));
    case 'sigmoid': return 1 / (1 + Math.exp(-z));
    case 'clamp': return Math.min(Math.max(z, PARAMS.lo), PARAMS.hi);
  }
}

const kindOf = (dtype: 'fp16' | 'bf16') => (dtype === 'fp16' ? 'half' : 'bfloat');
const toBits = (v: number, dtype: 'fp16' | 'bf16') => encodeFloat16(v, kindOf(dtype));
const fromBits = (bits: number, dtype: 'fp16' | 'bf16') => decodeFloat16(bits, kindOf(dtype));

function run(target: TargetName, e: Epilogue, dtype: 'fp16' | 'bf16', stores: 'apply' | 'storeAll' = 'apply') {
  const acc = Float32Array.from({ length: COUNT }, (_, i) => ((i * 37) % 41) / 2.5 - 8); // [-8, 8]
  const biasValues = Array.from({ length: K }, (_, k) => (k - 3.5) / 2);
  const bias = e.bias === 'fp32' ? Float32Array.from(biasValues, (v) => v + 2 ** -12) : Uint16Array.from(biasValues, (v) => toBits(v, dtype));
  const residual = Uint16Array.from({ length: COUNT }, (_, i) => toBits(((i * 13) % 17) / 4 - 2, dtype));
  const out = new Float32Array(COUNT);
  const args: Record<string, unknown> = { acc, out, bias, residual, bias_bytes: bias.byteLength, residual_bytes: residual.byteLength, ...PARAMS };
  const m = epilogueKernel(target, e, dtype, undefined, stores);
  const fn = m.functions.find((f) => f.blocks.length > 0)!;
  const named = Object.fromEntries(fn.args.map((a) => [a.name, args[a.name]])) as Record<string, never>;
  interpret(m, fn.name, { target, grid: [1, 1, 1], block: [THREADS, 1, 1], args: named });
  const expected = Array.from(acc, (a, i) => {
    const b = e.bias === 'none' ? 0 : e.bias === 'fp32' ? (bias as Float32Array)[i % K]! : fromBits((bias as Uint16Array)[i % K]!, dtype);
    const r = e.residual ? PARAMS.beta * fromBits(residual[i]!, dtype) : 0;
    return act64(e.act, PARAMS.alpha * a + b + r);
  });
  return { out, expected };
}

describe('openEpilogue: the store epilogue in the interpreter', () => {
  for (const target of ['gfx950', 'sm_90'] as const) {
    for (const e of [
      ...ACTIVATIONS.map((act): Epilogue => ({ act, bias: 'fp32', residual: true })),
      { act: 'silu', bias: 'dtype', residual: false } as Epilogue,
      { act: 'none', bias: 'none', residual: true } as Epilogue,
      { act: 'gelu', bias: 'none', residual: false } as Epilogue,
    ]) {
      it(`${target} ${epilogueTag(e)}`, () => {
        for (const [dtype, stores] of [['bf16', 'apply'], ['fp16', 'apply'], ['bf16', 'storeAll']] as const) {
          const { out, expected } = run(target, e, dtype, stores);
          for (let i = 0; i < COUNT; i++) {
            // fp32 evaluation of an fp64 formula: a few fp32 roundings of values up to ~10.
            expect(Math.abs(out[i]! - expected[i]!), `${dtype} element ${i}: ${out[i]} vs ${expected[i]}`).toBeLessThan(1e-5 * (1 + Math.abs(expected[i]!)) + 4e-6);
          }
        }
      });
    }
  }

  it('a dropped bias or another activation is visible in the output', () => {
    const { out } = run('gfx950', { act: 'silu', bias: 'fp32', residual: true }, 'bf16');
    const noBias = run('gfx950', { act: 'silu', bias: 'none', residual: true }, 'bf16').out;
    const gelu = run('gfx950', { act: 'gelu', bias: 'fp32', residual: true }, 'bf16').out;
    expect(out.filter((v, i) => Math.abs(v - noBias[i]!) > 1e-3).length).toBeGreaterThan(COUNT / 2);
    expect(out.filter((v, i) => Math.abs(v - gelu[i]!) > 1e-3).length).toBeGreaterThan(COUNT / 4);
  });

  it('storeAll reads every bias and residual run of a batch before its first store', () => {
    const ir = printModule(epilogueKernel('gfx950', { act: 'silu', bias: 'fp32', residual: true }, 'bf16', undefined, 'storeAll'));
    const order = [...ir.matchAll(/call \S+ @llvm\.amdgcn\.raw\.ptr\.buffer\.(load|store)\.(\w+)/g)].map((x) => `${x[1]}.${x[2]}`);
    // 4 bias and 4 residual reads (after the accumulators' vector load), then the 4 stores.
    expect(order).toEqual([...Array.from({ length: 4 }, () => ['load.f32', 'load.bf16']).flat(), ...Array(4).fill('store.f32')]);
  });

  it('is nothing at all when bare: no arguments, no name part, the value passes through', () => {
    expect(epilogueKernargs(NO_EPILOGUE)).toEqual([]);
    expect(epilogueTag(NO_EPILOGUE)).toBe('');
    const ir = printModule(epilogueKernel('gfx950', NO_EPILOGUE, 'bf16'));
    expect(ir).not.toMatch(/fmul|maxnum|exp2/);
  });

  it('names and arguments follow the shape', () => {
    expect(epilogueTag({ act: 'leaky_relu', bias: 'dtype', residual: true })).toBe('epleakyrelu_bd_res');
    expect(epilogueTag({ act: 'relu', bias: 'none', residual: false })).toBe('eprelu');
    expect(epilogueKernargs({ act: 'clamp', bias: 'fp32', residual: false }).map((a) => a.name)).toEqual(['bias', 'bias_bytes', 'alpha', 'lo', 'hi']);
    expect(epilogueKernargs({ act: 'leaky_relu', bias: 'none', residual: true }).map((a) => a.name)).toEqual(['residual', 'residual_bytes', 'alpha', 'beta', 'slope']);
  });
});

describe('openEpilogue: every activation lowers with LLVM 22', () => {
  const tc = findToolchain();
  for (const target of ['gfx950', 'gfx942', 'sm_90'] as const) {
    it(target, async () => {
      const t = getTarget(target);
      const m = t.createModule();
      for (const act of ACTIVATIONS) epilogueKernel(target, { act, bias: act === 'silu' ? 'dtype' : 'fp32', residual: true }, 'bf16', m);
      const r = await compile(printModule(m), t, { toolchain: tc });
      const text = r.vendor === 'nvidia' ? r.ptx : '';
      if (r.vendor === 'nvidia') expect(text).toMatch(/ex2\.approx[\s\S]*div\.approx\.f32|div\.approx\.f32[\s\S]*ex2\.approx/);
      expect(r.vendor).toBe(t.vendor);
    }, 60_000);
  }
});
