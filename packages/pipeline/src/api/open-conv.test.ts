import { describe, expect, it } from 'vitest';
import { kernelName, problemGeometry } from '@rocke/conv-direct';
import { openDevice } from '@rocke/hip-runtime';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { convForward, randomTensor } from '@rocke/reference';
import { RecordStore } from '../cache/records.js';
import { kernelsDir, PROBLEM, recordFor } from '../testing/conv-kernels.js';
import { openConv } from './open-conv.js';

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
