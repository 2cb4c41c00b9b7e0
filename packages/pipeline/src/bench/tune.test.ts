import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { kernelName, problemCandidates } from '@rocke/conv-direct';
import { createFakeBinding } from '@rocke/hip-runtime/testing';
import { convForward, randomTensor } from '@rocke/reference';
import { problemJson } from '../api/kernel-source.js';
import { RecordStore } from '../cache/records.js';
import type { CliIo } from '../io.js';
import { kernelsDir, PROBLEM } from '../testing/conv-kernels.js';
import type { BenchRequest } from './requests.js';
import { gpuTune } from './tune.js';
import { convPlanner, gpuRunConv } from '../cli/wiring.js';

const planner = convPlanner();

function io(): CliIo & { err: string[] } {
  const err: string[] = [];
  return { stdout: () => {}, stderr: (t) => void err.push(t), stderrIsTTY: false, env: { ROCKE_BENCH_ISOLATE: '0' }, cwd: tmpdir(), err };
}

const request = (dir: string): BenchRequest => ({ problems: [{ name: 'small', problem: PROBLEM, cls: null }], target: 'sm_90', verify: true, vsCudnn: false, warmup: 1, iters: 3, cacheDir: dir });
const FAST = { targetRepMs: 0.02, verifySample: 4 };
const now = () => new Date('2026-12-03T10:00:00Z');

describe('rocke tune through the fake binding', () => {
  it('records the fastest verified candidate with its runners-up, device and toolchain; a broken kernel never wins', async () => {
    // The first dense candidate drops channels: it fails verification even though it ties on time.
    const broken = kernelsDir(kernelName(problemCandidates(PROBLEM, 'sm_90').valid[0]!));
    const { lines, failures } = await gpuTune(planner, request(broken.dir), io(), { binding: createFakeBinding({ kernels: broken.kernels, msPerLaunch: 0.01 }), shape: FAST, now });
    expect(failures).toBe(0);
    expect(lines[0]!.status).toBe('recorded');
    const r = new RecordStore(broken.dir).lookup('direct_fwd', 'sm_90', problemJson(PROBLEM))!;
    expect(r.choice.kernelName).toBe(kernelName(broken.dense[1]));
    expect(r.timeMs).toBeCloseTo(0.01, 9);
    expect(r.verified.mode).toBe('full');
    expect(r.device).toEqual({ name: 'fake device', driver: '13000' });
    expect([r.toolchain, r.date]).toEqual(['test', '2026-12-03T10:00:00.000Z']);
    expect(r.runnersUp.map((x) => x.kernelName)).not.toContain(kernelName(broken.dense[0]));
    expect(r.runnersUp[0]!.timeMs).toBeGreaterThanOrEqual(r.timeMs);
    expect(r.choice.code?.kind).toBe('cubin');
  });

  it('a second, slower tune keeps the faster record; rocke run then uses it with no timing launches', async () => {
    const { dir, kernels } = kernelsDir();
    await gpuTune(planner, request(dir), io(), { binding: createFakeBinding({ kernels, msPerLaunch: 0.01 }), shape: FAST, now });
    const first = new RecordStore(dir).lookup('direct_fwd', 'sm_90', problemJson(PROBLEM))!;
    const slow = await gpuTune(planner, request(dir), io(), { binding: createFakeBinding({ kernels, msPerLaunch: 0.05 }), shape: FAST, now });
    expect(slow.lines[0]!.status).toBe('kept-faster');
    expect(new RecordStore(dir).lookup('direct_fwd', 'sm_90', problemJson(PROBLEM))).toEqual(first);
    const binding = createFakeBinding({ kernels });
    const x = randomTensor(2 * 6 * 6 * 32, 'bf16', 11);
    const w = randomTensor(16 * 9 * 32, 'bf16', 12);
    const out = io();
    const y = await gpuRunConv({ problem: PROBLEM, x: { dtype: 'uint16', shape: [2, 6, 6, 32], data: x }, w: { dtype: 'uint16', shape: [16, 3, 3, 32], data: w }, target: 'sm_90', cacheDir: dir }, out, { binding });
    expect(y.shape).toEqual([2, 6, 6, 16]);
    expect(Array.from(y.data as Uint16Array)).toEqual(Array.from(convForward(PROBLEM, x, w).y));
    expect(out.err.join('')).toMatch(/chosen by record/);
    expect(binding.launches.map((l) => l.name)).toEqual([first.choice.kernelName]);
    expect(binding.calls.filter((c) => /Event|Graph|Capture/.test(c))).toEqual([]);
  });
});
