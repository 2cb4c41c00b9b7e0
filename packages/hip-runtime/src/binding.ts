import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { BackendName, LoadAttempt } from './errors.js';
import { RuntimeUnavailableError } from './errors.js';

/** Opaque native object (a device, buffer, module, function, stream, event or graph). */
export type NativeHandle = object;

/** What `load` reports: whether a library loaded, which one, and every path tried. */
export interface NativeLoadResult {
  readonly loaded: boolean;
  readonly path?: string;
  readonly attempts: readonly { readonly path: string; readonly error: string }[];
}

/** Device facts as the addon reports them. */
export interface NativeDeviceInfo {
  readonly backend: BackendName;
  readonly index: number;
  readonly name: string;
  /** `gfx950`, `gfx942`, `sm_90`... (AMD target features stripped). */
  readonly arch: string;
  /** AMD: the full target id (`gfx942:sramecc+:xnack-`); NVIDIA: same as arch. */
  readonly archFull: string;
  /** Compute units (AMD) or streaming multiprocessors (NVIDIA). */
  readonly computeUnits: number;
  readonly totalMemory: number;
  readonly warpSize: number;
  readonly maxThreadsPerBlock: number;
  readonly maxBlockDim: readonly number[];
  readonly maxGridDim: readonly number[];
  /** Shared memory (LDS) a block may use without opt-in. */
  readonly maxSharedPerBlock: number;
  /** Shared memory a block may use after opt-in (NVIDIA); equals maxSharedPerBlock on AMD. */
  readonly maxSharedPerBlockOptin: number;
  readonly driverVersion: number;
}

/** Per-kernel facts the runtime reports after loading. */
export interface NativeFunctionAttributes {
  readonly maxThreadsPerBlock: number;
  readonly staticSharedBytes: number;
  readonly constBytes: number;
  readonly localBytes: number;
  readonly numRegs: number;
}

/**
 * The native surface the TypeScript API drives. The addon implements it; tests inject a fake
 * (see createFakeBinding). Errors thrown by a runtime call carry `rockeApi`, `rockeCode`,
 * `rockeErrorName`, `rockeRuntimeMessage` (and `rockeLog`); misuse errors carry `rockeUsage`;
 * a feature whose entry points the library lacks carries `rockeMissingSymbols` (comma-separated).
 */
export interface NativeBinding {
  readonly abiVersion: number;
  load(backend: BackendName, candidates: readonly string[]): NativeLoadResult;
  deviceCount(backend: BackendName): number;
  deviceInfo(backend: BackendName, index: number): NativeDeviceInfo;
  openDevice(backend: BackendName, index: number): NativeHandle;
  closeDevice(device: NativeHandle): void;
  synchronize(device: NativeHandle): void;
  alloc(device: NativeHandle, bytes: number): { readonly handle: NativeHandle; readonly address: bigint };
  free(buffer: NativeHandle): void;
  copyToDevice(buffer: NativeHandle, offset: number, src: Uint8Array): void;
  copyFromDevice(buffer: NativeHandle, offset: number, dst: Uint8Array): void;
  copyDeviceToDevice(dst: NativeHandle, dstOffset: number, src: NativeHandle, srcOffset: number, bytes: number): void;
  memset(buffer: NativeHandle, offset: number, value: number, bytes: number): void;
  loadModule(device: NativeHandle, image: Uint8Array): NativeHandle;
  unloadModule(module: NativeHandle): void;
  getFunction(module: NativeHandle, name: string): { readonly handle: NativeHandle; readonly attributes: NativeFunctionAttributes };
  launch(
    fn: NativeHandle,
    gridX: number,
    gridY: number,
    gridZ: number,
    blockX: number,
    blockY: number,
    blockZ: number,
    sharedBytes: number,
    stream: NativeHandle | null,
    kernargs: Uint8Array,
    /** Programmatic stream serialization (CUDA); ignored where the runtime has none. */
    programmatic?: boolean,
  ): void;
  createStream(device: NativeHandle): NativeHandle;
  destroyStream(stream: NativeHandle): void;
  synchronizeStream(stream: NativeHandle): void;
  createEvent(device: NativeHandle): NativeHandle;
  destroyEvent(event: NativeHandle): void;
  recordEvent(event: NativeHandle, stream: NativeHandle | null): void;
  synchronizeEvent(event: NativeHandle): void;
  elapsedMs(start: NativeHandle, end: NativeHandle): number;
  /** Whether the loaded library exports the graph entry points; `missing` names the absent ones (comma-separated). */
  graphSupport(backend: BackendName): { readonly supported: boolean; readonly missing: string };
  /** Starts capturing the device's default-stream launches (on a non-blocking capture stream) instead of running them. */
  beginCapture(device: NativeHandle): void;
  /** Ends the capture and instantiates what it captured; returns the executable graph. */
  endCapture(device: NativeHandle): NativeHandle;
  /** Ends a capture in progress and discards it; a no-op without one. */
  abortCapture(device: NativeHandle): void;
  launchGraph(graph: NativeHandle, stream: NativeHandle | null): void;
  destroyGraph(graph: NativeHandle): void;
}

/** The ABI the TypeScript side expects from the addon (bumped with incompatible changes). */
export const NATIVE_ABI_VERSION = 2;

/** File name of the compiled addon (binding.gyp's target_name). */
export const ADDON_FILE = 'rocke_hip_runtime.node';

/** File name of the prebuilt addon inside prebuilds/<platform>-<arch>/ (prebuildify's naming, read by node-gyp-build at install). */
export const PREBUILD_FILE = '@rocke+hip-runtime.glibc.node';

/** Environment variable naming an explicit library path for each backend. */
export const LIBRARY_ENV: Readonly<Record<BackendName, string>> = Object.freeze({
  hip: 'ROCKE_HIP_LIB',
  cuda: 'ROCKE_CUDA_LIB',
});

/**
 * Library paths tried for a backend, in order: the env override (when set), the sonames, and
 * for HIP the default ROCm install.
 */
export function libraryCandidates(backend: BackendName, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const override = env[LIBRARY_ENV[backend]];
  const fromEnv = override !== undefined && override !== '' ? [override] : [];
  if (backend === 'hip') {
    return [...fromEnv, 'libamdhip64.so', 'libamdhip64.so.6', 'libamdhip64.so.7', '/opt/rocm/lib/libamdhip64.so'];
  }
  return [...fromEnv, 'libcuda.so.1', 'libcuda.so'];
}

/**
 * Where the compiled addon is looked for, in node-gyp-build's order: a local build
 * (build/Release, build/Debug: a source build at install, or a developer's), then the prebuild
 * the package ships for this platform.
 */
export function addonCandidates(): string[] {
  // src/*.ts (tests) and dist/index.* (built) both sit one level below the package root.
  const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
  return [
    join(root, 'build', 'Release', ADDON_FILE),
    join(root, 'build', 'Debug', ADDON_FILE),
    join(root, 'prebuilds', `${process.platform}-${process.arch}`, PREBUILD_FILE),
  ];
}

/** What to do when no addon loads: where prebuilds exist, and how to see why a source build failed. */
export const ADDON_HELP =
  'The package ships the addon prebuilt for linux-x64 (glibc 2.34 or later); elsewhere it is built from source at install,\n' +
  'which needs a C++17 compiler, make and Python: `npm rebuild @rocke/hip-runtime --foreground-scripts` shows why it failed.';

let defaultBinding: NativeBinding | undefined;

function requireAddon(path: string): NativeBinding {
  const required = createRequire(import.meta.url)(path) as Partial<NativeBinding>;
  if (typeof required.abiVersion !== 'number' || typeof required.launch !== 'function') {
    throw new Error('it loaded, but it is not the @rocke/hip-runtime addon (no abiVersion or launch export)');
  }
  if (required.abiVersion !== NATIVE_ABI_VERSION) {
    throw new Error(`it has ABI version ${required.abiVersion}, expected ${NATIVE_ABI_VERSION}: rebuild it (npm rebuild @rocke/hip-runtime)`);
  }
  return required as NativeBinding;
}

/** One line on why a candidate did not load; a file that is not there is just "not found". */
function addonError(path: string, error: unknown): string {
  if (!existsSync(path)) return 'not found';
  return error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
}

/**
 * The binding to use: an injected object as is, a path to a `.node` file loaded from there,
 * or (no argument) the package's own addon, loaded once and cached. Loading never happens at
 * import time. Throws RuntimeUnavailableError listing the paths tried when no addon loads.
 */
export function getBinding(override?: NativeBinding | string): NativeBinding {
  if (typeof override === 'object' && override !== null) return override;
  if (override === undefined && defaultBinding) return defaultBinding;
  const paths = typeof override === 'string' ? [override] : addonCandidates();
  const attempts: LoadAttempt[] = [];
  for (const path of paths) {
    try {
      const binding = requireAddon(path);
      if (override === undefined) defaultBinding = binding;
      return binding;
    } catch (error) {
      attempts.push({ backend: 'addon', path, error: addonError(path, error) });
    }
  }
  const lines = attempts.map((a) => `  ${a.path}: ${a.error}`);
  throw new RuntimeUnavailableError(
    [
      `@rocke/hip-runtime: the native addon could not be loaded. Tried:`,
      ...lines,
      ADDON_HELP,
    ].join('\n'),
    attempts,
  );
}
