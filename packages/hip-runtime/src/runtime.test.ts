import { describe, expect, it } from 'vitest';
import { GpuFeatureUnavailableError, GpuRuntimeError, GpuUsageError, KernargError, RuntimeUnavailableError } from './errors.js';
import type { FakeKernel } from './fake-binding.js';
import { createFakeBinding } from './fake-binding.js';
import type { KernargSignature } from './kernargs.js';
import { packKernargs } from './kernargs.js';
import { elapsedMs, launch, openDevice, probeRuntime } from './runtime.js';

// y[i] = a * x[i] + y[i] for i < n, reading its arguments from the packed buffer by offset.
const axpy: FakeKernel = ({ args, memory, grid, block }) => {
  const y = args.getBigUint64(0, true);
  const x = args.getBigUint64(8, true);
  const a = args.getFloat32(16, true);
  const n = Math.min(args.getInt32(20, true), grid[0] * block[0]);
  const ys = new Float32Array(memory(y, n * 4).slice().buffer);
  const xs = new Float32Array(memory(x, n * 4).slice().buffer);
  for (let i = 0; i < n; i++) ys[i] = Math.fround(a * xs[i]! + ys[i]!);
  memory(y, n * 4).set(new Uint8Array(ys.buffer));
};
const axpySignature: KernargSignature = [
  { name: 'y', type: 'ptr' },
  { name: 'x', type: 'ptr' },
  { name: 'a', type: 'f32' },
  { name: 'n', type: 'i32' },
];

function setup(options: Parameters<typeof createFakeBinding>[0] = {}) {
  const binding = createFakeBinding({ kernels: { axpy, empty: null }, ...options });
  const device = openDevice({ backend: 'cuda', binding, env: {} });
  const module = device.loadModule('.entry axpy(');
  return { binding, device, module };
}

describe('openDevice and probeRuntime with an injected binding', () => {
  it('auto picks the backend whose library loads and reports the device', () => {
    const binding = createFakeBinding({ backend: 'hip', devices: [{ name: 'fake MI355X', arch: 'gfx950', archFull: 'gfx950:sramecc+:xnack-', computeUnits: 256 }] });
    const device = openDevice({ binding, env: {} });
    expect(device.backend).toBe('hip');
    expect(device.info).toMatchObject({ name: 'fake MI355X', arch: 'gfx950', computeUnits: 256, index: 0 });
    expect(binding.calls.slice(0, 2)).toEqual(['load', 'deviceCount']); // hip is tried first
  });

  it('auto falls through to CUDA and the probe lists what failed on the way', () => {
    const probe = probeRuntime({ binding: createFakeBinding({ backend: 'cuda' }), env: { ROCKE_HIP_LIB: '/opt/x/libamdhip64.so' } });
    expect(probe.available).toBe(true);
    expect(probe.backend).toBe('cuda');
    expect(probe.path).toBe('libcuda.so.1');
    expect(probe.attempts.map((a) => a.path)).toEqual(['/opt/x/libamdhip64.so', 'libamdhip64.so', 'libamdhip64.so.6', 'libamdhip64.so.7', '/opt/rocm/lib/libamdhip64.so']);
  });

  it('one message lists every attempt when nothing is usable, including a driver without devices', () => {
    const binding = createFakeBinding({ backend: 'cuda', deviceCountError: 'no CUDA-capable device is detected' });
    let error: unknown;
    try {
      openDevice({ binding, env: { ROCKE_CUDA_LIB: '/nonexistent/libcuda.so.1' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain("backend 'auto'");
    expect(message).toContain('[hip] /opt/rocm/lib/libamdhip64.so: /opt/rocm/lib/libamdhip64.so: cannot open shared object file');
    expect(message).toContain('[cuda] /nonexistent/libcuda.so.1 (from ROCKE_CUDA_LIB): loaded, but cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)');
    expect((error as RuntimeUnavailableError).attempts).toHaveLength(5);
    expect(probeRuntime({ binding, env: {} })).toMatchObject({ available: false, deviceCount: 0 });
  });

  it('an explicit backend tries only that backend', () => {
    const binding = createFakeBinding({ backend: 'hip' });
    expect(() => openDevice({ backend: 'cuda', binding, env: {} })).toThrow(/backend 'cuda'[\s\S]*\[cuda\] libcuda\.so\.1/);
    expect(binding.calls).toEqual(['load']);
  });

  it('checks the device index and the backend name', () => {
    const binding = createFakeBinding({ devices: [{}, {}] });
    expect(openDevice({ binding, index: 1, env: {} }).info.index).toBe(1);
    expect(() => openDevice({ binding, index: 2, env: {} })).toThrow(/device index must be an integer in \[0, 1\], got 2/);
    expect(() => openDevice({ binding, index: -1, env: {} })).toThrow(GpuUsageError);
    expect(() => openDevice({ binding, backend: 'rocm' as never, env: {} })).toThrow(/backend must be 'auto', 'hip' or 'cuda'/);
  });
});

describe('buffers', () => {
  it('round-trips typed arrays, honouring views with byte offsets on both sides', () => {
    const { device } = setup();
    const buffer = device.alloc(64).fill(0);
    const backing = Float32Array.from({ length: 8 }, (_, i) => i + 0.5);
    buffer.write(backing.subarray(2, 6), 8); // 4 floats from element 2 to device bytes 8..24
    const out = new Float32Array(10);
    buffer.read(out.subarray(1, 5), 8);
    expect([...out]).toEqual([0, 2.5, 3.5, 4.5, 5.5, 0, 0, 0, 0, 0]);
    expect([...buffer.read(new Uint8Array(8))]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('fill, copyFrom and upload', () => {
    const { device } = setup();
    const a = device.upload(Uint8Array.of(1, 2, 3, 4, 5, 6));
    const b = device.alloc(6).fill(9);
    b.fill(7, 1, 2).copyFrom(a, 3, 0, 3);
    expect([...b.read(new Uint8Array(6))]).toEqual([9, 7, 7, 1, 2, 3]);
  });

  it('rejects out-of-range copies before calling the runtime', () => {
    const { device, binding } = setup();
    const buffer = device.alloc(16);
    const before = binding.calls.length;
    expect(() => buffer.write(new Uint8Array(8), 12)).toThrow(/bytes \[12, 20\) fall outside the 16-byte buffer/);
    expect(() => buffer.read(new Uint8Array(17))).toThrow(GpuUsageError);
    expect(() => buffer.fill(256)).toThrow(/fill value must be an integer in \[0, 255\]/);
    expect(() => buffer.view(4, 13)).toThrow(GpuUsageError);
    expect(() => buffer.write([1, 2] as never)).toThrow(/typed array or DataView/);
    expect(() => device.alloc(0)).toThrow(/allocation size/);
    expect(() => device.alloc(1.5)).toThrow(/allocation size/);
    expect(binding.calls.length).toBe(before);
  });

  it('use after free is an error; free twice is a no-op', () => {
    const { device, binding } = setup();
    const buffer = device.alloc(16);
    buffer.free();
    buffer.free();
    expect(binding.calls.filter((c) => c === 'free')).toHaveLength(1);
    expect(buffer.freed).toBe(true);
    expect(() => buffer.address).toThrow(/was freed/);
    expect(() => buffer.read(new Uint8Array(4))).toThrow(GpuUsageError);
    expect(() => buffer.write(new Uint8Array(4))).toThrow(GpuUsageError);
    expect(() => buffer.view(0)).toThrow(GpuUsageError);
    expect(binding.liveAllocations()).toBe(0);
  });

  it('views address the middle of a buffer', () => {
    const { device } = setup();
    const buffer = device.alloc(256);
    const view = buffer.view(64, 32);
    expect(view.address).toBe(buffer.address + 64n);
    buffer.free();
    expect(() => view.address).toThrow(/was freed/);
  });
});

describe('launch', () => {
  it('packs values with the function signature and runs the kernel on device memory', () => {
    const { device, module, binding } = setup();
    const fn = module.getFunction('axpy', axpySignature);
    const n = 300;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i));
    const y = device.upload(new Float32Array(n).fill(1));
    fn.launch(Math.ceil(n / 128), 128, [y, x, 0.5, n]);
    const out = y.read(new Float32Array(n));
    expect(out.every((v, i) => v === 0.5 * i + 1)).toBe(true);
    expect(binding.launches).toHaveLength(1);
    expect(binding.launches[0]).toMatchObject({ name: 'axpy', grid: [3, 1, 1], block: [128, 1, 1], sharedBytes: 0, onStream: false });
    expect(binding.launches[0]!.kernargs.byteLength).toBe(24);
  });

  it('a view argument offsets the pointer; pre-packed buffers and named values give the same launch', () => {
    const { device, module, binding } = setup();
    const fn = module.getFunction('axpy', axpySignature);
    const x = device.upload(Float32Array.of(1, 2, 3, 4));
    const y = device.upload(Float32Array.of(0, 0, 0, 0, 10, 10, 10, 10));
    launch(fn, 1, 32, { y: y.view(16), x, a: 2, n: 4 });
    expect([...y.read(new Float32Array(8))]).toEqual([0, 0, 0, 0, 12, 14, 16, 18]);
    fn.launch(1, 32, packKernargs(axpySignature, [y.view(16), x, 2, 4]));
    expect(binding.launches[1]!.kernargs).toEqual(binding.launches[0]!.kernargs);
  });

  it('validates shape, limits, arguments and stream before anything reaches the binding', () => {
    const { device, module, binding } = setup({ functionAttributes: { axpy: { maxThreadsPerBlock: 256, staticSharedBytes: 1024 } } });
    const fn = module.getFunction('axpy', axpySignature);
    const x = device.alloc(16);
    const good = [x, x, 1, 4] as const;
    const launchesBefore = binding.launches.length;
    expect(() => fn.launch(0, 32, good)).toThrow(/grid\.x must be an integer in \[1, 4294967295\], got 0/);
    expect(() => fn.launch(1, [32, 1.5], good)).toThrow(/block\.y must be an integer/);
    expect(() => fn.launch(1, [1, 1, 1, 1] as never, good)).toThrow(/1 to 3 numbers/);
    expect(() => fn.launch([1, 65536], 32, good)).toThrow(/grid\.y = 65536 exceeds the device limit 65535/);
    expect(() => fn.launch(1, [1, 1, 65], good)).toThrow(/block\.z = 65 exceeds the device limit 64/);
    expect(() => fn.launch(1, 512, good)).toThrow(/block of 512 threads exceeds the limit of 256 for 'axpy'/);
    expect(() => fn.launch(1, 32, good, { sharedBytes: 227 * 1024 })).toThrow(/exceeds the 231424 bytes of dynamic shared memory available to 'axpy' \(232448 per block, 1024 static\)/);
    expect(() => fn.launch(1, 32, good, { sharedBytes: -1 })).toThrow(/sharedBytes/);
    expect(() => fn.launch(1, 32, [x, x, 1])).toThrow(KernargError);
    expect(() => fn.launch(1, 32, [x, x, 'a', 4] as never)).toThrow(/argument 'a' \(f32\) must be a number/);
    expect(() => fn.launch(1, 32, packKernargs([{ name: 'n', type: 'i32' }], [1]))).toThrow(/packed arguments \(i32\) do not match 'axpy' \(ptr, ptr, f32, i32\)/);
    const packed = packKernargs(axpySignature, good);
    expect(() => fn.launch(1, 32, { ...packed, bytes: packed.bytes.subarray(0, 20) })).toThrow(/packed arguments hold 20 bytes, their layout needs 24/);
    expect(() => fn.launch(1, 32, good, { stream: {} as never })).toThrow(/stream must be a Stream/);
    expect(binding.launches.length).toBe(launchesBefore);
    fn.launch(1, 256, good, { sharedBytes: 227 * 1024 - 1024 }); // exactly at the limit
    expect(binding.launches.at(-1)!.sharedBytes).toBe(231424);
  });

  it('launches packed from values do not share bytes: each records its own arguments', () => {
    const { device, module, binding } = setup();
    const fn = module.getFunction('axpy', axpySignature);
    const x = device.alloc(64);
    fn.launch(1, 32, [x, x, 1.5, 3]);
    fn.launch(1, 32, [x, x, -2, 7]);
    expect(binding.launches[0]!.kernargs).toEqual(packKernargs(axpySignature, [x, x, 1.5, 3]).bytes);
    expect(binding.launches[1]!.kernargs).toEqual(packKernargs(axpySignature, [x, x, -2, 7]).bytes);
    expect(() => fn.launch(1, 32, [x, x, 'bad', 7] as never)).toThrow(KernargError);
    fn.launch(1, 32, [x, x, 1.5, 3]); // a failed packing leaves nothing behind
    expect(binding.launches[2]!.kernargs).toEqual(binding.launches[0]!.kernargs);
  });

  it('a function without a signature needs packed arguments', () => {
    const { module } = setup();
    const fn = module.getFunction('axpy');
    expect(() => fn.launch(1, 32, [1n, 2n, 1, 4])).toThrow(/has no signature/);
    expect(() => fn.launch(1, 32, packKernargs(axpySignature, [0n, 0n, 1, 0]))).not.toThrow();
  });

  it('memory of another device, freed memory, foreign streams and closed devices are rejected', () => {
    const binding = createFakeBinding({ kernels: { axpy }, devices: [{}, {}] });
    const d0 = openDevice({ binding, index: 0, env: {} });
    const d1 = openDevice({ binding, index: 1, env: {} });
    const fn = d0.loadModule('m').getFunction('axpy', axpySignature);
    const mine = d0.alloc(16);
    const theirs = d1.alloc(16);
    expect(() => fn.launch(1, 32, [mine, theirs, 1, 4])).toThrow(/memory of another device/);
    const prepacked = packKernargs(axpySignature, [mine, mine, 1, 4]);
    mine.free();
    expect(() => fn.launch(1, 32, prepacked)).toThrow(/was freed/);
    expect(() => fn.launch(1, 32, [mine, mine, 1, 4])).toThrow(/was freed/);
    expect(() => d1.launch(fn, 1, 32, [theirs, theirs, 1, 4])).toThrow(/belongs to another device/);
    expect(() => fn.launch(1, 32, [theirs, theirs, 1, 4], { stream: d1.createStream() })).toThrow(/memory of another device|stream belongs to another device/);
    expect(binding.launches).toHaveLength(0);
  });

  it('unloaded modules and closed devices cannot launch', () => {
    const { device, module, binding } = setup();
    const fn = module.getFunction('axpy', axpySignature);
    const buf = device.alloc(16);
    module.unload();
    module.unload();
    expect(() => fn.launch(1, 32, [buf, buf, 1, 4])).toThrow(/module was unloaded/);
    expect(() => module.getFunction('axpy')).toThrow(/module was unloaded/);
    device.close();
    device.close();
    expect(binding.calls.filter((c) => c === 'closeDevice')).toHaveLength(1);
    expect(() => fn.launch(1, 32, [buf, buf, 1, 4])).toThrow(/is closed/);
    expect(() => device.alloc(4)).toThrow(/is closed/);
    expect(() => buf.read(new Uint8Array(4))).toThrow(/is closed/);
    expect(buf.freed).toBe(true);
    buf.free(); // releasing after close is a no-op, not an error
    expect(binding.calls.includes('free')).toBe(false);
  });
});

describe('modules, streams and events', () => {
  it('a missing kernel is a runtime error naming the API and the runtime message', () => {
    const { module } = setup();
    let error: unknown;
    try {
      module.getFunction('nope');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuRuntimeError);
    expect(error).toMatchObject({ api: 'cuModuleGetFunction', code: 500, errorName: 'CUDA_ERROR_NOT_FOUND', runtimeMessage: 'named symbol not found', backend: 'cuda' });
    expect((error as Error).message).toBe('cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named symbol not found) [cuda error 500]');
  });

  it('a PTX that does not compile carries the JIT log', () => {
    const { device } = setup();
    let error: unknown;
    try {
      device.loadModule('.version 8.0\nptx-error: line 3: unknown instruction frobnicate');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuRuntimeError);
    expect((error as GpuRuntimeError).log).toBe('line 3: unknown instruction frobnicate');
    expect((error as Error).message).toMatch(/^cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX .*\nJIT log:\nline 3: unknown instruction frobnicate$/);
    expect(() => device.loadModule(new Uint8Array(0))).toThrow(/module image is empty/);
  });

  it('a function bad signature fails at getFunction', () => {
    const { module } = setup();
    expect(() => module.getFunction('axpy', [{ name: 'x', type: 'u8' as never }])).toThrow(KernargError);
  });

  it('events time launches on a stream; destroyed objects are rejected', () => {
    const { device, module, binding } = setup({ msPerLaunch: 0.25 });
    const fn = module.getFunction('empty', []);
    const stream = device.createStream();
    const start = device.createEvent().record(stream);
    for (let i = 0; i < 4; i++) fn.launch(1, 1, [], { stream });
    const end = device.createEvent().record(stream);
    end.synchronize();
    stream.synchronize();
    expect(elapsedMs(start, end)).toBe(1);
    expect(binding.launches.every((l) => l.onStream)).toBe(true);
    stream.destroy();
    expect(() => fn.launch(1, 1, [], { stream })).toThrow(/stream was destroyed/);
    expect(() => start.record(stream)).toThrow(/stream was destroyed/);
    end.destroy();
    expect(() => elapsedMs(start, end)).toThrow(/event was destroyed/);
    expect(() => elapsedMs(start, {} as never)).toThrow(/two GpuEvents/);
  });

  it('elapsedMs of an unrecorded event is the runtime error', () => {
    const { device } = setup();
    expect(() => elapsedMs(device.createEvent(), device.createEvent())).toThrow(/cuEventElapsedTime failed: CUDA_ERROR_INVALID_HANDLE/);
  });

  it('HIP errors name the HIP API', () => {
    const binding = createFakeBinding({ backend: 'hip', kernels: {} });
    const module = openDevice({ binding, env: {} }).loadModule(new Uint8Array([0x7f, 0x45, 0x4c, 0x46]));
    expect(() => module.getFunction('k')).toThrow(/^hipModuleGetFunction failed: hipErrorNotFound \(named symbol not found\) \[hip error 500\]$/);
  });
});

describe('graph capture and replay (fake binding)', () => {
  it('captures launches without running them; one graph launch replays them in order, timed by events around it', () => {
    const { device, module, binding } = setup({ msPerLaunch: 0.25 });
    const fn = module.getFunction('axpy', axpySignature);
    const x = device.upload(Float32Array.of(1, 2, 3, 4));
    const y = device.upload(new Float32Array(4));
    const graph = device.captureGraph(() => {
      expect(device.capturing).toBe(true);
      fn.launch(1, 4, { y, x, a: 2, n: 4 });
      fn.launch(1, 4, { y, x, a: 0.5, n: 3 });
    });
    expect(device.capturing).toBe(false);
    expect(graph.launches).toBe(2);
    expect(binding.launches).toHaveLength(0); // captured, not run
    expect([...y.read(new Float32Array(4))]).toEqual([0, 0, 0, 0]);
    const start = device.createEvent().record();
    graph.launch();
    graph.launch();
    const end = device.createEvent().record();
    end.synchronize();
    expect(elapsedMs(start, end)).toBe(1); // 4 launches at 0.25 ms
    expect([...y.read(new Float32Array(4))]).toEqual([5, 10, 15, 16]); // (2 + 0.5) * x twice, the last element only by the first launch
    expect(binding.launches.map((l) => [l.inGraph, l.onStream, new DataView(l.kernargs.buffer).getFloat32(16, true)])).toEqual([
      [true, false, 2],
      [true, false, 0.5],
      [true, false, 2],
      [true, false, 0.5],
    ]);
    expect(binding.calls.filter((c) => c === 'launchGraph')).toHaveLength(2);
    graph.destroy();
    graph.destroy();
    expect(graph.destroyed).toBe(true);
    expect(() => graph.launch()).toThrow(/graph was destroyed/);
  });

  it('an error inside the body ends the capture, rethrows, and leaves the device usable', () => {
    const { device, module, binding } = setup();
    const fn = module.getFunction('empty', []);
    const boom = new Error('boom');
    expect(() =>
      device.captureGraph(() => {
        fn.launch(1, 1, []);
        throw boom;
      }),
    ).toThrow(boom);
    expect(device.capturing).toBe(false);
    expect(binding.calls.slice(-2)).toEqual(['launch', 'abortCapture']);
    fn.launch(1, 1, []); // runs again
    expect(binding.launches).toHaveLength(1);
    expect(binding.launches[0]!.inGraph).toBe(false);
    const graph = device.captureGraph(() => fn.launch(1, 1, []));
    expect(graph.launches).toBe(1);
  });

  it('only launches may run inside the body, without a stream; captures do not nest and the body is synchronous', () => {
    const { device, module } = setup();
    const fn = module.getFunction('empty', []);
    const buffer = device.alloc(16);
    const event = device.createEvent();
    const stream = device.createStream();
    const inside = (what: () => unknown) => () => device.captureGraph(() => void what());
    expect(inside(() => fn.launch(1, 1, [], { stream }))).toThrow(/launches inside captureGraph take no stream/);
    expect(inside(() => device.alloc(4))).toThrow(/alloc is not allowed inside captureGraph/);
    expect(inside(() => buffer.read(new Uint8Array(4)))).toThrow(/read is not allowed inside captureGraph/);
    expect(inside(() => buffer.fill(0))).toThrow(GpuUsageError);
    expect(inside(() => event.record())).toThrow(/event record is not allowed/);
    expect(inside(() => device.synchronize())).toThrow(/synchronize is not allowed/);
    expect(inside(() => device.captureGraph(() => {}))).toThrow(/does not nest/);
    expect(() => device.captureGraph((async () => fn.launch(1, 1, [])) as never)).toThrow(/synchronous body/);
    expect(device.capturing).toBe(false);
    buffer.fill(1); // each failed capture was ended
  });

  it('a library without the graph entry points: a typed error naming them, everything else works', () => {
    const { device, module, binding } = setup({ graphs: false });
    expect(device.graphSupport()).toEqual({ supported: false, missingSymbols: expect.arrayContaining(['cuStreamBeginCapture_v2', 'cuGraphLaunch']) });
    const fn = module.getFunction('empty', []);
    let error: unknown;
    try {
      device.captureGraph(() => fn.launch(1, 1, []));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuFeatureUnavailableError);
    expect(error).toMatchObject({ backend: 'cuda', message: expect.stringContaining('does not export cuStreamBeginCapture_v2') });
    expect((error as GpuFeatureUnavailableError).missingSymbols).toContain('cuGraphInstantiateWithFlags');
    expect(device.capturing).toBe(false);
    fn.launch(1, 1, []);
    expect(binding.launches).toHaveLength(1);
    expect(setup().device.graphSupport()).toEqual({ supported: true, missingSymbols: [] });
  });

  it('closing the device releases its graphs; a graph cannot launch inside a capture', () => {
    const { device, module } = setup();
    const fn = module.getFunction('empty', []);
    const graph = device.captureGraph(() => fn.launch(1, 1, []));
    expect(() => device.captureGraph(() => graph.launch())).toThrow(/graph launch is not allowed inside captureGraph/);
    device.close();
    expect(graph.destroyed).toBe(true);
    expect(() => graph.launch()).toThrow(GpuUsageError);
    graph.destroy(); // a no-op after close
  });
});
