import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { benchCommand, BENCH_USAGE } from './bench-command.js';
import { benchPrepCommand, BENCH_PREP_USAGE } from './bench-prep-command.js';
import { cacheCommand, CACHE_USAGE } from './cache-command.js';
import { compileAllCommand, COMPILE_ALL_USAGE } from './compile-all-command.js';
import { planCommand, PLAN_USAGE } from './plan-command.js';
import { reportCommand, REPORT_USAGE } from './report-command.js';
import { runCommand, RUN_USAGE } from './run-command.js';
import { defaultDeps } from './wiring.js';

declare const __PACKAGE_VERSION__: string;

/** Top-level usage text. */
export const USAGE = `rocke ${__PACKAGE_VERSION__}: direct-convolution kernels, compiled, cached, planned, benchmarked

usage: rocke <command> [options]      (rocke <command> --help for details)

${COMPILE_ALL_USAGE}

${PLAN_USAGE}

${BENCH_PREP_USAGE}

${BENCH_USAGE}

${RUN_USAGE}

${REPORT_USAGE}

${CACHE_USAGE}

exit status: 0 ok, 1 failure, 2 usage error. --json prints machine-readable output on stdout.
environment: ROCKE_CACHE_DIR (cache directory), ROCKE_LLVM_DIR (LLVM install).`;

/**
 * The I/O of the running process. The first Ctrl-C aborts `io.signal` (compile-all then stops,
 * keeping finished entries); a second one ends the process as usual.
 */
export function processIo(): CliIo {
  const controller = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('\nrocke: interrupted; stopping (Ctrl-C again to quit now)\n');
    controller.abort(new Error('interrupted'));
  });
  return {
    signal: controller.signal,
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    stderrIsTTY: process.stderr.isTTY === true,
    columns: process.stderr.columns,
    env: process.env,
    cwd: process.cwd(),
  };
}

/**
 * Runs the `rocke` CLI on `argv` (without the node and script paths) and resolves with the exit
 * status: 0 ok, 1 failure, 2 usage error. Never throws for bad input; tests call it in-process
 * with their own `io` and `deps`.
 */
export async function main(argv: readonly string[], io: CliIo = processIo(), deps?: Partial<CliDeps>): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const d: CliDeps = { ...defaultDeps(), ...deps };
    switch (command) {
      case 'compile-all':
        return await compileAllCommand(rest, io, d);
      case 'plan':
        return planCommand(rest, io);
      case 'bench-prep':
        return await benchPrepCommand(rest, io, d);
      case 'bench':
        return await benchCommand(rest, io, d);
      case 'run':
        return await runCommand(rest, io, d);
      case 'report':
        return reportCommand(rest, io);
      case 'cache':
        return cacheCommand(rest, io);
      case '--help':
      case '-h':
      case 'help':
        io.stdout(`${USAGE}\n`);
        return 0;
      case '--version':
        io.stdout(`${__PACKAGE_VERSION__}\n`);
        return 0;
      case undefined:
        throw new UsageError('no command given');
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`rocke: ${err.message}\nrun 'rocke --help' for usage\n`);
      return 2;
    }
    const e = err as Error;
    io.stderr(`rocke ${command ?? ''}: ${e?.message ?? String(err)}\n`);
    if (io.env['ROCKE_DEBUG'] && e?.stack) io.stderr(`${e.stack}\n`);
    return 1;
  }
}
