// The real addon's HIP backend against test-support/mock-libamdhip64.c (a CPU stand-in for
// libamdhip64.so): device facts from hipGetDevicePropertiesR0600, the arch name split, copies,
// the `extra` launch protocol with HIP's END marker, HIP error names. One process per test
// file keeps the loaded mock out of other suites.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockLibrary, compilerMissing, type MockLibrary } from '../test-support/mock-library.js';
import { GpuRuntimeError, GpuUsageError } from './errors.js';
import type { KernargSignature } from './kernargs.js';
import type { Device, Module } from './runtime.js';
import { elapsedMs, openDevice, probeRuntime } from './runtime.js';

const elfImage = Uint8Array.of(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 64);
const axpySignature: KernargSignature = [
  { name: 'y', type: 'ptr' },
  { name: 'x', type: 'ptr' },
  { name: 'a', type: 'f32' },
  { name: 'n', type: 'i32' },
];

let mock: MockLibrary;
let library: string;
let device: Device;
let module: Module;
const log = () => mock.log();

describe.skipIf(compilerMissing)('native addon over a mock libamdhip64', () => {
  beforeAll(() => {
    mock = buildMockLibrary('mock-libamdhip64.c', 'MOCK_HIP_LOG');
    library = mock.path;
    device = openDevice({ backend: 'auto', env: { ROCKE_HIP_LIB: library } }); // HIP is tried first
    module = device.loadModule(elfImage);
  });
  afterAll(() => {
    device.close();
    mock.remove();
  });

  it('auto selects HIP and reads the device properties, splitting the target id', () => {
    expect(probeRuntime({ env: {} })).toMatchObject({ available: true, backend: 'hip', path: library, deviceCount: 1 });
    expect(device.info).toEqual({
      backend: 'hip',
      index: 0,
      name: 'Mock AMD Instinct',
      arch: 'gfx950',
      archFull: 'gfx950:sramecc+:xnack-',
      computeUnits: 256,
      totalMemory: 2 ** 37,
      warpSize: 64,
      maxThreadsPerBlock: 1024,
      maxBlockDim: [1024, 1024, 1024],
      maxGridDim: [2147483647, 65536, 65536],
      maxSharedPerBlock: 65536,
      maxSharedPerBlockOptin: 163840,
      driverVersion: 60443484,
    });
  });

  it('launches through HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END and reads back the result', () => {
    const fn = module.getFunction('axpy', axpySignature);
    const n = 500;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i));
    const y = device.alloc(n * 4).fill(0);
    const start = device.createEvent().record();
    fn.launch(Math.ceil(n / 256), 256, { y, x, a: 0.25, n }, { sharedBytes: 100 * 1024 });
    fn.launch(Math.ceil(n / 256), 256, { y, x, a: 0.25, n });
    const end = device.createEvent().record();
    end.synchronize();
    expect(y.read(new Float32Array(n)).every((v, i) => v === 0.5 * i)).toBe(true);
    expect(log()).toContain('launch axpy grid=2,1,1 block=256,1,1 shared=102400 stream=default size=24');
    expect(elapsedMs(start, end)).toBeCloseTo(0.006, 6);
    expect(() => fn.launch(1, 32, { y, x, a: 1, n }, { sharedBytes: 160 * 1024 + 4 })).toThrow(GpuUsageError);
  });

  it('captures axpy launches through hipStreamBeginCapture and replays them with hipGraphLaunch', () => {
    const fn = module.getFunction('axpy', axpySignature);
    const n = 100;
    const x = device.upload(Float32Array.from({ length: n }, (_, i) => i));
    const y = device.alloc(n * 4).fill(0);
    const before = log().length;
    const graph = device.captureGraph(() => {
      fn.launch(1, 128, { y, x, a: 1, n });
      fn.launch(1, 128, { y, x, a: 0.5, n });
    });
    expect(log().slice(before)).toEqual(['stream created flags=1', 'begin capture mode=1', 'capture axpy grid=1,1,1', 'capture axpy grid=1,1,1', 'instantiate nodes=2']);
    expect(y.read(new Float32Array(n)).every((v) => v === 0)).toBe(true);
    const start = device.createEvent().record();
    graph.launch();
    graph.launch();
    const end = device.createEvent().record();
    end.synchronize();
    expect(elapsedMs(start, end)).toBeCloseTo(0.012, 6); // 4 launches at the mock's 3 us
    expect(y.read(new Float32Array(n)).every((v, i) => v === 3 * i)).toBe(true);
    graph.destroy();
    expect(log().at(-1)).toBe('graph exec destroyed');
  });

  it('reports HIP errors with hipGetErrorName / hipGetErrorString', () => {
    let error: unknown;
    try {
      module.getFunction('missing');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuRuntimeError);
    expect((error as Error).message).toBe('hipModuleGetFunction failed: hipErrorNotFound (named symbol not found) [hip error 500]');
    expect(() => device.loadModule('.version 8.0')).toThrow('hipModuleLoadData failed: hipErrorInvalidImage (device kernel image is invalid) [hip error 200]');
  });
});
