// H200 smoke test of @rocke/hip-runtime. Run from the repository root on the GPU machine
// (needs packages/hip-runtime/dist and build/Release built elsewhere; no npm install):
//   node packages/hip-runtime/device/smoke.mjs
// Prints PASS/FAIL lines and the launch rates; exits 1 when any check fails.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { elapsedMs, GpuRuntimeError, GpuUsageError, openDevice, packKernargs } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
let failures = 0;

function report(name, ok, detail = '') {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures++;
}

// Runs one check; an exception is a FAIL with its message, never an abort of the whole run.
function step(name, body) {
  try {
    body();
  } catch (error) {
    report(name, false, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

function expectThrow(name, ErrorClass, body, extra = () => true) {
  try {
    body();
    report(name, false, 'no error was thrown');
  } catch (error) {
    const ok = error instanceof ErrorClass && extra(error);
    report(name, ok, `${error?.name}: ${String(error?.message).split('\n')[0]}`);
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// Medians over runs of {gpuMs, hostMs}: the two clocks every launch-rate line reports.
function medianTimes(runs) {
  return { gpuMs: median(runs.map((r) => r.gpuMs)), hostMs: median(runs.map((r) => r.hostMs)) };
}

// Times `launchOne(i)` for i < 1000, 7 times: GPU events around the batch and the host time to
// enqueue it. Returns the medians.
function timeThousandLaunches(launchOne) {
  const runs = [];
  for (let r = 0; r < 7; r++) {
    const start = device.createEvent();
    const end = device.createEvent();
    const t0 = performance.now();
    start.record();
    for (let i = 0; i < 1000; i++) launchOne(i);
    end.record();
    const t1 = performance.now();
    end.synchronize();
    runs.push({ gpuMs: elapsedMs(start, end), hostMs: t1 - t0 });
    start.destroy();
    end.destroy();
  }
  return medianTimes(runs);
}

// bf16 bits of a float that bf16 holds exactly (small integers here): the top half of the f32.
function bf16Bits(value) {
  const f = new Float32Array([value]);
  return new Uint32Array(f.buffer)[0] >>> 16;
}

let device;
step('open CUDA device', () => {
  device = openDevice({ backend: 'cuda', index: 0 });
  console.log(`device: ${JSON.stringify(device.info)}`);
  report('open CUDA device', device.info.arch.startsWith('sm_') && device.info.computeUnits > 0, `${device.info.name}, ${device.info.arch}, ${device.info.computeUnits} SMs`);
});
if (!device) {
  console.log('FAIL no device: the remaining checks cannot run');
  process.exit(1);
}

const ptx = readFileSync(join(here, 'kernels.ptx'));
const cubin = readFileSync(join(here, 'kernels.cubin'));
let ptxModule;
let cubinModule;
step('load PTX (driver JIT) and cubin', () => {
  ptxModule = device.loadModule(ptx);
  cubinModule = device.loadModule(cubin);
  report('load PTX (driver JIT) and cubin', true);
});

const ewSignature = [
  { name: 'y', type: 'ptr' },
  { name: 'x', type: 'ptr' },
  { name: 'n', type: 'i32' },
  { name: 'base', type: 'i64' },
  { name: 'a', type: 'f32' },
  { name: 'idx', type: 'ptr' },
];

step('elementwise kernel (every kernarg type, a view, a stream)', () => {
  const ew = ptxModule.getFunction('ew', ewSignature);
  const n = 100_003; // not a multiple of the block: the tail is guarded
  const a = -1.5;
  const base = -(2n ** 35n) + 7n;
  const x = Float32Array.from({ length: n }, (_, i) => ((i % 17) - 8) / 4);
  const xBuf = device.upload(x);
  const yBuf = device.alloc(256 + n * 4).fill(0);
  const idxBuf = device.alloc(n * 8).fill(0);
  const stream = device.createStream();
  const start = device.createEvent().record(stream);
  ew.launch(Math.ceil(n / 256), 256, [yBuf.view(256), xBuf, n, base, a, idxBuf], { stream });
  const end = device.createEvent().record(stream);
  stream.synchronize();
  const y = yBuf.read(new Float32Array(n), 256);
  const idx = idxBuf.read(new BigInt64Array(n));
  let bad = 0;
  for (let i = 0; i < n; i++) {
    if (y[i] !== Math.fround(Math.fround(a * x[i]) + 1) || idx[i] !== base + BigInt(i)) bad++;
  }
  const head = yBuf.read(new Uint8Array(256));
  report('elementwise kernel (every kernarg type, a view, a stream)', bad === 0 && head.every((b) => b === 0), `${bad}/${n} mismatches, ${elapsedMs(start, end).toFixed(3)} ms, bytes before the view untouched: ${head.every((b) => b === 0)}`);
  for (const b of [xBuf, yBuf, idxBuf]) b.free();
  stream.destroy();
});

function runMma(module, label) {
  const M = 64, N = 32, K = 128;
  const A = Float64Array.from({ length: M * K }, (_, i) => ((i * 7 + 3) % 9) - 4);
  const B = Float64Array.from({ length: K * N }, (_, i) => ((i * 5 + 1) % 9) - 4); // B[k][n]
  const aBits = Uint16Array.from(A, bf16Bits);
  const btBits = new Uint16Array(N * K);
  for (let k = 0; k < K; k++) for (let c = 0; c < N; c++) btBits[c * K + k] = bf16Bits(B[k * N + c]);
  const aBuf = device.upload(aBits);
  const bBuf = device.upload(btBits);
  const dBuf = device.alloc(M * N * 4).fill(0xff);
  const fn = module.getFunction('mma_gemm', [
    { name: 'A', type: 'ptr' },
    { name: 'Bt', type: 'ptr' },
    { name: 'D', type: 'ptr' },
    { name: 'M', type: 'i32' },
    { name: 'N', type: 'i32' },
    { name: 'K', type: 'i32' },
  ]);
  fn.launch([N / 8, M / 16], 32, { A: aBuf, Bt: bBuf, D: dBuf, M, N, K });
  device.synchronize();
  const D = dBuf.read(new Float32Array(M * N));
  let bad = 0;
  for (let r = 0; r < M; r++) {
    for (let c = 0; c < N; c++) {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += A[r * K + k] * B[k * N + c];
      if (D[r * N + c] !== sum) bad++;
    }
  }
  report(`mma.sync m16n8k16 bf16 GEMM 64x32x128 (${label})`, bad === 0, `${bad}/${M * N} mismatches vs CPU, ${fn.attributes.numRegs} registers`);
  for (const b of [aBuf, bBuf, dBuf]) b.free();
}
step('mma.sync m16n8k16 bf16 GEMM (PTX)', () => runMma(ptxModule, 'PTX'));
step('mma.sync m16n8k16 bf16 GEMM (cubin)', () => runMma(cubinModule, 'cubin'));

function reverseThroughShared(sharedBytes) {
  const fn = cubinModule.getFunction('smem_reverse', [
    { name: 'out', type: 'ptr' },
    { name: 'in', type: 'ptr' },
    { name: 'count', type: 'i32' },
  ]);
  const count = sharedBytes / 4;
  const input = Float32Array.from({ length: count }, (_, i) => i * 0.5 - 3);
  const inBuf = device.upload(input);
  const outBuf = device.alloc(sharedBytes).fill(0);
  fn.launch(1, 1024, [outBuf, inBuf, count], { sharedBytes });
  device.synchronize();
  const out = outBuf.read(new Float32Array(count));
  let bad = 0;
  for (let i = 0; i < count; i++) if (out[i] !== input[count - 1 - i]) bad++;
  report(`dynamic shared memory ${sharedBytes} bytes (opt-in above 48 KiB)`, bad === 0, `${bad}/${count} mismatches`);
  inBuf.free();
  outBuf.free();
}
step('dynamic shared memory 96 KiB', () => reverseThroughShared(96 * 1024));
step('dynamic shared memory at the opt-in maximum', () => reverseThroughShared(Math.floor(device.info.maxSharedPerBlockOptin / 4) * 4));

step('JIT log captured for a broken PTX', () => {
  const broken = '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken() {\n  not_an_instruction;\n  ret;\n}\n';
  expectThrow('JIT log captured for a broken PTX', GpuRuntimeError, () => device.loadModule(broken), (e) => e.api === 'cuModuleLoadDataEx' && typeof e.log === 'string' && e.log.length > 0);
});
step('missing kernel is a runtime error', () => {
  expectThrow('missing kernel is a runtime error', GpuRuntimeError, () => ptxModule.getFunction('no_such_kernel'), (e) => e.api === 'cuModuleGetFunction' && e.errorName === 'CUDA_ERROR_NOT_FOUND');
});
step('misuse is an error, not a crash', () => {
  const buffer = device.alloc(16);
  buffer.free();
  expectThrow('use after free', GpuUsageError, () => buffer.read(new Uint8Array(16)));
  const empty = cubinModule.getFunction('empty', []);
  expectThrow('block over the device limit', GpuUsageError, () => empty.launch(1, 2048, []));
  expectThrow('wrong kernarg count', GpuUsageError, () => ptxModule.getFunction('ew', ewSignature).launch(1, 32, [1, 2]));
});

// Launch rate: 1000 back-to-back launches of an empty kernel, timed by events and by the host clock.
let ours;
step('launch rate (empty kernel)', () => {
  const empty = cubinModule.getFunction('empty', []);
  const args = packKernargs([], []);
  for (let i = 0; i < 200; i++) empty.launch(1, 32, args);
  device.synchronize();
  ours = timeThousandLaunches(() => empty.launch(1, 32, args));
  report('launch rate (empty kernel)', ours.gpuMs > 0, `1000 launches: events ${ours.gpuMs.toFixed(3)} ms, host ${ours.hostMs.toFixed(3)} ms (median of 7)`);
});

// Same, for a 6-argument kernel whose arguments are packed from values on every launch (n = 0:
// every thread exits at the bounds check), to show what packing in TypeScript costs.
let packedPerLaunch;
step('launch rate (6 arguments packed per launch)', () => {
  const ew = cubinModule.getFunction('ew', ewSignature);
  const buffer = device.alloc(64);
  for (let i = 0; i < 200; i++) ew.launch(1, 32, [buffer, buffer, 0, 0n, 1, buffer]);
  device.synchronize();
  packedPerLaunch = timeThousandLaunches((i) => ew.launch(1, 32, [buffer, buffer, 0, BigInt(i), 1, buffer]));
  buffer.free();
  report('launch rate (6 arguments packed per launch)', packedPerLaunch.gpuMs > 0, `1000 launches: events ${packedPerLaunch.gpuMs.toFixed(3)} ms, host ${packedPerLaunch.hostMs.toFixed(3)} ms (median of 7)`);
});

// Graph capture: captured launches do not run until the graph launches; one graph launch runs them
// all; an error in the body leaves no stream capturing; 1000 empty launches as one graph, timed.
let graphed;
step('graph capture and replay', () => {
  const ew = cubinModule.getFunction('ew', ewSignature);
  const empty = cubinModule.getFunction('empty', []);
  const n = 4096;
  const x = device.upload(Float32Array.from({ length: n }, (_, i) => i % 7));
  const y = device.alloc(n * 4).fill(0);
  const idx = device.alloc(n * 8).fill(0);
  const graph = device.captureGraph(() => {
    ew.launch(n / 256, 256, [y, x, n, 3n, 2, idx]);
    for (let i = 0; i < 9; i++) empty.launch(1, 32, []);
  });
  const untouched = y.read(new Float32Array(n)).every((v) => v === 0);
  graph.launch();
  device.synchronize();
  const ys = y.read(new Float32Array(n));
  const is = idx.read(new BigInt64Array(n));
  let bad = 0;
  for (let i = 0; i < n; i++) if (ys[i] !== 2 * (i % 7) + 1 || is[i] !== 3n + BigInt(i)) bad++;
  report('graph capture and replay', untouched && bad === 0 && graph.launches === 10, `${graph.launches} launches captured, not run before graph.launch(): ${untouched}; ${bad}/${n} mismatches after it`);
  graph.destroy();
  expectThrow('an error inside captureGraph is rethrown', RangeError, () => device.captureGraph(() => { empty.launch(1, 32, []); throw new RangeError('inside'); }));
  empty.launch(1, 32, []);
  device.synchronize();
  report('launches after a failed capture run on the default stream', true);
  const thousand = device.captureGraph(() => {
    for (let i = 0; i < 1000; i++) empty.launch(1, 32, []);
  });
  for (let i = 0; i < 3; i++) thousand.launch();
  device.synchronize();
  const runs = [];
  for (let r = 0; r < 7; r++) {
    const start = device.createEvent();
    const end = device.createEvent();
    const t0 = performance.now();
    start.record();
    thousand.launch();
    end.record();
    const t1 = performance.now();
    end.synchronize();
    runs.push({ gpuMs: elapsedMs(start, end), hostMs: t1 - t0 });
    start.destroy();
    end.destroy();
  }
  graphed = medianTimes(runs);
  thousand.destroy();
  for (const b of [x, y, idx]) b.free();
  report('1000 empty launches as one graph', graphed.gpuMs > 0, `events ${graphed.gpuMs.toFixed(3)} ms, host ${graphed.hostMs.toFixed(3)} ms (median of 7)`);
});

device.close();
step('closed device rejects use', () => {
  expectThrow('closed device rejects use', GpuUsageError, () => device.alloc(16));
});

// PyTorch on the same GPU: 1000 back-to-back launches of a trivial op, same two clocks.
const torchScript = `
import json, time, torch
x = torch.zeros(1, device="cuda")
for _ in range(200): x.add_(1)
torch.cuda.synchronize()
runs = []
for _ in range(7):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter(); s.record()
    for _ in range(1000): x.add_(1)
    e.record(); t1 = time.perf_counter(); e.synchronize()
    runs.append({"gpuMs": s.elapsed_time(e), "hostMs": (t1 - t0) * 1000})
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "runs": runs}))
`;
let torch;
step('PyTorch launch rate (x.add_(1) on a 1-element tensor)', () => {
  const child = spawnSync('python3', ['-c', torchScript], { encoding: 'utf8', timeout: 300_000 });
  if (child.status !== 0) throw new Error(`python3 exited with ${child.status}: ${(child.stderr || child.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`);
  const result = JSON.parse(child.stdout.trim().split('\n').at(-1));
  torch = { ...medianTimes(result.runs), version: result.torch, device: result.device };
  report('PyTorch launch rate (x.add_(1) on a 1-element tensor)', torch.gpuMs > 0, `torch ${torch.version} on ${torch.device}`);
});

const rate = (ms) => `${Math.round(1000 / (ms / 1000)).toLocaleString('en-US')} launches/s`;
if (ours) console.log(`RATE @rocke/hip-runtime empty kernel: ${rate(ours.gpuMs)} (GPU events), ${rate(ours.hostMs)} (host enqueue)`);
if (graphed) console.log(`RATE @rocke/hip-runtime empty kernel, one graph of 1000: ${rate(graphed.gpuMs)} (GPU events), ${rate(graphed.hostMs)} (host enqueue)`);
if (packedPerLaunch) console.log(`RATE @rocke/hip-runtime ew, packed per launch: ${rate(packedPerLaunch.gpuMs)} (GPU events), ${rate(packedPerLaunch.hostMs)} (host enqueue)`);
if (torch) console.log(`RATE PyTorch x.add_(1):              ${rate(torch.gpuMs)} (GPU events), ${rate(torch.hostMs)} (host enqueue)`);
console.log(failures === 0 ? 'ALL PASS' : `${failures} FAILED`);
process.exit(failures === 0 ? 0 : 1);
