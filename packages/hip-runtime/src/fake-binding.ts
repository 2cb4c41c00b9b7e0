import type { NativeBinding, NativeDeviceInfo, NativeFunctionAttributes, NativeHandle, NativeLoadResult } from './binding.js';
import { NATIVE_ABI_VERSION } from './binding.js';
import type { BackendName } from './errors.js';

/** What a fake kernel sees when "launched": the launch's shape, its arguments and the fake memory. */
export interface FakeKernelContext extends Pick<FakeLaunch, 'name' | 'grid' | 'block' | 'sharedBytes'> {
  /** The packed kernarg buffer exactly as the launch passed it. */
  readonly args: DataView;
  /** A live view of fake device memory at `address`; throws like an illegal address when out of any allocation. */
  memory(address: bigint, byteLength: number): Uint8Array;
}

/** A JavaScript stand-in for a kernel body, run on the fake's host-side "device memory". */
export type FakeKernel = (context: FakeKernelContext) => void;

/** Configuration of a fake binding. */
export interface FakeBindingOptions {
  /** The backend whose library "loads"; the other one fails like a missing library. Default `cuda`. */
  readonly backend?: BackendName;
  /** Devices and their facts (missing fields get defaults); default one device. */
  readonly devices?: readonly Partial<NativeDeviceInfo>[];
  /** Kernels every loaded module exposes, by symbol name, with optional bodies. */
  readonly kernels?: Readonly<Record<string, FakeKernel | null>>;
  /** Function attributes per kernel name (defaults: 1024 threads, no static shared memory). */
  readonly functionAttributes?: Readonly<Record<string, Partial<NativeFunctionAttributes>>>;
  /** When set, deviceCount fails with this runtime message (a driver with no usable GPU). */
  readonly deviceCountError?: string;
  /** Milliseconds elapsedMs counts per launch between two events (a graph's launches count each). Default 0.001. */
  readonly msPerLaunch?: number;
  /** false: the "library" lacks the graph entry points (capture throws GpuFeatureUnavailableError). Default true. */
  readonly graphs?: boolean;
}

/** A recorded launch. */
export interface FakeLaunch {
  readonly name: string;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  readonly onStream: boolean;
  /** True when it ran as part of a graph launch (it was captured earlier). */
  readonly inGraph: boolean;
  /** Launched with programmatic stream serialization (LaunchOptions.programmatic). */
  readonly programmatic: boolean;
  readonly kernargs: Uint8Array;
}

/** A NativeBinding that keeps "device memory" in host arrays and records every call. */
export interface FakeBinding extends NativeBinding {
  /** Binding method names, in call order. */
  readonly calls: string[];
  readonly launches: FakeLaunch[];
  /** Allocations not yet freed (over all devices). */
  liveAllocations(): number;
}

const FAKE_DEVICE: NativeDeviceInfo = {
  backend: 'cuda',
  index: 0,
  name: 'fake device',
  arch: 'sm_90',
  archFull: 'sm_90',
  computeUnits: 4,
  totalMemory: 1 << 30,
  warpSize: 32,
  maxThreadsPerBlock: 1024,
  maxBlockDim: [1024, 1024, 64],
  maxGridDim: [2 ** 31 - 1, 65535, 65535],
  maxSharedPerBlock: 48 * 1024,
  maxSharedPerBlockOptin: 227 * 1024,
  driverVersion: 13000,
};

interface FakeDevice {
  kind: 'device';
  info: NativeDeviceInfo;
  closed: boolean;
  /** While capturing: the launches captured so far. */
  capture: FakeNode[] | undefined;
}
/** A captured launch: what a graph replays. */
interface FakeNode {
  fn: FakeFunction;
  grid: readonly [number, number, number];
  block: readonly [number, number, number];
  sharedBytes: number;
  programmatic: boolean;
  kernargs: Uint8Array;
}
interface FakeGraph {
  kind: 'graph';
  device: FakeDevice;
  nodes: readonly FakeNode[];
  destroyed: boolean;
}
interface FakeBuffer {
  kind: 'buffer';
  device: FakeDevice;
  address: bigint;
  bytes: Uint8Array;
  freed: boolean;
}
interface FakeModule {
  kind: 'module';
  device: FakeDevice;
  unloaded: boolean;
}
interface FakeFunction {
  kind: 'function';
  module: FakeModule;
  name: string;
}
interface FakeStream {
  kind: 'stream';
  device: FakeDevice;
  destroyed: boolean;
}
interface FakeEvent {
  kind: 'event';
  device: FakeDevice;
  destroyed: boolean;
  recordedAt: number | undefined;
}
type FakeObject = FakeDevice | FakeBuffer | FakeModule | FakeFunction | FakeStream | FakeEvent | FakeGraph;

function runtimeError(backend: BackendName, api: string, code: number, errorName: string, message: string, log?: string): Error {
  return Object.assign(new Error(`${api} failed: ${errorName} (${message})`), {
    rockeBackend: backend,
    rockeApi: api,
    rockeCode: code,
    rockeErrorName: errorName,
    rockeRuntimeMessage: message,
    ...(log !== undefined ? { rockeLog: log } : {}),
  });
}

function usageError(message: string): Error {
  return Object.assign(new Error(message), { rockeUsage: true });
}

/**
 * An in-memory NativeBinding for tests without a GPU. It behaves like the addon where the
 * TypeScript layer can observe it (handles, freed/closed checks, range checks, error shapes)
 * and runs optional JavaScript kernel bodies over its fake memory. PTX text containing
 * `ptx-error: <text>` fails to load with `<text>` as the JIT log, as a bad PTX would. Graph
 * capture records the device's launches without running them; a graph launch runs them in
 * order (each recorded in `launches` with `inGraph`), and the fake clock advances per launch.
 */
export function createFakeBinding(options: FakeBindingOptions = {}): FakeBinding {
  const backend = options.backend ?? 'cuda';
  const devices = (options.devices ?? [{}]).map((d, index) => ({ ...FAKE_DEVICE, backend, index, ...d }));
  const kernels = options.kernels ?? {};
  const msPerLaunch = options.msPerLaunch ?? 0.001;
  const calls: string[] = [];
  const launches: FakeLaunch[] = [];
  const buffers: FakeBuffer[] = [];
  let nextAddress = 0x7f00_0000_0000n;
  let launchCount = 0;
  const api = (cuda: string, hip: string) => (backend === 'cuda' ? cuda : hip);
  const graphSymbols = api(
    'cuStreamBeginCapture_v2, cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy',
    'hipStreamCreateWithFlags, hipStreamBeginCapture, hipStreamEndCapture, hipGraphInstantiateWithFlags, hipGraphLaunch, hipGraphExecDestroy, hipGraphDestroy',
  );
  const graphMissing = options.graphs === false ? graphSymbols : '';

  function expect<K extends FakeObject['kind']>(value: unknown, kind: K): Extract<FakeObject, { kind: K }> {
    if (typeof value !== 'object' || value === null || (value as FakeObject).kind !== kind) {
      throw new TypeError(`expected a native ${kind} handle`);
    }
    return value as Extract<FakeObject, { kind: K }>;
  }
  function deviceOf(object: FakeObject): FakeDevice {
    if (object.kind === 'device') return object;
    if (object.kind === 'function') return object.module.device;
    return object.device;
  }
  function live<K extends Exclude<FakeObject['kind'], 'device'>>(value: unknown, kind: K): Extract<FakeObject, { kind: K }> {
    const object = expect(value, kind);
    const any = object as FakeObject;
    if (deviceOf(any).closed) throw usageError(`the device of this ${kind} is closed`);
    const gone =
      (any.kind === 'buffer' && any.freed) ||
      (any.kind === 'module' && any.unloaded) ||
      (any.kind === 'function' && any.module.unloaded) ||
      ((any.kind === 'stream' || any.kind === 'event' || any.kind === 'graph') && any.destroyed);
    if (gone) throw usageError(`the ${kind} is no longer usable`);
    return object;
  }
  function requireGraphs(): void {
    if (graphMissing !== '') {
      throw Object.assign(new Error(`graph capture is not available: the loaded ${backend} library does not export ${graphMissing}`), { rockeBackend: backend, rockeMissingSymbols: graphMissing });
    }
  }
  /** Runs one launch: records it, advances the clock, runs the body. */
  function run(fn: FakeFunction, grid: readonly [number, number, number], block: readonly [number, number, number], sharedBytes: number, onStream: boolean, inGraph: boolean, programmatic: boolean, kernargs: Uint8Array): void {
    const record: FakeLaunch = { name: fn.name, grid, block, sharedBytes, onStream, inGraph, programmatic, kernargs: kernargs.slice() };
    launches.push(record);
    launchCount++;
    const body = kernels[fn.name];
    if (body) {
      const args = new DataView(record.kernargs.buffer);
      body({ name: fn.name, grid: record.grid, block: record.block, sharedBytes, args, memory });
    }
  }
  function openDeviceOf(value: unknown): FakeDevice {
    const device = expect(value, 'device');
    if (device.closed) throw usageError('the device is closed');
    return device;
  }
  function range(buffer: FakeBuffer, offset: number, length: number): void {
    if (offset < 0 || length < 0 || offset + length > buffer.bytes.byteLength) {
      throw new RangeError(`bytes [${offset}, ${offset + length}) fall outside the ${buffer.bytes.byteLength}-byte buffer`);
    }
  }
  function memory(address: bigint, byteLength: number): Uint8Array {
    if (byteLength === 0) return new Uint8Array(0); // touching nothing never faults
    for (const b of buffers) {
      if (b.freed || address < b.address) continue;
      const offset = Number(address - b.address);
      if (offset + byteLength <= b.bytes.byteLength) return b.bytes.subarray(offset, offset + byteLength);
    }
    throw runtimeError(backend, api('cuLaunchKernel', 'hipModuleLaunchKernel'), 700, api('CUDA_ERROR_ILLEGAL_ADDRESS', 'hipErrorIllegalAddress'), `fake kernel touched 0x${address.toString(16)} (+${byteLength}) outside every allocation`);
  }

  const methods: Omit<NativeBinding, 'abiVersion'> = {
    load(which, candidates): NativeLoadResult {
      if (which !== backend) {
        return { loaded: false, attempts: candidates.map((path) => ({ path, error: `${path}: cannot open shared object file: No such file or directory` })) };
      }
      const path = candidates[0] ?? 'fake';
      return { loaded: true, path, attempts: [{ path, error: '' }] };
    },
    deviceCount(which) {
      if (which !== backend) throw usageError('the backend is not loaded; call load() first');
      if (options.deviceCountError !== undefined) {
        throw runtimeError(backend, api('cuInit', 'hipInit'), 100, api('CUDA_ERROR_NO_DEVICE', 'hipErrorNoDevice'), options.deviceCountError);
      }
      return devices.length;
    },
    deviceInfo(_which, index) {
      const info = devices[index];
      if (!info) throw runtimeError(backend, api('cuDeviceGet', 'hipGetDevicePropertiesR0600'), 101, api('CUDA_ERROR_INVALID_DEVICE', 'hipErrorInvalidDevice'), 'invalid device ordinal');
      return info;
    },
    openDevice(_which, index): NativeHandle {
      const info = devices[index];
      if (!info) throw runtimeError(backend, api('cuDeviceGet', 'hipSetDevice'), 101, api('CUDA_ERROR_INVALID_DEVICE', 'hipErrorInvalidDevice'), 'invalid device ordinal');
      const device: FakeDevice = { kind: 'device', info, closed: false, capture: undefined };
      return device;
    },
    closeDevice(handle) {
      const device = expect(handle, 'device');
      device.closed = true;
      device.capture = undefined; // closing discards a capture in progress
    },
    synchronize(handle) {
      openDeviceOf(handle);
    },
    alloc(handle, bytes) {
      const device = openDeviceOf(handle);
      const buffer: FakeBuffer = { kind: 'buffer', device, address: nextAddress, bytes: new Uint8Array(bytes), freed: false };
      nextAddress += BigInt(Math.ceil(bytes / 256) * 256 + 256);
      buffers.push(buffer);
      return { handle: buffer, address: buffer.address };
    },
    free(handle) {
      expect(handle, 'buffer').freed = true;
    },
    copyToDevice(handle, offset, src) {
      const buffer = live(handle, 'buffer');
      range(buffer, offset, src.byteLength);
      buffer.bytes.set(src, offset);
    },
    copyFromDevice(handle, offset, dst) {
      const buffer = live(handle, 'buffer');
      range(buffer, offset, dst.byteLength);
      dst.set(buffer.bytes.subarray(offset, offset + dst.byteLength));
    },
    copyDeviceToDevice(dstHandle, dstOffset, srcHandle, srcOffset, bytes) {
      const dst = live(dstHandle, 'buffer');
      const src = live(srcHandle, 'buffer');
      range(dst, dstOffset, bytes);
      range(src, srcOffset, bytes);
      dst.bytes.set(src.bytes.slice(srcOffset, srcOffset + bytes), dstOffset);
    },
    memset(handle, offset, value, bytes) {
      const buffer = live(handle, 'buffer');
      range(buffer, offset, bytes);
      buffer.bytes.fill(value, offset, offset + bytes);
    },
    loadModule(handle, image) {
      const device = openDeviceOf(handle);
      const text = new TextDecoder().decode(image);
      const failure = /ptx-error: ([^\n]*)/.exec(text);
      if (failure) {
        throw runtimeError(backend, api('cuModuleLoadDataEx', 'hipModuleLoadData'), 218, api('CUDA_ERROR_INVALID_PTX', 'hipErrorInvalidKernelFile'), 'a PTX JIT compilation failed', failure[1]);
      }
      const module: FakeModule = { kind: 'module', device, unloaded: false };
      return module;
    },
    unloadModule(handle) {
      expect(handle, 'module').unloaded = true;
    },
    getFunction(handle, name) {
      const module = live(handle, 'module');
      if (!Object.hasOwn(kernels, name)) {
        throw runtimeError(backend, api('cuModuleGetFunction', 'hipModuleGetFunction'), 500, api('CUDA_ERROR_NOT_FOUND', 'hipErrorNotFound'), 'named symbol not found');
      }
      const fn: FakeFunction = { kind: 'function', module, name };
      const attributes: NativeFunctionAttributes = { maxThreadsPerBlock: 1024, staticSharedBytes: 0, constBytes: 0, localBytes: 0, numRegs: 32, ...options.functionAttributes?.[name] };
      return { handle: fn, attributes };
    },
    launch(handle, gx, gy, gz, bx, by, bz, sharedBytes, stream, kernargs, programmatic = false) {
      const fn = live(handle, 'function');
      if (stream !== null) {
        const s = live(stream, 'stream');
        if (s.device !== fn.module.device) throw usageError('the stream belongs to another device');
      }
      const { capture } = fn.module.device;
      if (capture) {
        if (stream !== null) throw usageError('while a graph is being captured, launches take no stream (they go to the capture stream)');
        capture.push({ fn, grid: [gx, gy, gz], block: [bx, by, bz], sharedBytes, programmatic, kernargs: kernargs.slice() });
        return;
      }
      run(fn, [gx, gy, gz], [bx, by, bz], sharedBytes, stream !== null, false, programmatic, kernargs);
    },
    createStream(handle) {
      const stream: FakeStream = { kind: 'stream', device: openDeviceOf(handle), destroyed: false };
      return stream;
    },
    destroyStream(handle) {
      expect(handle, 'stream').destroyed = true;
    },
    synchronizeStream(handle) {
      live(handle, 'stream');
    },
    createEvent(handle) {
      const event: FakeEvent = { kind: 'event', device: openDeviceOf(handle), destroyed: false, recordedAt: undefined };
      return event;
    },
    destroyEvent(handle) {
      expect(handle, 'event').destroyed = true;
    },
    recordEvent(handle, stream) {
      const event = live(handle, 'event');
      if (stream !== null) live(stream, 'stream');
      event.recordedAt = launchCount;
    },
    synchronizeEvent(handle) {
      live(handle, 'event');
    },
    elapsedMs(startHandle, endHandle) {
      const start = live(startHandle, 'event');
      const end = live(endHandle, 'event');
      if (start.recordedAt === undefined || end.recordedAt === undefined) {
        throw runtimeError(backend, api('cuEventElapsedTime', 'hipEventElapsedTime'), 400, api('CUDA_ERROR_INVALID_HANDLE', 'hipErrorInvalidHandle'), 'invalid resource handle');
      }
      return (end.recordedAt - start.recordedAt) * msPerLaunch;
    },
    graphSupport(which) {
      if (which !== backend) throw usageError('the backend is not loaded; call load() first');
      return { supported: graphMissing === '', missing: graphMissing };
    },
    beginCapture(handle) {
      const device = openDeviceOf(handle);
      if (device.capture) throw usageError('a graph capture is already in progress on this device');
      requireGraphs();
      device.capture = [];
    },
    endCapture(handle) {
      const device = openDeviceOf(handle);
      if (!device.capture) throw usageError('no graph capture is in progress on this device');
      const graph: FakeGraph = { kind: 'graph', device, nodes: device.capture, destroyed: false };
      device.capture = undefined;
      return graph;
    },
    abortCapture(handle) {
      expect(handle, 'device').capture = undefined;
    },
    launchGraph(handle, stream) {
      const graph = live(handle, 'graph');
      if (graph.device.capture) throw usageError('a graph cannot be launched while a graph is being captured');
      if (stream !== null) live(stream, 'stream');
      for (const n of graph.nodes) {
        live(n.fn, 'function'); // a graph of an unloaded module would fault on the GPU
        run(n.fn, n.grid, n.block, n.sharedBytes, stream !== null, true, n.programmatic, n.kernargs);
      }
    },
    destroyGraph(handle) {
      expect(handle, 'graph').destroyed = true;
    },
  };
  // Each method records its own name before it runs, so `calls` cannot drift from the API.
  const recorded = Object.fromEntries(
    Object.entries(methods).map(([name, method]: [string, (...args: never[]) => unknown]) => [
      name,
      (...args: never[]) => {
        calls.push(name);
        return method(...args);
      },
    ]),
  ) as unknown as Omit<NativeBinding, 'abiVersion'>;
  return {
    abiVersion: NATIVE_ABI_VERSION,
    calls,
    launches,
    liveAllocations: () => buffers.filter((b) => !b.freed && !b.device.closed).length,
    ...recorded,
  };
}
