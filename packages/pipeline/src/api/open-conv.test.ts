import { describe, expect, it } from 'vitest';
import { kernelName, problemGeometry } from '@rocke/conv-direct';
import { openDevice } from '@rocke/hip-runtime';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { applyEpilogue, convForward, randomTensor } from '@rocke/reference';
import { RecordStore } from '../cache/records.js';
import { kernelsDir, PROBLEM, recordFor } from '../testing/conv-kernels.js';
import { openConv } from '../cli/wiring.js';

function operands() {
  const g = problemGeometry(PROBLEM);
  const x = randomTensor(g.xBytes / 2, 'bf16', 1);
  const w = randomTensor(g.wBytes / 2, 'bf16', 2);
  return { g, x, w, want: convForward(PROBLEM, x, w).y };
}

describe('openConv on the fake binding', () => {
  it('a record hit launches the recorded kernel and nothing else: no timing, no events, no graphs', () => {
    const { dir, dense, kernels } = kernelsDir();
    new RecordStore(dir).put(recordFor(dense[1]));
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, cache: dir });
    expect(conv.choice.chosenBy).toBe('record');
    expect(conv.choice.kernelName).toBe(kernelName(dense[1]));
    expect(conv.explain()[0]).toMatch(/^record: /);
    const { g, x, w, want } = operands();
    const [xb, wb, yb] = [device.upload(x), device.upload(w), device.alloc(g.yBytes)];
    conv.run(xb, wb, yb);
    conv.run(xb, wb, yb);
    device.synchronize();
    expect(Buffer.from(yb.read(new Uint16Array(g.yBytes / 2)).buffer).equals(Buffer.from(want.buffer))).toBe(true);
    expect(binding.launches.map((l) => l.name)).toEqual([kernelName(dense[1]), kernelName(dense[1])]);
    expect(binding.calls.filter((c) => /Event|Graph|capture/i.test(c))).toEqual([]);
    conv.close();
    device.close();
  });

  it('split_c from a record: conv then reduce per run, one workspace owned and reused, freed on close', () => {
    const { dir, split, kernels } = kernelsDir();
    new RecordStore(dir).put(recordFor(split, 2));
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, cache: dir });
    expect([conv.choice.chosenBy, conv.choice.splits, conv.plan.splits]).toEqual(['record', 2, 2]);
    const { g, x, w, want } = operands();
    const [xb, wb, yb] = [device.upload(x), device.upload(w), device.alloc(g.yBytes)];
    const live = binding.liveAllocations();
    for (let i = 0; i < 3; i++) conv.run(xb, wb, yb, { stream: null });
    expect(binding.liveAllocations()).toBe(live);
    device.synchronize();
    expect(Buffer.from(yb.read(new Uint16Array(g.yBytes / 2)).buffer).equals(Buffer.from(want.buffer))).toBe(true);
    expect(binding.launches.map((l) => l.name.startsWith('rocke_direct_split_c'))).toEqual([true, false, true, false, true, false]);
    conv.close();
    expect(binding.liveAllocations()).toBe(live - 1);
    device.close();
  });

  it('without a record the ranker chooses among the compiled kernels, still without timing', () => {
    const { dir, dense, split, kernels } = kernelsDir();
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, cache: dir });
    expect(conv.choice.chosenBy).toBe('ranker');
    expect([kernelName(dense[0]), kernelName(dense[1]), kernelName(split)]).toContain(conv.choice.kernelName);
    expect(conv.explain().join('\n')).toMatch(/no tuning record .*\nranker: /);
    expect(binding.launches).toEqual([]);
    expect(binding.calls.filter((c) => /Event|Graph|capture/i.test(c))).toEqual([]);
    conv.close();
    device.close();
  });

  it('refuses buffers smaller than the problem with a clear reason', () => {
    const { dir, dense, kernels } = kernelsDir();
    new RecordStore(dir).put(recordFor(dense[0]));
    const device = openDevice({ binding: createFakeBinding({ kernels }) });
    const conv = openConv(PROBLEM, { device, cache: dir });
    const { g } = operands();
    expect(() => conv.run(device.alloc(g.xBytes), device.alloc(8), device.alloc(g.yBytes))).toThrow(/w holds 8 bytes; the problem needs/);
    device.close();
  });
});

describe('openConv with a fused epilogue, on the fake binding', () => {
  const epilogue = { act: 'silu', bias: 'fp32', residual: true } as const;
  const scalars = { alpha: 0.5, beta: 2 };

  /** The fp64 reference of act(alpha*conv + bias + beta*r), rounded to bf16, and the device tensors. */
  function fusedOperands(device: ReturnType<typeof openDevice>) {
    const { g, x, w } = operands();
    const bias = Float32Array.from({ length: PROBLEM.K }, (_, k) => (k % 3) - 1 + k / 8);
    const residual = randomTensor(g.yBytes / 2, 'bf16', 3);
    const conv = convForward(PROBLEM, x, w);
    const want = applyEpilogue(conv.geometry, conv.y32, { act: 'silu', ...scalars, bias, residual }).y;
    const buffers = { x: device.upload(x), w: device.upload(w), y: device.alloc(g.yBytes), bias: device.upload(bias), residual: device.upload(residual) };
    return { g, want, bare: conv.y, buffers };
  }
  const same = (a: Uint16Array, b: Uint16Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

  it('the ranker picks among the fused kernels; run binds bias and residual and gives the reference epilogue', () => {
    const { dir, kernels } = kernelsDir(undefined, epilogue);
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, cache: dir, epilogue: { ...epilogue, ...scalars } });
    expect(conv.choice.kernelName).toMatch(conv.choice.spec.variant === 'split_c' ? /^rocke_direct_split_c/ : /_epsilu_b32_res$/);
    const { g, want, bare, buffers } = fusedOperands(device);
    conv.run(buffers.x, buffers.w, buffers.y, { bias: buffers.bias, residual: buffers.residual });
    device.synchronize();
    const y = buffers.y.read(new Uint16Array(g.yBytes / 2));
    expect(same(y, want)).toBe(true);
    expect(same(y, bare)).toBe(false);
    conv.close();
    device.close();
  });

  it.each([['dense', 0], ['split_c', 2]] as const)('a %s record runs fused (split_c: bare conv, fused reduce) and matches the reference', (variant, splits) => {
    const { dir, dense, split, kernels } = kernelsDir(undefined, epilogue);
    // The record holds the tuned tile as the bare conv names it; the fused run takes its fused form.
    const spec = variant === 'dense' ? { ...dense[0], epilogue: undefined } : split;
    new RecordStore(dir).put(recordFor(JSON.parse(JSON.stringify(spec)), splits || undefined));
    const binding = createFakeBinding({ kernels });
    const device = openDevice({ binding });
    const conv = openConv(PROBLEM, { device, cache: dir, epilogue: { ...epilogue, ...scalars } });
    expect(conv.choice.chosenBy).toBe('record');
    const { g, want, buffers } = fusedOperands(device);
    conv.run(buffers.x, buffers.w, buffers.y, { bias: buffers.bias, residual: buffers.residual });
    device.synchronize();
    expect(same(buffers.y.read(new Uint16Array(g.yBytes / 2)), want)).toBe(true);
    const names = binding.launches.map((l) => l.name);
    expect(names).toEqual(variant === 'dense' ? [kernelName(dense[0])] : [kernelName(split), expect.stringMatching(/_epsilu_b32_res$/)]);
    conv.close();
    device.close();
  });

  it('a kernel that drops the bias fails the comparison (the check can fail)', () => {
    const { dir, kernels } = kernelsDir(undefined, epilogue, true);
    const device = openDevice({ binding: createFakeBinding({ kernels }) });
    const conv = openConv(PROBLEM, { device, cache: dir, epilogue: { ...epilogue, ...scalars }, variants: ['dense'] });
    const { g, want, buffers } = fusedOperands(device);
    conv.run(buffers.x, buffers.w, buffers.y, { bias: buffers.bias, residual: buffers.residual });
    device.synchronize();
    expect(same(buffers.y.read(new Uint16Array(g.yBytes / 2)), want)).toBe(false);
    device.close();
  });

  it('names a missing or unexpected buffer, and a source without the fused kernels', () => {
    const fusedDir = kernelsDir(undefined, epilogue);
    const device = openDevice({ binding: createFakeBinding({ kernels: fusedDir.kernels }) });
    const conv = openConv(PROBLEM, { device, cache: fusedDir.dir, epilogue: { ...epilogue, ...scalars } });
    const { buffers } = fusedOperands(device);
    expect(() => conv.run(buffers.x, buffers.w, buffers.y, { bias: buffers.bias })).toThrow("this conv's epilogue needs a residual buffer: run(x, w, y, { residual })");
    expect(() => conv.run(buffers.x, buffers.w, buffers.y, { bias: device.alloc(8), residual: buffers.residual })).toThrow(`bias holds 8 bytes; the problem needs ${4 * PROBLEM.K}`);
    device.close();
    const bareDir = kernelsDir();
    const bareDevice = openDevice({ binding: createFakeBinding({ kernels: bareDir.kernels }) });
    const bare = openConv(PROBLEM, { device: bareDevice, cache: bareDir.dir });
    const b = fusedOperands(bareDevice).buffers;
    expect(() => bare.run(b.x, b.w, b.y, { bias: b.bias })).toThrow('run() got a bias buffer, but this conv was opened without a bias in its epilogue');
    expect(() => openConv(PROBLEM, { device: bareDevice, cache: bareDir.dir, epilogue })).toThrow(/^no kernel for this problem with the fused epilogue epsilu_b32_res in .*: no valid dense candidate .* \(\d+ valid, none available\)$/);
    bareDevice.close();
  });
});
