import type { Family, Pruner } from './family.js';
import type { JsonValue } from './hash.js';
import type { KernelCompiler, TargetName } from './llvm-toolchain.js';
import type { NpyArray } from './npy.js';
import type { Problem } from '@rocke/conv-direct';

/** Where the CLI reads and writes; tests pass their own to run `main` in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Draw a progress bar on stderr (else plain progress lines). */
  stderrIsTTY: boolean;
  columns?: number | undefined;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted on Ctrl-C: long commands stop cleanly and keep finished work. */
  signal?: AbortSignal | undefined;
}

/** A usage error: bad flags, unknown subcommand, bad problem. `main` prints it and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Request handed to a bench implementation. */
export interface BenchRequest {
  problems: { name: string; problem: Problem; cls: string | null }[];
  target: TargetName | null;
  verify: boolean;
  vsCudnn: boolean;
  warmup: number;
  iters: number;
  cacheDir: string;
}

/** Request handed to a run implementation (x, w already checked against the problem). */
export interface RunRequest {
  problem: Problem;
  x: NpyArray;
  w: NpyArray;
  target: TargetName | null;
  cacheDir: string;
}

/**
 * The seams the lead wires when the GPU-side packages land. Everything has a default except the
 * device-bound operations, whose absence gives a clear error (exit 1) instead of a fake result.
 */
export interface CliDeps {
  /** Every family the CLI knows, by name (`--family NAME`). */
  families(): Family[];
  /** Families used when `--family` is not given. */
  defaultFamilyNames: readonly string[];
  compiler(): KernelCompiler;
  pruner(): Pruner | null;
  /** `rocke bench`: times and verifies candidates on a GPU and returns JSON rows (see bench-report). */
  bench?: (request: BenchRequest, io: CliIo) => Promise<{ rows: JsonValue[]; failures: number }>;
  /** `rocke run`: runs the conv on a GPU with the best cached kernel and returns y. */
  runConv?: (request: RunRequest, io: CliIo) => Promise<NpyArray>;
}
