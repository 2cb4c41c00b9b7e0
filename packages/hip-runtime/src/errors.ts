/** Which runtime a device runs on. */
export type BackendName = 'hip' | 'cuda';

/** One library path that was tried, and why it could not be used (empty when it loaded). */
export interface LoadAttempt {
  readonly backend: BackendName | 'addon';
  readonly path: string;
  readonly error: string;
}

/**
 * No GPU runtime (or not even the addon) could be loaded. The message lists every path tried
 * with the loader's own error text; `attempts` holds the same list as data.
 */
export class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
  readonly attempts: readonly LoadAttempt[];

  constructor(message: string, attempts: readonly LoadAttempt[]) {
    super(message);
    this.attempts = attempts;
  }
}

/** What a failed runtime call reports: the API, its error code, name and description. */
export interface RuntimeFailure {
  readonly backend: BackendName;
  readonly api: string;
  readonly code: number;
  readonly errorName: string;
  readonly runtimeMessage: string;
  /** The JIT compiler's log, when a PTX module failed to load. */
  readonly log?: string;
}

/** A HIP or CUDA call returned an error. */
export class GpuRuntimeError extends Error implements RuntimeFailure {
  override readonly name = 'GpuRuntimeError';
  readonly backend: BackendName;
  readonly api: string;
  readonly code: number;
  readonly errorName: string;
  readonly runtimeMessage: string;
  readonly log?: string;

  constructor(failure: RuntimeFailure) {
    const head = `${failure.api} failed: ${failure.errorName} (${failure.runtimeMessage}) [${failure.backend} error ${failure.code}]`;
    super(failure.log ? `${head}\nJIT log:\n${failure.log}` : head);
    this.backend = failure.backend;
    this.api = failure.api;
    this.code = failure.code;
    this.errorName = failure.errorName;
    this.runtimeMessage = failure.runtimeMessage;
    if (failure.log !== undefined) this.log = failure.log;
  }
}

/** The API was used wrongly (freed buffer, closed device, bad launch shape...); nothing reached the GPU. */
export class GpuUsageError extends Error {
  override readonly name: string = 'GpuUsageError';
}

/**
 * The loaded runtime library does not export the entry points a feature needs (graph capture on
 * a driver older than CUDA 11.4, say). Everything else keeps working; `missingSymbols` names them.
 */
export class GpuFeatureUnavailableError extends Error {
  override readonly name = 'GpuFeatureUnavailableError';
  readonly backend: BackendName;
  readonly missingSymbols: readonly string[];

  constructor(message: string, backend: BackendName, missingSymbols: readonly string[]) {
    super(message);
    this.backend = backend;
    this.missingSymbols = missingSymbols;
  }
}

/** A kernel argument does not fit its signature (count, name, type or range). */
export class KernargError extends GpuUsageError {
  override readonly name = 'KernargError';
  /** The argument's name, when the problem is about one argument. */
  readonly argument: string | undefined;

  constructor(message: string, argument?: string) {
    super(message);
    this.argument = argument;
  }
}

interface NativeErrorShape {
  rockeBackend?: unknown;
  rockeApi?: unknown;
  rockeCode?: unknown;
  rockeErrorName?: unknown;
  rockeRuntimeMessage?: unknown;
  rockeLog?: unknown;
  rockeUsage?: unknown;
  rockeMissingSymbols?: unknown;
}

/** Turns an error thrown by a binding into the package's error classes. */
export function translateNativeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const shape = error as Error & NativeErrorShape;
  if (typeof shape.rockeApi === 'string') {
    const failure: RuntimeFailure = {
      backend: shape.rockeBackend === 'hip' ? 'hip' : 'cuda',
      api: shape.rockeApi,
      code: typeof shape.rockeCode === 'number' ? shape.rockeCode : -1,
      errorName: typeof shape.rockeErrorName === 'string' ? shape.rockeErrorName : 'unknown',
      runtimeMessage: typeof shape.rockeRuntimeMessage === 'string' ? shape.rockeRuntimeMessage : error.message,
      ...(typeof shape.rockeLog === 'string' && shape.rockeLog !== '' ? { log: shape.rockeLog } : {}),
    };
    return new GpuRuntimeError(failure);
  }
  if (typeof shape.rockeMissingSymbols === 'string') {
    const backend = shape.rockeBackend === 'hip' ? 'hip' : 'cuda';
    return new GpuFeatureUnavailableError(error.message, backend, shape.rockeMissingSymbols.split(', ').filter((n) => n !== ''));
  }
  if (shape.rockeUsage === true || error instanceof TypeError || error instanceof RangeError) {
    return new GpuUsageError(error.message);
  }
  return error;
}

/** Runs a binding call, rethrowing its error as a package error. */
export function callNative<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw translateNativeError(error);
  }
}
