import type { CliDeps } from './cli-io.js';
import { elfPrunePruner } from './elf-prune-pruner.js';
import { axpyFamily } from './families/axpy.js';
import { LlvmToolchain } from './llvm-toolchain.js';

/**
 * The CLI's default seams. This is where the real packages plug in:
 * - `families`: add the conv-direct (`direct_fwd`) and split-reduce (`direct_fwd_helper`) adapters
 *   once their kernel builders are exported, and list them in `defaultFamilyNames`;
 * - `bench` / `runConv`: implement with @rocke/hip-runtime + @rocke/reference on the GPU machine.
 * Until then `compile-all` needs `--family axpy`, and `bench` / `run --device gpu` exit 1 saying so.
 */
export function defaultDeps(): CliDeps {
  return {
    families: () => [axpyFamily()],
    defaultFamilyNames: [],
    compiler: () => new LlvmToolchain(),
    pruner: () => elfPrunePruner(),
  };
}
