import type { RunRequest } from '../api/run-conv.js';
import type { BenchRequest } from '../bench/requests.js';
import type { TuneLine } from '../bench/tune.js';
import type { AnyFamily, AnyPruner } from '../compile/family.js';
import type { KernelCompiler } from '../compile/llvm-toolchain.js';
import type { JsonValue } from '../hash.js';
import type { OpPlanner } from '../planner.js';
import type { CliIo } from '../io.js';
import type { NpyArray } from '../npy.js';

/**
 * The seams the lead wires when the GPU-side packages land. Everything has a default except the
 * device-bound operations, whose absence gives a clear error (exit 1) instead of a fake result.
 */
export interface CliDeps {
  /** Every family the CLI knows, by name (`--family NAME`). */
  families(): AnyFamily[];
  /** Families used when `--family` is not given. */
  defaultFamilyNames: readonly string[];
  compiler(): KernelCompiler;
  pruner(): AnyPruner | null;
  /** What bench/ knows of the kernel family it selects and times (bench-prep's selection, the bench's launch plans). */
  planner(): OpPlanner;
  /** `rocke bench`: times and verifies candidates on a GPU and returns JSON rows (see bench-report). */
  bench?: (request: BenchRequest, io: CliIo) => Promise<{ rows: JsonValue[]; failures: number }>;
  /** `rocke tune`: benchmarks and verifies on a GPU, writes the winners as tuning records beside the kernels. */
  tune?: (request: BenchRequest, io: CliIo) => Promise<{ lines: TuneLine[]; failures: number }>;
  /** `rocke run`: runs the conv on a GPU through openConv (tuning record, else the ranker) and returns y. */
  runConv?: (request: RunRequest, io: CliIo) => Promise<NpyArray>;
}
