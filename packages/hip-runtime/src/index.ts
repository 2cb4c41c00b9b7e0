/**
 * @rocke/hip-runtime: despite the name, it binds CUDA too — one API over HIP (AMD) and the CUDA
 * driver (NVIDIA), through a native addon that dlopens the runtime library at first use.
 * Importing this module loads nothing. Test doubles (the fake binding) are in
 * `@rocke/hip-runtime/testing`.
 */
declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/hip-runtime. */
export const VERSION: string = __PACKAGE_VERSION__;

export type { BackendName, LoadAttempt, RuntimeFailure } from './errors.js';
export { GpuFeatureUnavailableError, GpuRuntimeError, GpuUsageError, KernargError, RuntimeUnavailableError } from './errors.js';

export type {
  DeviceAddressable,
  KernargField,
  KernargLayout,
  KernargSignature,
  KernargSpec,
  KernargType,
  KernargValue,
  KernargValues,
  PackedKernargs,
} from './kernargs.js';
export { kernargLayout, packKernargs, sameKernargTypes, unpackKernargs } from './kernargs.js';

export type { NativeBinding, NativeDeviceInfo, NativeFunctionAttributes, NativeHandle, NativeLoadResult } from './binding.js';
export { ADDON_FILE, addonCandidates, getBinding, LIBRARY_ENV, libraryCandidates, NATIVE_ABI_VERSION } from './binding.js';

export type { BackendChoice, DeviceInfo, Dim3, GraphSupport, LaunchArgs, LaunchOptions, OpenDeviceOptions, RuntimeOptions, RuntimeProbe } from './runtime.js';
export {
  Device,
  DeviceBuffer,
  DeviceView,
  elapsedMs,
  GpuEvent,
  Graph,
  KernelFunction,
  launch,
  Module,
  openDevice,
  probeRuntime,
  Stream,
  unavailableMessage,
} from './runtime.js';

