import type { CliDeps } from './deps.js';
import { elfPrunePruner } from '../compile/elf-prune-pruner.js';
import { axpyFamily } from '../compile/axpy-family.js';
import { convDirectFamily } from '@rocke/conv-direct';
import { splitReduceFamily } from '@rocke/split-reduce';
import { gpuRunConv } from '../api/run-conv.js';
import { gpuBench } from '../bench/gpu-bench.js';
import { gpuTune } from '../bench/tune.js';
import { LlvmToolchain } from '../compile/llvm-toolchain.js';

/**
 * The CLI's default seams. This is where the real packages plug in:
 * - `families`: conv-direct (`direct_fwd`: dense, split_c and grouped; its AOT grid serves
 *   `compile-all --grid aot`, a problem set replaces it with `problemSetFamily`) and split-reduce
 *   (`direct_fwd_helper`) are wired and are the default set;
 * - `bench` / `tune`: bench/ (hip-runtime launches timed with device events, verified with
 *   @rocke/reference, kernels from `--cache-dir`: a bench-prep manifest or a compile cache;
 *   tune writes tuning records beside them); `runConv`: api/ (openConv: record, else ranker).
 * `axpy` is the hand-written smoke family, selectable by name but never part of the default set.
 */
export function defaultDeps(): CliDeps {
  return {
    families: () => [convDirectFamily(), splitReduceFamily(), axpyFamily()],
    defaultFamilyNames: ['direct_fwd', 'direct_fwd_helper'],
    compiler: () => new LlvmToolchain(),
    pruner: () => elfPrunePruner(),
    bench: (request, io) => gpuBench(request, io),
    runConv: (request, io) => gpuRunConv(request, io),
    tune: (request, io) => gpuTune(request, io),
  };
}
