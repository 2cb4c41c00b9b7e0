// The real addon driven against test-support/mock-libcuda.c, a CPU stand-in for libcuda.so.1:
// proves the native layer's calls (context handling, the packed `extra` launch buffer, the
// shared-memory opt-in, JIT logs, error strings, release order, finalizers) without a GPU.
// The addon keeps the CUDA library it loaded for the whole process; vitest runs each test file
// in its own process, so the mock never leaks into other suites.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockLibrary, compilerMissing, type MockLibrary } from '../test-support/mock-library.js';
import { getBinding } from './binding.js';
import { GpuRuntimeError, GpuUsageError } from './errors.js';
import type { KernargSignature } from './kernargs.js';
import { packKernargs } from './kernargs.js';
import type { Device } from './runtime.js';
import { elapsedMs, openDevice } from './runtime.js';

const packageRoot = join(import.meta.dirname, '..');

let mock: MockLibrary;
let device: Device;
const log = () => mock.log();
const clearLog = () => mock.clearLog();

const ewSignature: KernargSignature = [
  { name: 'y', type: 'ptr' },
  { name: 'x', type: 'ptr' },
  { name: 'n', type: 'i32' },
  { name: 'base', type: 'i64' },
  { name: 'a', type: 'f32' },
  { name: 'idx', type: 'ptr' },
];
const reverseSignature: KernargSignature = [
  { name: 'out', type: 'ptr' },
  { name: 'in', type: 'ptr' },
  { name: 'count', type: 'i32' },
];

describe.skipIf(compilerMissing)('native addon over a mock libcuda', () => {
  beforeAll(() => {
    mock = buildMockLibrary('mock-libcuda.c', 'MOCK_CUDA_LOG');
    device = openDevice({ backend: 'cuda', env: { ROCKE_CUDA_LIB: mock.path } });
  });
  afterAll(() => {
    mock.remove();
  });

  it('reads the device facts through cuDeviceGetAttribute and friends', () => {
    expect(device.info).toEqual({
      backend: 'cuda',
      index: 0,
      name: 'Mock CUDA device',
      arch: 'sm_90',
      archFull: 'sm_90',
      computeUnits: 132,
      totalMemory: 2 ** 34,
      warpSize: 32,
      maxThreadsPerBlock: 1024,
      maxBlockDim: [1024, 1024, 64],
      maxGridDim: [2147483647, 65535, 65535],
      maxSharedPerBlock: 49152,
      maxSharedPerBlockOptin: 232448,
      driverVersion: 13000,
    });
  });

  it('copies, fills and device-to-device copies with the context current', () => {
    const a = device.upload(Float64Array.of(1.5, -2, 3.25));
    const b = device.alloc(32).fill(0xab);
    b.copyFrom(a, 8, 0, 24);
    const out = new Float64Array(4);
    b.read(out);
    expect([...new Uint8Array(out.buffer, 0, 8)]).toEqual(Array(8).fill(0xab));
    expect([...out.subarray(1)]).toEqual([1.5, -2, 3.25]);
    a.free();
    b.free();
  });

  it('launches with the packed buffer through CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE', () => {
    clearLog();
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.ptx')));
    const ew = module.getFunction('ew', ewSignature);
    const n = 1000;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i / 8));
    const y = device.alloc(n * 4);
    const idx = device.alloc(n * 8);
    const values = [y, x, n, 2n ** 40n + 1n, -3, idx] as const;
    ew.launch(Math.ceil(n / 128), 128, values);
    const expectedArgs = Buffer.from(packKernargs(ewSignature, values).bytes).toString('hex');
    expect(log()).toContain(`launch ew grid=8,1,1 block=128,1,1 shared=0 stream=default size=48 args=${expectedArgs}`);
    const ys = y.read(new Float32Array(n));
    const is = idx.read(new BigInt64Array(n));
    expect(ys.every((v, i) => v === Math.fround(-3 * (i / 8) + 1))).toBe(true);
    expect(is.every((v, i) => v === 2n ** 40n + 1n + BigInt(i))).toBe(true);
  });

  it('launches programmatically through cuLaunchKernelEx with the stream-serialization attribute, and runs the kernel the same', () => {
    clearLog();
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.ptx')));
    const ew = module.getFunction('ew', ewSignature);
    const n = 256;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i));
    const y = device.alloc(n * 4);
    const idx = device.alloc(n * 8);
    const values = [y, x, n, 0n, 2, idx] as const;
    device.launch(ew, 2, 128, values, { programmatic: true });
    const lines = log().filter((l) => l.startsWith('launch'));
    expect(lines[0]).toBe('launchex attr programmatic_stream_serialization=1');
    expect(lines[1]).toMatch(/^launch ew grid=2,1,1 block=128,1,1 shared=0 stream=default size=48 /);
    expect([...y.read(new Float32Array(n))].every((v, i) => v === 2 * i + 1)).toBe(true);
    // A plain launch does not go through cuLaunchKernelEx.
    clearLog();
    device.launch(ew, 2, 128, values);
    expect(log().filter((l) => l.startsWith('launchex'))).toEqual([]);
    for (const b of [x, y, idx]) b.free();
  });

  it('opts in to dynamic shared memory above 48 KiB, once per size', () => {
    clearLog();
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const fn = module.getFunction('smem_reverse', reverseSignature);
    const run = (sharedBytes: number) => {
      const count = sharedBytes / 4;
      const input = device.upload(Float32Array.from({ length: count }, (_, i) => i));
      const output = device.alloc(sharedBytes);
      fn.launch(1, 1024, [output, input, count], { sharedBytes });
      const out = output.read(new Float32Array(count));
      expect(out[0]).toBe(count - 1);
      expect(out[count - 1]).toBe(0);
      input.free();
      output.free();
    };
    run(40 * 1024);
    run(96 * 1024);
    run(64 * 1024);
    const lines = log().filter((l) => l.startsWith('setattr') || l.startsWith('launch'));
    expect(lines.map((l) => l.split(' args=')[0])).toEqual([
      'launch smem_reverse grid=1,1,1 block=1024,1,1 shared=40960 stream=default size=20',
      'setattr smem_reverse max_dynamic_shared=98304',
      'launch smem_reverse grid=1,1,1 block=1024,1,1 shared=98304 stream=default size=20',
      'launch smem_reverse grid=1,1,1 block=1024,1,1 shared=65536 stream=default size=20',
    ]);
  });

  it('a fresh function opts in to exactly the size of its first launch over 48 KiB', () => {
    // The mock, like the driver, refuses dynamic shared memory above the function's ceiling.
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const fn = module.getFunction('smem_reverse', reverseSignature);
    const input = device.alloc(49156);
    const output = device.alloc(49156);
    clearLog();
    fn.launch(1, 32, [output, input, 12289], { sharedBytes: 49156 });
    expect(log()[0]).toBe('setattr smem_reverse max_dynamic_shared=49156');
  });

  it('captures the JIT error log of a PTX that does not compile', () => {
    let error: unknown;
    try {
      device.loadModule('.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken() {\n not_an_instruction;\n ret;\n}\n');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuRuntimeError);
    expect(error).toMatchObject({ api: 'cuModuleLoadDataEx', code: 218, errorName: 'CUDA_ERROR_INVALID_PTX', runtimeMessage: 'a PTX JIT compilation failed' });
    expect((error as GpuRuntimeError).log).toBe("ptxas application ptx input, line 5; error   : Unknown symbol 'not_an_instruction'");
  });

  it('turns driver errors into GpuRuntimeError with cuGetErrorName / cuGetErrorString', () => {
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.ptx')));
    expect(() => module.getFunction('absent')).toThrow('cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named symbol not found) [cuda error 500]');
  });

  it('times with events on a stream (the mock clock counts 2 us per launch)', () => {
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const empty = module.getFunction('empty', []);
    const stream = device.createStream();
    const start = device.createEvent().record(stream);
    for (let i = 0; i < 10; i++) empty.launch(1, 1, [], { stream });
    const end = device.createEvent().record(stream);
    end.synchronize();
    expect(elapsedMs(start, end)).toBeCloseTo(0.02, 6);
    stream.synchronize();
  });

  it('captures default-stream launches on a non-blocking stream and replays them with cuGraphLaunch', () => {
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const ew = module.getFunction('ew', ewSignature);
    const empty = module.getFunction('empty', []);
    const n = 64;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i));
    const y = device.alloc(n * 4).fill(0);
    const idx = device.alloc(n * 8);
    clearLog();
    const graph = device.captureGraph(() => {
      ew.launch(1, n, [y, x, n, 5n, 2, idx]);
      empty.launch(1, 1, []);
    });
    expect(graph.launches).toBe(2);
    expect(log()).toEqual([
      'stream created non-blocking',
      'begin capture mode=1', // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
      'capture ew grid=1,1,1 size=48',
      'capture empty grid=1,1,1 size=0',
      'end capture nodes=2',
      'stream destroyed',
      'instantiate nodes=2',
      'graph destroyed', // the executable does not need the graph
    ]);
    expect(y.read(new Float32Array(n)).every((v) => v === 0)).toBe(true); // captured, not run
    clearLog();
    const start = device.createEvent().record();
    for (let i = 0; i < 3; i++) graph.launch();
    const end = device.createEvent().record();
    end.synchronize();
    expect(elapsedMs(start, end)).toBeCloseTo(0.012, 6); // 6 kernels at the mock's 2 us
    expect(log()).toEqual(Array(3).fill('graph launch nodes=2 stream=default'));
    expect(y.read(new Float32Array(n)).every((v, i) => v === 2 * i + 1)).toBe(true);
    expect(idx.read(new BigInt64Array(n)).every((v, i) => v === 5n + BigInt(i))).toBe(true);
    graph.destroy();
    expect(log().at(-1)).toBe('graph exec destroyed');
    for (const b of [x, y, idx]) b.free();
  });

  it('a failing instantiation is a GpuRuntimeError naming cuGraphInstantiateWithFlags; nothing is left capturing', () => {
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const empty = module.getFunction('empty', []);
    process.env['MOCK_CUDA_FAIL_INSTANTIATE'] = '1';
    let error: unknown;
    clearLog();
    try {
      device.captureGraph(() => empty.launch(1, 1, []));
    } catch (e) {
      error = e;
    } finally {
      delete process.env['MOCK_CUDA_FAIL_INSTANTIATE'];
    }
    expect(error).toBeInstanceOf(GpuRuntimeError);
    expect(error).toMatchObject({ api: 'cuGraphInstantiateWithFlags', code: 801, errorName: 'CUDA_ERROR_NOT_SUPPORTED', runtimeMessage: 'operation not supported' });
    expect(log().slice(-3)).toEqual(['end capture nodes=1', 'stream destroyed', 'graph destroyed']);
    clearLog();
    empty.launch(1, 1, []); // runs on the default stream again (the mock refuses it while a blocking stream captures)
    expect(log()).toEqual(['launch empty grid=1,1,1 block=1,1,1 shared=0 stream=default size=0 args=']);
    expect(device.captureGraph(() => empty.launch(1, 1, [])).launches).toBe(1);
  });

  it('an error inside the body ends and discards the capture, then rethrows', () => {
    const module = device.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const empty = module.getFunction('empty', []);
    clearLog();
    expect(() =>
      device.captureGraph(() => {
        empty.launch(1, 1, []);
        throw new RangeError('planning failed');
      }),
    ).toThrow('planning failed');
    expect(log()).toEqual(['stream created non-blocking', 'begin capture mode=1', 'capture empty grid=1,1,1 size=0', 'end capture nodes=1', 'graph destroyed', 'stream destroyed']);
  });

  it('the native layer refuses a stream inside a capture, nested and unmatched captures; closing ends a capture', () => {
    const binding = getBinding();
    const deviceHandle = binding.openDevice('cuda', 0);
    const module = binding.loadModule(deviceHandle, readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    const empty = binding.getFunction(module, 'empty').handle;
    const stream = binding.createStream(deviceHandle);
    expect(binding.graphSupport('cuda')).toEqual({ supported: true, missing: '' });
    expect(() => binding.endCapture(deviceHandle)).toThrow(expect.objectContaining({ message: 'no graph capture is in progress on this device', rockeUsage: true }));
    binding.beginCapture(deviceHandle);
    expect(() => binding.beginCapture(deviceHandle)).toThrow(/already in progress/);
    expect(() => binding.launch(empty, 1, 1, 1, 1, 1, 1, 0, stream, new Uint8Array(0))).toThrow(/launches take no stream/);
    clearLog();
    binding.closeDevice(deviceHandle);
    expect(log().slice(0, 3)).toEqual(['end capture nodes=0', 'graph destroyed', 'stream destroyed']);
    binding.abortCapture(deviceHandle); // a no-op on a closed device
  });

  it('the native layer itself rejects freed buffers, wrong handle kinds and out-of-range copies', () => {
    const binding = getBinding();
    const deviceHandle = binding.openDevice('cuda', 0);
    const { handle } = binding.alloc(deviceHandle, 64);
    expect(() => binding.copyToDevice(handle, 60, new Uint8Array(8))).toThrow(/bytes \[60, 68\) fall outside the 64-byte buffer/);
    expect(() => binding.copyToDevice(deviceHandle, 0, new Uint8Array(8))).toThrow(/is not a native buffer handle/);
    binding.free(handle);
    binding.free(handle);
    expect(() => binding.copyFromDevice(handle, 0, new Uint8Array(8))).toThrow(expect.objectContaining({ message: 'the buffer was freed', rockeUsage: true }));
    binding.closeDevice(deviceHandle);
    expect(() => binding.alloc(deviceHandle, 8)).toThrow(/the device is closed/);
  });

  it('closing a device releases events and streams before modules and memory, then the context', () => {
    const other = openDevice({ backend: 'cuda', env: {} }); // the loaded backend is reused
    const buffer = other.alloc(128);
    other.loadModule(readFileSync(join(packageRoot, 'device', 'kernels.cubin')));
    other.createStream();
    other.createEvent();
    clearLog();
    other.close();
    const lines = log();
    expect(lines.indexOf('event destroyed')).toBeLessThan(lines.indexOf('stream destroyed'));
    expect(lines.indexOf('stream destroyed')).toBeLessThan(lines.indexOf('unload'));
    expect(lines.indexOf('unload')).toBeLessThan(lines.findIndex((l) => l.startsWith('free')));
    expect(lines.at(-1)).toMatch(/^release refs=\d+ live=\d+$/);
    expect(() => buffer.read(new Uint8Array(4))).toThrow(GpuUsageError);
  });

  it('a buffer that is garbage-collected without free() is freed by its finalizer', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collect = async () => {
      for (let i = 0; i < 5; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await collect(); // finalize what earlier tests dropped
    clearLog();
    (() => {
      device.alloc(4096);
    })();
    expect(log().filter((l) => l.startsWith('free'))).toHaveLength(0);
    await collect();
    expect(log().filter((l) => l.startsWith('free'))).toHaveLength(1);
  });
});
