import type { TargetName } from '../compile/llvm-toolchain.js';
import type { NamedOpProblem } from '../planner.js';

/** Request handed to a bench implementation. */
export interface BenchRequest {
  problems: NamedOpProblem[];
  target: TargetName | null;
  verify: boolean;
  vsCudnn: boolean;
  warmup: number;
  iters: number;
  cacheDir: string;
}
