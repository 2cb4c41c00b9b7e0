import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelName, splitTrials } from '@rocke/conv-direct';
import { openDevice } from '@rocke/hip-runtime';
import { createFakeBinding, type FakeKernel } from '@rocke/hip-runtime/testing';
import { helperSpecs, kernelName as reduceName } from '@rocke/split-reduce';
import { KernelCache } from '../cache/cache.js';
import { BAKED, fakeKernels as kernels, kernelsDir, PROBLEM } from '../testing/conv-kernels.js';
import type { BenchRequest } from './requests.js';
import type { CliIo } from '../io.js';
import { summarizeBench } from './bench-report.js';
import { benchShape, rankCandidates, type CandidateResult } from './bench-shape.js';
import { parseCudnnRows } from './cudnn.js';
import { convPlanner, suiteShape } from '../cli/wiring.js';
import { fakeConvKernel, fakeReduceKernel } from '../testing/fake-kernels.js';
import { GRAPH_WARM_REPLAYS } from './execute.js';
import { gpuBench } from './gpu-bench.js';
import { parseBenchManifest } from './manifest.js';
import { evenlySpaced } from './reference-check.js';

const planner = convPlanner();

function io(env: Record<string, string> = {}): CliIo & { err: string[] } {
  const err: string[] = [];
  return { stdout: () => {}, stderr: (t) => void err.push(t), stderrIsTTY: false, env: { ROCKE_BENCH_ISOLATE: '0', ...env }, cwd: tmpdir(), err };
}

/** Two executions per timed repetition at the fake's 0.01 ms per launch: keeps the JS kernel bodies cheap. */
const FAST = { targetRepMs: 0.02 };

const request = (dir: string, extra: Partial<BenchRequest> = {}): BenchRequest => ({
  problems: [{ name: 'small', problem: PROBLEM, cls: 'small-map' }], target: 'sm_90', verify: true, vsCudnn: false, warmup: 1, iters: 3, cacheDir: dir, ...extra,
});

describe('GPU bench through the fake binding', () => {
  it('times every candidate, verifies them against the reference, ranks by time, and runs split_c as conv then reduce', async () => {
    const { dir, dense, split } = kernelsDir();
    const binding = createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01 });
    const device = openDevice({ binding });
    const { manifest } = kernelsDir();
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: true, warmup: 1, iters: 3, verifySample: 0, targetRepMs: 0.02 });
    device.close();
    expect(result.status).toBe('ok');
    expect(result.reference).toBe('full');
    // Fake time is launches × 0.01 ms: dense plans are one launch, split_c a conv and a reduce.
    const byName = new Map(result.candidates.map((c) => [c.kernelName, c]));
    expect(byName.get(kernelName(dense[0]))!.medianMs).toBeCloseTo(0.01, 9);
    const sc = byName.get(kernelName(split))!;
    expect(sc.launches).toBe(2);
    expect(sc.splitTimes!.some((t) => t.splits > 1)).toBe(true); // the multi-slice workspace path ran too
    expect(sc.medianMs).toBeCloseTo(0.02, 9);
    expect(result.ranking).toEqual([...dense.map(kernelName).sort(), kernelName(split)]);
    // Every plan was timed as cudnn_baseline.py times cuDNN: one captured graph of `inner` executions
    // per plan, replayed untimed, then once per repetition between the events; no spin kernel.
    expect(result.candidates.every((c) => c.timing === 'graph')).toBe(true);
    expect(result.notes).toEqual([]);
    // split_c times each of its split counts (same binary, splits a kernarg); equal fake times keep the planner's.
    const trials = splitTrials(split, PROBLEM);
    expect(trials.length).toBeGreaterThan(1);
    expect(sc.splitTimes!.map((t) => t.splits)).toEqual(trials);
    expect(sc.splits).toBe(trials[0]);
    const plansTimed = 2 + trials.length;
    expect(binding.calls.filter((c) => c === 'beginCapture')).toHaveLength(plansTimed);
    expect(binding.calls.filter((c) => c === 'destroyGraph')).toHaveLength(plansTimed);
    expect(binding.calls.filter((c) => c === 'launchGraph')).toHaveLength(plansTimed * (GRAPH_WARM_REPLAYS + 3));
    expect(binding.launches.filter((l) => l.name === 'rocke_spin')).toHaveLength(0);
    // inner = 2 executions per graph (0.02 ms target at 0.01 ms per execution) of a one-launch dense plan.
    expect(byName.get(kernelName(dense[0]))!.inner).toBe(2);
    expect(binding.launches.filter((l) => l.inGraph && l.name === kernelName(dense[0]))).toHaveLength(2 * (GRAPH_WARM_REPLAYS + 3));
    expect(result.best!.kernelName).toBe([...dense.map(kernelName)].sort()[0]);
    // Verification: top 3 until 3 pass = all three here, every one passing.
    for (const c of result.candidates) expect(c.verify?.pass, c.kernelName).toBe(true);
    // Stream order of the split_c plan: every conv launch is directly followed by its reduce.
    const names = binding.launches.map((l) => l.name);
    const convAt = names.map((n, i) => (n === kernelName(split) ? i : -1)).filter((i) => i >= 0);
    expect(convAt.length).toBeGreaterThan(3);
    for (const i of convAt) expect(names[i + 1]).toBe(reduceName(helperSpecs('sm_90').find((h) => h.dtype === 'bf16' && h.vectorWidth === 8)!));
    expect(binding.liveAllocations()).toBe(0);
    // sm_90: every conv and reduce launch is a programmatic dependent launch (both kernels wait at entry).
    const kernelsRun = binding.launches.filter((l) => l.name !== 'rocke_spin');
    expect(kernelsRun.length).toBeGreaterThan(0);
    expect(kernelsRun.every((l) => l.programmatic)).toBe(true);
  });

  it('a fused-epilogue manifest: bias and residual bound, every candidate verified against the fp64 epilogue, a dropped bias fails', async () => {
    const epilogue = { act: 'silu', bias: 'fp32', residual: true } as const;
    const { dir, dense, split } = kernelsDir();
    const fusedDense = dense.map((s) => ({ ...s, epilogue }));
    const helpers = helperSpecs('sm_90').map((s) => ({ ...s, epilogue }));
    const blobs = new KernelCache(dir);
    const code = (text: string) => ({ ...blobs.putBlob(text), kind: 'cubin' as const });
    const candidates = [...fusedDense, split].map((spec) => ({ kernelName: kernelName(spec), variant: spec.variant, spec: { ...spec }, code: code(`cubin of ${kernelName(spec)}`), score: 1 }));
    const manifest = parseBenchManifest({
      format: 1, target: 'sm_90', cap: 40, toolchain: 'test', epilogue,
      shapes: [{ name: 'small', cls: 'small-map', problem: { ...PROBLEM }, candidates, available: { dense: 2, split_c: 1 }, notes: [] }],
      helpers: helpers.map((spec) => ({ kernelName: reduceName(spec), spec: { ...spec }, code: code(`cubin of ${reduceName(spec)}`) })),
    });
    const fakes: Record<string, FakeKernel | null> = { rocke_spin: null };
    fakes[kernelName(fusedDense[0]!)] = fakeConvKernel('dense', BAKED, 0, epilogue);
    fakes[kernelName(fusedDense[1]!)] = fakeConvKernel('dense', BAKED, 0, epilogue, true); // forgets the bias
    fakes[kernelName(split)] = fakeConvKernel('split_c', BAKED);
    for (const h of helpers) fakes[reduceName(h)] = fakeReduceKernel(h.dtype, epilogue);
    const binding = createFakeBinding({ kernels: fakes, msPerLaunch: 0.01 });
    const device = openDevice({ binding });
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, blobs, { verify: true, warmup: 1, iters: 3, verifySample: 4, targetRepMs: 0.02, epilogue });
    device.close();
    const byName = new Map(result.candidates.map((c) => [c.kernelName, c]));
    expect(byName.get(kernelName(fusedDense[0]!))!.verify?.pass).toBe(true);
    expect(byName.get(kernelName(fusedDense[1]!))!.verify?.pass).toBe(false);
    expect(byName.get(kernelName(split))!.verify?.pass).toBe(true); // the fused reduce after the fold
    expect(result.best!.kernelName).toBe(kernelName(fusedDense[0]!));
    expect(binding.liveAllocations()).toBe(0);
  });

  it('launches plainly when programmatic launches are turned off (ROCKE_BENCH_PDL=0)', async () => {
    const { dir, dense, split } = kernelsDir();
    const binding = createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01 });
    const device = openDevice({ binding });
    const { manifest } = kernelsDir();
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: false, warmup: 1, iters: 2, targetRepMs: 0.02, programmatic: false });
    device.close();
    expect(result.status).toBe('ok');
    expect(binding.launches.some((l) => l.programmatic)).toBe(false);
  });

  it('times the conv and reduce launches of a best split_c plan alone as well', async () => {
    const { dir, dense, split } = kernelsDir();
    const binding = createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01 });
    const device = openDevice({ binding });
    const { manifest } = kernelsDir();
    const shape = { ...manifest.shapes[0]!, candidates: manifest.shapes[0]!.candidates.filter((c) => c.kernelName === kernelName(split)) };
    const { result } = await benchShape(planner, device, shape, manifest.helpers, new KernelCache(dir), { verify: false, warmup: 1, iters: 3, targetRepMs: 0.02 });
    device.close();
    expect(result.best!.kernelName).toBe(kernelName(split));
    // Fake time is 0.01 ms per launch: one conv and one reduce launch per execution, each alone 0.01 ms.
    expect(result.best!.roleMs!.map((r) => r.role)).toEqual(['conv', 'reduce']);
    for (const r of result.best!.roleMs!) expect(r.medianMs).toBeCloseTo(0.01, 9);
    // Two more timings (conv alone, reduce alone), each its own graph: warm replays + 3 timed launches.
    const timings = splitTrials(split, PROBLEM).length + 2;
    expect(binding.calls.filter((c) => c === 'beginCapture')).toHaveLength(timings);
    expect(binding.calls.filter((c) => c === 'launchGraph')).toHaveLength(timings * (GRAPH_WARM_REPLAYS + 3));
    // The last two graphs hold one role each: the reduce-alone graph replays only reduce launches.
    const last = binding.launches.slice(-2 * (GRAPH_WARM_REPLAYS + 3));
    expect(new Set(last.map((l) => l.name))).toEqual(new Set([reduceName(helperSpecs('sm_90').find((h) => h.dtype === 'bf16' && h.vectorWidth === 8)!)]));
    expect(binding.launches.filter((l) => l.name === 'rocke_spin')).toHaveLength(0);
  });

  it('falls back to the spin kernel when the driver cannot capture graphs, and says so', async () => {
    const { dir, dense, split, manifest } = kernelsDir();
    const binding = createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01, graphs: false });
    const device = openDevice({ binding });
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: false, warmup: 1, iters: 3, targetRepMs: 0.02 });
    device.close();
    expect(result.status).toBe('ok');
    expect(result.candidates.every((c) => c.timing === 'spin')).toBe(true);
    expect(result.notes).toEqual([expect.stringMatching(/^timed with the spin method instead of a graph: the cuda library cannot capture graphs \(it lacks .*cuGraphLaunch/)]);
    // Every repetition of every plan (dense, split trials, then the best's roles alone) behind the spin kernel.
    const trials = splitTrials(split, PROBLEM).length;
    expect(binding.launches.filter((l) => l.name === 'rocke_spin')).toHaveLength(3 * (2 + trials));
    expect(binding.calls).not.toContain('beginCapture');
    expect(result.candidates.find((c) => c.kernelName === kernelName(dense[0]))!.medianMs).toBeCloseTo(0.01, 9);
  });

  it('a capture that fails is noted once, and the rest of the shape is timed behind the spin kernel', async () => {
    const { dir, dense, split, manifest } = kernelsDir();
    const fake = createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01 });
    const binding = {
      ...fake,
      endCapture(handle: unknown): never {
        fake.abortCapture(handle as never);
        throw Object.assign(new Error('cuGraphInstantiateWithFlags failed'), { rockeBackend: 'cuda', rockeApi: 'cuGraphInstantiateWithFlags', rockeCode: 801, rockeErrorName: 'CUDA_ERROR_NOT_SUPPORTED', rockeRuntimeMessage: 'operation not supported' });
      },
    };
    const device = openDevice({ binding });
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: true, warmup: 1, iters: 2, verifySample: 0, targetRepMs: 0.02 });
    device.close();
    expect(result.status).toBe('ok');
    expect(result.candidates.every((c) => c.timing === 'spin' && c.verify?.pass)).toBe(true);
    expect(result.notes).toEqual(['timed with the spin method instead of a graph: graph capture failed: cuGraphInstantiateWithFlags failed: CUDA_ERROR_NOT_SUPPORTED (operation not supported) [cuda error 801]']);
    expect(fake.calls.filter((c) => c === 'beginCapture')).toHaveLength(1); // not retried for the later plans
    expect(fake.launches.some((l) => l.inGraph)).toBe(false);
  });

  it('never ranks a candidate that fails verification, and reports it as a failure', async () => {
    const { dir, dense, split } = kernelsDir();
    const broken = [...dense.map(kernelName)].sort()[0]!; // the one that would win on time
    const binding = createFakeBinding({ kernels: kernels(dense, split, broken), msPerLaunch: 0.01 });
    const out = io();
    const r = await gpuBench(planner, request(dir), out, { binding, shape: FAST });
    expect(r.failures).toBe(1);
    expect(r.rows).toHaveLength(1);
    expect((r.rows[0] as { kernel: string }).kernel).not.toBe(broken);
    expect((r.rows[0] as { kernel: string }).kernel).toBe([...dense.map(kernelName)].sort()[1]);
    const table = out.err.join('');
    expect(table).toContain('1 other candidate(s) FAILED');
    expect(table).toMatch(/verify FAIL \(full, \d+ mismatches/);
  });

  it('skips the rest of a shape when a kernel leaves the context unusable, and reruns without it', async () => {
    const { dir, dense, split, manifest } = kernelsDir();
    const bad = kernelName(dense[0]);
    const sticky = () => {
      let dead = false;
      const ks = kernels(dense, split);
      ks[bad] = (ctx) => {
        dead = true;
        ctx.memory(0n, 4); // an illegal address, as a broken kernel would touch
      };
      const fake = createFakeBinding({ kernels: ks });
      // CUDA errors such as illegal addresses are sticky: every later call fails too.
      return {
        ...fake,
        synchronize(handle: unknown) {
          if (dead) throw Object.assign(new Error('cuCtxSynchronize failed'), { rockeBackend: 'cuda', rockeApi: 'cuCtxSynchronize', rockeCode: 700, rockeErrorName: 'CUDA_ERROR_ILLEGAL_ADDRESS', rockeRuntimeMessage: 'an illegal memory access was encountered' });
          return fake.synchronize(handle as never);
        },
      };
    };
    const first = openDevice({ binding: sticky() });
    const lost = (await benchShape(planner, first, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: true, warmup: 1, iters: 2, ...FAST })).result;
    expect(lost.status).toBe('failed');
    expect(lost.contextLostBy).toBe(bad);
    expect(lost.candidates[0]!.error).toContain('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(lost.candidates.slice(1).every((c) => c.skipped?.startsWith(`the GPU context is unusable after ${bad}`))).toBe(true);
    // A fresh process (here: a fresh binding) without the culprit ranks the others.
    const second = openDevice({ binding: sticky() });
    const again = (await benchShape(planner, second, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: true, warmup: 1, iters: 2, ...FAST, exclude: new Map([[bad, 'killed the context before']]) })).result;
    expect(again.status).toBe('ok');
    expect(again.candidates[0]!.error).toBe('excluded: killed the context before');
    expect(again.ranking).not.toContain(bad);
    expect(again.ranking).toHaveLength(2);
  });

  it('stops timing at the count cap and says why', async () => {
    const { dir, dense, split, manifest } = kernelsDir();
    const device = openDevice({ binding: createFakeBinding({ kernels: kernels(dense, split) }) });
    const { result } = await benchShape(planner, device, manifest.shapes[0]!, manifest.helpers, new KernelCache(dir), { verify: false, warmup: 1, iters: 2, maxCandidates: 2, targetRepMs: 0.001, spinKernel: false, graphs: false });
    device.close();
    expect(result.candidates.map((c) => c.skipped ?? 'timed')).toEqual(['timed', 'timed', 'count cap 2']);
    expect(result.candidates[0]!.timing).toBe('plain'); // neither a graph nor the spin kernel: asked for neither
    expect(result.best).toBeDefined();
  });

  it('joins cuDNN times: ratio = cudnn_ms / ours_ms, rows pass the report schema', async () => {
    const { dir, dense, split } = kernelsDir();
    const fakePython = join(dir, 'fake-cudnn.mjs');
    writeFileSync(
      fakePython,
      `import { readFileSync, writeFileSync } from 'node:fs';
const [suite, out] = process.argv.slice(2);
const shapes = JSON.parse(readFileSync(suite, 'utf8')).shapes;
console.log('fake cudnn', shapes.length);
writeFileSync(out, JSON.stringify({ rows: shapes.map((s) => ({ name: s.name, ms_median: 0.025 })) }));`,
    );
    const out = io({ ROCKE_BENCH_OUT: join(dir, 'out') });
    const r = await gpuBench(planner, request(dir, { vsCudnn: true }), out, { binding: createFakeBinding({ kernels: kernels(dense, split), msPerLaunch: 0.01 }), python: process.execPath, cudnnScript: fakePython, shape: FAST });
    expect(r.failures).toBe(0);
    const summary = summarizeBench(r.rows);
    expect(summary.rows[0]!.ratio).toBeCloseTo(2.5, 9);
    expect(summary.classes).toEqual([{ class: 'small-map', count: 1, geomean: summary.rows[0]!.ratio }]);
    const text = out.err.join('');
    expect(text).toContain('2.50x');
    expect(text).toMatch(/small-map\s+1\s+2\.500x/);
    const tableFile = readFileSync(join(dir, 'out', 'bench-table.txt'), 'utf8');
    expect(tableFile).toContain('2.50x');
    expect(text.endsWith(tableFile)).toBe(true);
    const details = JSON.parse(readFileSync(join(dir, 'out', 'bench-details.json'), 'utf8'));
    expect(details.shapes[0].candidates).toHaveLength(3);
    // Without the script's output for a shape, the shape counts as a failure and has no row.
    writeFileSync(fakePython, `import { writeFileSync } from 'node:fs'; writeFileSync(process.argv[3], JSON.stringify({ rows: [] }));`);
    const r2 = await gpuBench(planner, request(dir, { vsCudnn: true }), io(), { binding: createFakeBinding({ kernels: kernels(dense, split) }), python: process.execPath, cudnnScript: fakePython, shape: FAST });
    expect(r2.rows).toHaveLength(0);
    expect(r2.failures).toBe(1);
  });


  it('refuses kernels for another architecture and a shape the manifest lacks, with reasons', async () => {
    const { dir, dense, split } = kernelsDir();
    const amd = createFakeBinding({ backend: 'hip', devices: [{ arch: 'gfx950', name: 'fake MI355X' }], kernels: kernels(dense, split) });
    await expect(gpuBench(planner, request(dir), io(), { binding: amd })).rejects.toThrow('the device is fake MI355X (gfx950); the kernels are for sm_90');
    const other = { ...PROBLEM, K: 32 };
    const out = io();
    const r = await gpuBench(planner, request(dir, { problems: [{ name: 'other', problem: other, cls: 'dense' }] }), out, { binding: createFakeBinding({ kernels: kernels(dense, split) }) });
    expect(r.failures).toBe(1);
    expect(out.err.join('')).toContain('no compiled candidates for this shape');
  });
});

describe('bench helpers', () => {
  it('ranks by median time then name, leaving out errors and failed verification', () => {
    const c = (kernelName: string, medianMs?: number, extra: Partial<CandidateResult> = {}): CandidateResult => ({ kernelName, variant: 'dense', ...(medianMs === undefined ? {} : { medianMs }), ...extra });
    const fail = { pass: false, mode: 'full', count: 1, mismatches: 1, maxAbs: 1, maxRel: 1, worstRatio: 9 };
    const ranked = rankCandidates([c('b', 2), c('a', 2), c('fast-but-wrong', 1, { verify: fail }), c('broken', 0.5, { error: 'x' }), c('untimed'), c('c', 3)]);
    expect(ranked.map((r) => r.kernelName)).toEqual(['a', 'b', 'c']);
  });

  it('samples evenly spaced indices, first and last included', () => {
    expect(evenlySpaced(10, 4)).toEqual([0, 3, 6, 9]);
    expect(evenlySpaced(3, 5)).toEqual([0, 1, 2]);
    expect(evenlySpaced(7, 1)).toEqual([0]);
    expect(evenlySpaced(0, 4)).toEqual([]);
  });

  it('writes suite shapes for the cuDNN script and reads its medians', () => {
    expect(suiteShape('a', 'dense', PROBLEM)).toMatchObject({ name: 'a', stride: 1, pad: 1, groups: 1, dtype: 'bf16' });
    expect(suiteShape('a', null, { ...PROBLEM, strideW: 2 })).toMatch(/one stride/);
    expect([...parseCudnnRows({ rows: [{ name: 'a', ms_median: 0.5 }, { name: 'b', ms_median: -1 }, { ms_median: 2 }] })]).toEqual([['a', 0.5]]);
    expect(() => parseCudnnRows({})).toThrow(/rows/);
  });
});
