import type { NativeBinding, NativeDeviceInfo, NativeFunctionAttributes, NativeHandle } from './binding.js';
import { ADDON_HELP, getBinding, LIBRARY_ENV, libraryCandidates } from './binding.js';
import type { BackendName, LoadAttempt } from './errors.js';
import { callNative, GpuUsageError, KernargError, RuntimeUnavailableError } from './errors.js';
import type { DeviceAddressable, KernargSignature, KernargValues, PackedKernargs } from './kernargs.js';
import { kernargLayout, sameKernargTypes, writeKernargs } from './kernargs.js';

/** Which runtime to use: `auto` tries HIP, then CUDA, and takes the first with a device. */
export type BackendChoice = 'auto' | BackendName;

/** Options shared by openDevice and probeRuntime. */
export interface RuntimeOptions {
  /** Default `auto`. */
  readonly backend?: BackendChoice;
  /** An injected binding (tests) or a path to a `.node` file; default: the package's addon. */
  readonly binding?: NativeBinding | string;
  /** Where ROCKE_HIP_LIB / ROCKE_CUDA_LIB are read from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Options of openDevice. */
export interface OpenDeviceOptions extends RuntimeOptions {
  /** Device ordinal within the backend; default 0. */
  readonly index?: number;
}

/** Facts about an open device. */
export type DeviceInfo = NativeDeviceInfo;

/** What probeRuntime found: the backend that would be used, or every attempt that failed. */
export interface RuntimeProbe {
  readonly available: boolean;
  readonly backend?: BackendName;
  /** The library that loaded. */
  readonly path?: string;
  readonly deviceCount: number;
  /** Every failed attempt, in order. */
  readonly attempts: readonly LoadAttempt[];
}

/** A grid or block shape: `n`, `[x]`, `[x, y]` or `[x, y, z]`. */
export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

/** Launch options. */
export interface LaunchOptions {
  /** Dynamic shared memory (LDS) in bytes; default 0. Above 48 KiB NVIDIA needs (and gets) an opt-in. */
  readonly sharedBytes?: number;
  /** Stream to launch on; default: the device's default stream. Not allowed inside captureGraph. */
  readonly stream?: Stream | null;
  /**
   * CUDA programmatic dependent launch: the kernel may start before the kernel ahead of it in the
   * stream has finished, so it must wait (`griddepcontrol.wait`) before touching memory that kernel
   * uses. HIP, and CUDA drivers without `cuLaunchKernelEx`, launch plainly (always correct).
   */
  readonly programmatic?: boolean;
}

/** Whether the device's runtime library can capture graphs, and which entry points it lacks if not. */
export interface GraphSupport {
  readonly supported: boolean;
  readonly missingSymbols: readonly string[];
}

/** Kernel arguments for a launch: values for the function's signature, or a packed buffer. */
export type LaunchArgs = KernargValues | PackedKernargs;

// Native handles of the wrapper objects, kept out of the public surface.
const nativeOf = new WeakMap<object, NativeHandle>();

function handleOf(owner: object): NativeHandle {
  const handle = nativeOf.get(owner);
  if (handle === undefined) throw new GpuUsageError('not an object created by @rocke/hip-runtime');
  return handle;
}

function requireInteger(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new GpuUsageError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface Selected {
  readonly binding: NativeBinding;
  readonly backend: BackendName;
  readonly path: string;
  readonly deviceCount: number;
}

function select(options: RuntimeOptions): { selected?: Selected; attempts: LoadAttempt[] } {
  const choice = options.backend ?? 'auto';
  if (choice !== 'auto' && choice !== 'hip' && choice !== 'cuda') {
    throw new GpuUsageError(`backend must be 'auto', 'hip' or 'cuda', got '${String(choice)}'`);
  }
  const attempts: LoadAttempt[] = [];
  let binding: NativeBinding;
  try {
    binding = getBinding(options.binding);
  } catch (error) {
    if (error instanceof RuntimeUnavailableError) return { attempts: [...error.attempts] };
    throw error;
  }
  const env = options.env ?? process.env;
  for (const backend of choice === 'auto' ? (['hip', 'cuda'] as const) : [choice]) {
    const result = callNative(() => binding.load(backend, libraryCandidates(backend, env)));
    for (const attempt of result.attempts) {
      if (attempt.error !== '') attempts.push({ backend, path: attempt.path, error: attempt.error });
    }
    if (!result.loaded || result.path === undefined) continue;
    let count: number;
    try {
      count = callNative(() => binding.deviceCount(backend));
    } catch (error) {
      attempts.push({ backend, path: result.path, error: `loaded, but ${errorText(error)}` });
      continue;
    }
    if (count < 1) {
      attempts.push({ backend, path: result.path, error: 'loaded, but it reports no devices' });
      continue;
    }
    return { selected: { binding, backend, path: result.path, deviceCount: count }, attempts };
  }
  return { attempts };
}

/** The one message for "nothing could be used": every path tried with its error. */
export function unavailableMessage(choice: BackendChoice, attempts: readonly LoadAttempt[], env: Readonly<Record<string, string | undefined>> = process.env): string {
  const lines = attempts.map((a) => {
    const variable = a.backend === 'addon' ? undefined : LIBRARY_ENV[a.backend];
    const fromEnv = variable !== undefined && env[variable] === a.path ? ` (from ${variable})` : '';
    return `  [${a.backend}] ${a.path}${fromEnv}: ${a.error}`;
  });
  // Without the addon no library was tried: the way out is the addon's, not a driver's.
  const addonOnly = attempts.length > 0 && attempts.every((a) => a.backend === 'addon');
  return [
    addonOnly
      ? `@rocke/hip-runtime: no GPU runtime could be used (backend '${choice}'): the native addon could not be loaded. Tried:`
      : `@rocke/hip-runtime: no GPU runtime could be used (backend '${choice}'). Tried:`,
    ...lines,
    addonOnly
      ? ADDON_HELP
      : 'Install the ROCm runtime (libamdhip64) or the NVIDIA driver (libcuda), or point ROCKE_HIP_LIB / ROCKE_CUDA_LIB at the library.',
  ].join('\n');
}

/**
 * Finds the runtime that openDevice would use, without opening a device. Never throws for a
 * missing runtime or addon: `available` is false and `attempts` says what was tried.
 */
export function probeRuntime(options: RuntimeOptions = {}): RuntimeProbe {
  const { selected, attempts } = select(options);
  if (!selected) return { available: false, deviceCount: 0, attempts };
  return { available: true, backend: selected.backend, path: selected.path, deviceCount: selected.deviceCount, attempts };
}

/**
 * Opens a GPU. Loads the addon and the runtime library at this first use; throws
 * RuntimeUnavailableError (one message listing every path tried) when none can be used, and
 * GpuUsageError for an index past the device count.
 */
export function openDevice(options: OpenDeviceOptions = {}): Device {
  const choice = options.backend ?? 'auto';
  const { selected, attempts } = select(options);
  if (!selected) throw new RuntimeUnavailableError(unavailableMessage(choice, attempts, options.env ?? process.env), attempts);
  const index = requireInteger(options.index ?? 0, 'device index', 0, selected.deviceCount - 1);
  const { binding, backend } = selected;
  const info = callNative(() => binding.deviceInfo(backend, index));
  const handle = callNative(() => binding.openDevice(backend, index));
  return new Device(binding, handle, Object.freeze({ ...info, maxBlockDim: Object.freeze([...info.maxBlockDim]), maxGridDim: Object.freeze([...info.maxGridDim]) }));
}

function toDim3(value: Dim3, what: string): [number, number, number] {
  const list = typeof value === 'number' ? [value] : value;
  if (!Array.isArray(list) || list.length < 1 || list.length > 3) {
    throw new GpuUsageError(`${what} must be a number or an array of 1 to 3 numbers`);
  }
  const dims = [list[0], list[1] ?? 1, list[2] ?? 1] as [unknown, unknown, unknown];
  return dims.map((d, i) => requireInteger(d, `${what}.${'xyz'[i]}`, 1, 2 ** 32 - 1)) as [number, number, number];
}

// One reusable argument buffer per function: the runtime copies the arguments during the
// launch call, so values can be packed without allocating on every launch.
interface Scratch {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  readonly pointers: DeviceAddressable[];
  readonly packed: PackedKernargs;
}
const scratchOf = new WeakMap<object, Scratch>();

function scratchPack(owner: object, signature: KernargSignature, values: KernargValues): PackedKernargs {
  let scratch = scratchOf.get(owner);
  if (!scratch) {
    const layout = kernargLayout(signature);
    const bytes = new Uint8Array(layout.size);
    const pointers: DeviceAddressable[] = [];
    scratch = { bytes, view: new DataView(bytes.buffer), pointers, packed: { bytes, layout, signature, pointers } };
    scratchOf.set(owner, scratch);
  }
  scratch.bytes.fill(0); // padding stays zero: the same values always give the same bytes
  scratch.pointers.length = 0;
  writeKernargs(scratch.packed.layout, values, scratch.view, scratch.pointers);
  return scratch.packed;
}

function isPacked(args: LaunchArgs): args is PackedKernargs {
  return typeof args === 'object' && args !== null && !Array.isArray(args) && (args as PackedKernargs).bytes instanceof Uint8Array && 'layout' in args;
}

// The native handle of an optional stream argument (absent or null: the default stream).
function streamHandleOf(stream: Stream | null | undefined, device: Device): NativeHandle | null {
  if (stream === undefined || stream === null) return null;
  if (!(stream instanceof Stream)) throw new GpuUsageError('stream must be a Stream from device.createStream()');
  if (stream.device !== device) throw new GpuUsageError('the stream belongs to another device');
  stream.assertLive();
  return handleOf(stream);
}

function bytesOf(view: ArrayBufferView, what: string): Uint8Array {
  if (!ArrayBuffer.isView(view)) throw new GpuUsageError(`${what} must be a typed array or DataView`);
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** An open GPU: allocations, modules, streams, events and launches go through it. */
export class Device {
  /** Name, arch, compute units, memory and launch limits. */
  readonly info: DeviceInfo;
  readonly #binding: NativeBinding;
  #closed = false;
  /** Set while captureGraph runs its body: the launches captured so far. */
  #capture: { launches: number } | undefined;

  /** @internal Use openDevice(). */
  constructor(binding: NativeBinding, handle: NativeHandle, info: DeviceInfo) {
    this.#binding = binding;
    this.info = info;
    nativeOf.set(this, handle);
  }

  /** The backend this device runs on. */
  get backend(): BackendName {
    return this.info.backend;
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#closed;
  }

  /** @internal The binding, for the objects this device creates. */
  get binding(): NativeBinding {
    this.assertOpen();
    return this.#binding;
  }

  /** @internal Throws GpuUsageError when the device is closed. */
  assertOpen(): void {
    if (this.#closed) throw new GpuUsageError(`the ${this.info.backend} device ${this.info.index} (${this.info.name}) is closed`);
  }

  /** True while a captureGraph body runs. */
  get capturing(): boolean {
    return this.#capture !== undefined;
  }

  /**
   * @internal Throws GpuUsageError while a graph is captured: only launches can be captured, and
   * the runtimes reject (and invalidate the capture on) copies, allocations, frees and syncs.
   */
  assertNotCapturing(what: string): void {
    if (this.#capture) throw new GpuUsageError(`${what} is not allowed inside captureGraph: only launches are captured`);
  }

  /** Allocates `bytes` of device memory (uninitialised). */
  alloc(bytes: number): DeviceBuffer {
    this.assertNotCapturing('alloc');
    const size = requireInteger(bytes, 'allocation size', 1, Number.MAX_SAFE_INTEGER);
    const { handle, address } = callNative(() => this.binding.alloc(handleOf(this), size));
    return new DeviceBuffer(this, handle, address, size);
  }

  /** Allocates a buffer the size of `data` and copies `data` into it. */
  upload(data: ArrayBufferView): DeviceBuffer {
    const bytes = bytesOf(data, 'upload data');
    const buffer = this.alloc(Math.max(bytes.byteLength, 1));
    buffer.write(bytes);
    return buffer;
  }

  /**
   * Loads a code object: an AMD hsaco on HIP; a cubin or PTX (bytes or text) on CUDA. A PTX
   * that fails to JIT throws GpuRuntimeError with the JIT log in `log` and in the message.
   */
  loadModule(image: ArrayBufferView | string): Module {
    const bytes = typeof image === 'string' ? new TextEncoder().encode(image) : bytesOf(image, 'module image');
    if (bytes.byteLength === 0) throw new GpuUsageError('module image is empty');
    this.assertNotCapturing('loadModule');
    const handle = callNative(() => this.binding.loadModule(handleOf(this), bytes));
    return new Module(this, handle);
  }

  /** Creates a stream (ordered with the default stream, like CU_STREAM_DEFAULT). */
  createStream(): Stream {
    return new Stream(this, callNative(() => this.binding.createStream(handleOf(this))));
  }

  /** Creates an event with timing enabled. */
  createEvent(): GpuEvent {
    return new GpuEvent(this, callNative(() => this.binding.createEvent(handleOf(this))));
  }

  /**
   * Launches `fn` on a `grid` of blocks of `block` threads. `args` are values for the
   * function's signature (or a buffer from packKernargs). Shapes, shared memory, stream and
   * argument buffers are checked against the device limits before anything is launched.
   */
  launch(fn: KernelFunction, grid: Dim3, block: Dim3, args: LaunchArgs, options: LaunchOptions = {}): void {
    this.assertOpen();
    if (!(fn instanceof KernelFunction)) throw new GpuUsageError('launch needs a KernelFunction from module.getFunction()');
    if (fn.module.device !== this) throw new GpuUsageError(`function '${fn.name}' belongs to another device`);
    fn.module.assertLive();
    const g = toDim3(grid, 'grid');
    const b = toDim3(block, 'block');
    const { info } = this;
    for (let i = 0; i < 3; i++) {
      const axis = 'xyz'[i];
      if (b[i]! > info.maxBlockDim[i]!) throw new GpuUsageError(`block.${axis} = ${b[i]} exceeds the device limit ${info.maxBlockDim[i]}`);
      if (g[i]! > info.maxGridDim[i]!) throw new GpuUsageError(`grid.${axis} = ${g[i]} exceeds the device limit ${info.maxGridDim[i]}`);
    }
    const threads = b[0] * b[1] * b[2];
    const threadLimit = Math.min(info.maxThreadsPerBlock, fn.attributes.maxThreadsPerBlock > 0 ? fn.attributes.maxThreadsPerBlock : Infinity);
    if (threads > threadLimit) {
      throw new GpuUsageError(`block of ${threads} threads exceeds the limit of ${threadLimit} for '${fn.name}' on this device`);
    }
    const shared = requireInteger(options.sharedBytes ?? 0, 'sharedBytes', 0, 2 ** 32 - 1);
    const sharedLimit = info.maxSharedPerBlockOptin - fn.attributes.staticSharedBytes;
    if (shared > sharedLimit) {
      throw new GpuUsageError(
        `sharedBytes = ${shared} exceeds the ${sharedLimit} bytes of dynamic shared memory available to '${fn.name}' ` +
          `(${info.maxSharedPerBlockOptin} per block, ${fn.attributes.staticSharedBytes} static)`,
      );
    }
    if (this.#capture && options.stream !== undefined && options.stream !== null) {
      throw new GpuUsageError('launches inside captureGraph take no stream: they are captured on the capture stream');
    }
    const stream = streamHandleOf(options.stream, this);
    const packed = this.packFor(fn, args);
    callNative(() => this.#binding.launch(handleOf(fn), g[0], g[1], g[2], b[0], b[1], b[2], shared, stream, packed.bytes, options.programmatic === true));
    if (this.#capture) this.#capture.launches++;
  }

  /** Whether this device's runtime library exports the graph entry points (CUDA 11.4+ drivers, HIP 6). */
  graphSupport(): GraphSupport {
    const { supported, missing } = callNative(() => this.binding.graphSupport(this.info.backend));
    return Object.freeze({ supported, missingSymbols: Object.freeze(missing.split(', ').filter((n) => n !== '')) });
  }

  /**
   * Captures the launches `body` issues on this device into a graph instead of running them
   * (stream capture on a non-blocking stream the addon creates: the default stream cannot be
   * captured), instantiates it and returns it; `graph.launch()` replays them all as one launch.
   * Inside `body` only launches are allowed (without a stream option; copies, allocations,
   * syncs and event records throw GpuUsageError), and `body` must be synchronous. When `body`
   * throws, the capture is ended and discarded and the error rethrown: the device stays usable.
   * Throws GpuFeatureUnavailableError when the runtime library lacks the graph entry points.
   */
  captureGraph(body: () => void): Graph {
    this.assertOpen();
    if (this.#capture) throw new GpuUsageError('captureGraph does not nest: a capture is already in progress');
    if (typeof body !== 'function') throw new GpuUsageError('captureGraph needs a function that issues the launches');
    callNative(() => this.#binding.beginCapture(handleOf(this)));
    const capture = { launches: 0 };
    this.#capture = capture;
    let result: unknown;
    try {
      result = body();
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        throw new GpuUsageError('captureGraph needs a synchronous body: launches issued after it returned would not be captured');
      }
    } catch (error) {
      this.#capture = undefined;
      if (!this.#closed) {
        try {
          this.#binding.abortCapture(handleOf(this));
        } catch {
          // the body's error is the one to report
        }
      }
      throw error;
    }
    this.#capture = undefined;
    this.assertOpen(); // closed by the body: closing discarded the capture
    const handle = callNative(() => this.#binding.endCapture(handleOf(this)));
    return new Graph(this, handle, capture.launches);
  }

  private packFor(fn: KernelFunction, args: LaunchArgs): PackedKernargs {
    let packed: PackedKernargs;
    if (isPacked(args)) {
      if (fn.signature && !sameKernargTypes(fn.signature, args.signature)) {
        const types = (s: KernargSignature) => s.map((p) => p.type).join(', ');
        throw new KernargError(`packed arguments (${types(args.signature)}) do not match '${fn.name}' (${types(fn.signature)})`);
      }
      if (args.bytes.byteLength !== args.layout.size) {
        throw new KernargError(`packed arguments hold ${args.bytes.byteLength} bytes, their layout needs ${args.layout.size}`);
      }
      packed = args;
    } else {
      if (!fn.signature) {
        throw new KernargError(`'${fn.name}' has no signature: pass one to getFunction(name, signature) or pack with packKernargs()`);
      }
      packed = scratchPack(fn, fn.signature, args);
    }
    for (const pointer of packed.pointers) this.checkPointer(pointer);
    return packed;
  }

  private checkPointer(pointer: DeviceAddressable): void {
    const buffer = pointer instanceof DeviceView ? pointer.buffer : pointer instanceof DeviceBuffer ? pointer : undefined;
    if (buffer === undefined) return;
    if (buffer.device !== this) throw new KernargError('a pointer argument refers to memory of another device');
    buffer.assertLive();
  }

  /** Waits until all work on the device has finished. */
  synchronize(): void {
    this.assertNotCapturing('synchronize');
    callNative(() => this.binding.synchronize(handleOf(this)));
  }

  /**
   * Releases every object of the device (events, streams, modules, memory) and the device
   * itself. Using any of them afterwards throws GpuUsageError. Closing twice is a no-op.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    callNative(() => this.#binding.closeDevice(handleOf(this)));
  }
}

/**
 * What buffers, modules, streams, events and graphs share: an owning device, a native handle, and a
 * release that runs once and not at all after the device closed (closing released everything).
 */
abstract class DeviceObject {
  readonly device: Device;
  #released = false;

  constructor(device: Device, handle: NativeHandle) {
    this.device = device;
    nativeOf.set(this, handle);
  }

  /** True after the object's own release or after the device was closed. */
  protected get released(): boolean {
    return this.#released || this.device.closed;
  }

  /** What a use after the object's own release is told. */
  protected abstract releasedMessage(): string;

  /** @internal Throws GpuUsageError when the device is closed or the object was released. */
  assertLive(): void {
    this.device.assertOpen();
    if (this.#released) throw new GpuUsageError(this.releasedMessage());
  }

  protected releaseOnce(release: (binding: NativeBinding, handle: NativeHandle) => void): void {
    if (this.#released) return;
    this.#released = true;
    if (this.device.closed) return;
    callNative(() => release(this.device.binding, handleOf(this)));
  }
}

/** A device allocation. Free it with free(); a garbage-collected buffer is freed by its finalizer. */
export class DeviceBuffer extends DeviceObject implements DeviceAddressable {
  readonly byteLength: number;
  readonly #address: bigint;

  /** @internal Use device.alloc(). */
  constructor(device: Device, handle: NativeHandle, address: bigint, byteLength: number) {
    super(device, handle);
    this.byteLength = byteLength;
    this.#address = address;
  }

  /** True after free() or after the device was closed. */
  get freed(): boolean {
    return this.released;
  }

  protected releasedMessage(): string {
    return `the ${this.byteLength}-byte device buffer was freed`;
  }

  /** The device address (for kernel arguments). Throws once freed. */
  get address(): bigint {
    this.assertLive();
    return this.#address;
  }

  private range(byteOffset: number, byteLength: number, what: string): void {
    requireInteger(byteOffset, `${what} byte offset`, 0, this.byteLength);
    if (byteLength > this.byteLength - byteOffset) {
      throw new GpuUsageError(`${what}: bytes [${byteOffset}, ${byteOffset + byteLength}) fall outside the ${this.byteLength}-byte buffer`);
    }
  }

  /** Copies host data (any typed array or DataView, honouring its byteOffset) to `byteOffset`. */
  write(data: ArrayBufferView, byteOffset = 0): this {
    this.assertLive();
    this.device.assertNotCapturing('write');
    const bytes = bytesOf(data, 'write source');
    this.range(byteOffset, bytes.byteLength, 'write');
    callNative(() => this.device.binding.copyToDevice(handleOf(this), byteOffset, bytes));
    return this;
  }

  /** Copies device bytes from `byteOffset` into `target` (its full byteLength); returns `target`. */
  read<T extends ArrayBufferView>(target: T, byteOffset = 0): T {
    this.assertLive();
    this.device.assertNotCapturing('read');
    const bytes = bytesOf(target, 'read target');
    this.range(byteOffset, bytes.byteLength, 'read');
    callNative(() => this.device.binding.copyFromDevice(handleOf(this), byteOffset, bytes));
    return target;
  }

  /** Sets `byteLength` bytes from `byteOffset` to `value` (0-255); default: the whole buffer. */
  fill(value: number, byteOffset = 0, byteLength = this.byteLength - byteOffset): this {
    this.assertLive();
    this.device.assertNotCapturing('fill');
    requireInteger(value, 'fill value', 0, 255);
    requireInteger(byteLength, 'fill byte length', 0, Number.MAX_SAFE_INTEGER);
    this.range(byteOffset, byteLength, 'fill');
    callNative(() => this.device.binding.memset(handleOf(this), byteOffset, value, byteLength));
    return this;
  }

  /** Copies `byteLength` bytes from `source` (same device) at `sourceOffset` to `byteOffset` here. */
  copyFrom(source: DeviceBuffer, byteOffset = 0, sourceOffset = 0, byteLength = Math.min(this.byteLength - byteOffset, source.byteLength - sourceOffset)): this {
    this.assertLive();
    this.device.assertNotCapturing('copyFrom');
    if (!(source instanceof DeviceBuffer)) throw new GpuUsageError('copyFrom needs a DeviceBuffer');
    if (source.device !== this.device) throw new GpuUsageError('copyFrom: the source buffer belongs to another device');
    source.assertLive();
    requireInteger(byteLength, 'copy byte length', 0, Number.MAX_SAFE_INTEGER);
    this.range(byteOffset, byteLength, 'copyFrom destination');
    source.range(sourceOffset, byteLength, 'copyFrom source');
    callNative(() => this.device.binding.copyDeviceToDevice(handleOf(this), byteOffset, handleOf(source), sourceOffset, byteLength));
    return this;
  }

  /** A window into this buffer, usable as a pointer kernel argument (address + byteOffset). */
  view(byteOffset: number, byteLength = this.byteLength - byteOffset): DeviceView {
    this.assertLive();
    requireInteger(byteLength, 'view byte length', 0, Number.MAX_SAFE_INTEGER);
    this.range(byteOffset, byteLength, 'view');
    return new DeviceView(this, byteOffset, byteLength);
  }

  /** Frees the memory now. Freeing twice is a no-op; any other use afterwards throws. */
  free(): void {
    if (!this.released) this.device.assertNotCapturing('free');
    this.releaseOnce((binding, handle) => binding.free(handle));
  }
}

/** A byte range of a DeviceBuffer, for pointer arguments into the middle of a buffer. */
export class DeviceView implements DeviceAddressable {
  readonly buffer: DeviceBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;

  /** @internal Use buffer.view(). */
  constructor(buffer: DeviceBuffer, byteOffset: number, byteLength: number) {
    this.buffer = buffer;
    this.byteOffset = byteOffset;
    this.byteLength = byteLength;
  }

  /** The buffer's address plus byteOffset. Throws once the buffer is freed. */
  get address(): bigint {
    return this.buffer.address + BigInt(this.byteOffset);
  }
}

/** A loaded code object. */
export class Module extends DeviceObject {
  /** @internal Use device.loadModule(). */
  constructor(device: Device, handle: NativeHandle) {
    super(device, handle);
  }

  /** True after unload() or after the device was closed. */
  get unloaded(): boolean {
    return this.released;
  }

  protected releasedMessage(): string {
    return 'the module was unloaded';
  }

  /**
   * Looks up a kernel by its symbol name. With a `signature`, launches take argument values and
   * pack them; without one they need a packKernargs() buffer. Throws GpuRuntimeError
   * (cuModuleGetFunction / hipModuleGetFunction) when the module has no such kernel.
   */
  getFunction(name: string, signature?: KernargSignature): KernelFunction {
    this.assertLive();
    if (typeof name !== 'string' || name === '') throw new GpuUsageError('function name must be a non-empty string');
    if (signature !== undefined) kernargLayout(signature); // a bad signature fails here, not at first launch
    const { handle, attributes } = callNative(() => this.device.binding.getFunction(handleOf(this), name));
    return new KernelFunction(this, handle, name, Object.freeze({ ...attributes }), signature ? Object.freeze(signature.map((spec) => Object.freeze({ name: spec.name, type: spec.type }))) : undefined);
  }

  /** Unloads the module; its functions can no longer be launched. Unloading twice is a no-op. */
  unload(): void {
    if (!this.released) this.device.assertNotCapturing('unload');
    this.releaseOnce((binding, handle) => binding.unloadModule(handle));
  }
}

/** A kernel of a loaded module. */
export class KernelFunction {
  readonly module: Module;
  readonly name: string;
  /** Registers, static shared memory, local (spill) bytes and the thread limit the runtime reports. */
  readonly attributes: NativeFunctionAttributes;
  /** The parameter list, when given to getFunction. */
  readonly signature: KernargSignature | undefined;

  /** @internal Use module.getFunction(). */
  constructor(module: Module, handle: NativeHandle, name: string, attributes: NativeFunctionAttributes, signature: KernargSignature | undefined) {
    this.module = module;
    this.name = name;
    this.attributes = attributes;
    this.signature = signature;
    nativeOf.set(this, handle);
  }

  /** Same as `device.launch(this, ...)`. */
  launch(grid: Dim3, block: Dim3, args: LaunchArgs, options: LaunchOptions = {}): void {
    this.module.device.launch(this, grid, block, args, options);
  }
}

/** A stream of ordered work. */
export class Stream extends DeviceObject {
  /** @internal Use device.createStream(). */
  constructor(device: Device, handle: NativeHandle) {
    super(device, handle);
  }

  protected releasedMessage(): string {
    return 'the stream was destroyed';
  }

  /** Waits until the stream's work has finished. */
  synchronize(): void {
    this.assertLive();
    this.device.assertNotCapturing('stream synchronize');
    callNative(() => this.device.binding.synchronizeStream(handleOf(this)));
  }

  /** Destroys the stream. Destroying twice is a no-op. */
  destroy(): void {
    this.releaseOnce((binding, handle) => binding.destroyStream(handle));
  }
}

/** A timing event. */
export class GpuEvent extends DeviceObject {
  /** @internal Use device.createEvent(). */
  constructor(device: Device, handle: NativeHandle) {
    super(device, handle);
  }

  protected releasedMessage(): string {
    return 'the event was destroyed';
  }

  /** Records the event on `stream` (default: the default stream). */
  record(stream?: Stream | null): this {
    this.assertLive();
    this.device.assertNotCapturing('event record');
    const streamHandle = streamHandleOf(stream, this.device);
    callNative(() => this.device.binding.recordEvent(handleOf(this), streamHandle));
    return this;
  }

  /** Waits until the work before the event's record has finished. */
  synchronize(): void {
    this.assertLive();
    this.device.assertNotCapturing('event synchronize');
    callNative(() => this.device.binding.synchronizeEvent(handleOf(this)));
  }

  /** Destroys the event. Destroying twice is a no-op. */
  destroy(): void {
    this.releaseOnce((binding, handle) => binding.destroyEvent(handle));
  }
}

/**
 * An instantiated graph of captured launches (device.captureGraph). One launch() replays them
 * all, in capture order, as a single runtime launch.
 */
export class Graph extends DeviceObject {
  /** Kernel launches the graph holds. */
  readonly launches: number;

  /** @internal Use device.captureGraph(). */
  constructor(device: Device, handle: NativeHandle, launches: number) {
    super(device, handle);
    this.launches = launches;
  }

  /** True after destroy() or after the device was closed. */
  get destroyed(): boolean {
    return this.released;
  }

  protected releasedMessage(): string {
    return 'the graph was destroyed';
  }

  /**
   * Enqueues the whole graph on `stream` (default: the default stream, where events record by
   * default, so two events around it time the graph's launches back to back).
   */
  launch(stream?: Stream | null): void {
    this.assertLive();
    this.device.assertNotCapturing('graph launch');
    const streamHandle = streamHandleOf(stream, this.device);
    callNative(() => this.device.binding.launchGraph(handleOf(this), streamHandle));
  }

  /** Destroys the executable graph. Destroying twice is a no-op. */
  destroy(): void {
    this.releaseOnce((binding, handle) => binding.destroyGraph(handle));
  }
}

/** Milliseconds between two recorded and completed events of one device. */
export function elapsedMs(start: GpuEvent, end: GpuEvent): number {
  if (!(start instanceof GpuEvent) || !(end instanceof GpuEvent)) throw new GpuUsageError('elapsedMs needs two GpuEvents');
  if (start.device !== end.device) throw new GpuUsageError('elapsedMs: the events belong to different devices');
  start.device.assertNotCapturing('elapsedMs');
  start.assertLive();
  end.assertLive();
  return callNative(() => start.device.binding.elapsedMs(handleOf(start), handleOf(end)));
}

/** Launches `fn` on its device: the free-function form of `device.launch`. */
export function launch(fn: KernelFunction, grid: Dim3, block: Dim3, args: LaunchArgs, options: LaunchOptions = {}): void {
  if (!(fn instanceof KernelFunction)) throw new GpuUsageError('launch needs a KernelFunction from module.getFunction()');
  fn.module.device.launch(fn, grid, block, args, options);
}
