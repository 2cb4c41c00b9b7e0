import type { Problem } from '@rocke/conv-direct';
import type { EpilogueValues } from '@rocke/reference';
import type { TargetName } from '../compile/llvm-toolchain.js';
import type { NpyArray } from '../npy.js';

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
  /** Calls of the conv's run() (default 1): with more, the host time per call is reported. */
  repeat?: number;
  /** A fused epilogue (`--act`, `--bias`, `--residual`, ...): the run opens the fused kernels and binds its tensors. */
  epilogue?: EpilogueValues;
}
