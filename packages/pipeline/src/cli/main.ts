import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { oneLine, UsageError } from '../io.js';
import { benchCommand, BENCH_USAGE } from './bench-command.js';
import { benchPrepCommand, BENCH_PREP_USAGE } from './bench-prep-command.js';
import { cacheCommand, CACHE_USAGE } from './cache-command.js';
import { compileAllCommand, COMPILE_ALL_USAGE } from './compile-all-command.js';
import { planCommand, PLAN_USAGE } from './plan-command.js';
import { reportCommand, REPORT_USAGE } from './report-command.js';
import { runCommand, RUN_USAGE } from './run-command.js';
import { tuneCommand, TUNE_USAGE } from './tune-command.js';
import { catalogCommand, CATALOG_USAGE } from './catalog-command.js';
import { defaultDeps } from './wiring.js';

declare const __PACKAGE_VERSION__: string;

/** Top-level usage text. */
export const USAGE = `rocke ${__PACKAGE_VERSION__}: direct-convolution kernels, compiled, cached, planned, benchmarked

usage: rocke <command> [options]      (rocke <command> --help for details)

${COMPILE_ALL_USAGE}

${PLAN_USAGE}

${BENCH_PREP_USAGE}

${BENCH_USAGE}

${TUNE_USAGE}

${CATALOG_USAGE}

${RUN_USAGE}

${REPORT_USAGE}

${CACHE_USAGE}

exit status: 0 ok, 1 failure, 2 usage error. --json prints machine-readable output on stdout.
environment: ROCKE_CACHE_DIR (cache directory), ROCKE_LLVM_DIR (LLVM install).`;

/** How long a SIGTERMed process may take to stop its work and clean up before it exits anyway. */
const TERM_GRACE_MS = 5000;

/**
 * The I/O of the running process. The first Ctrl-C aborts `io.signal` (compile-all then stops,
 * keeping finished entries); a second one ends the process as usual. SIGTERM aborts the same way
 * (running tools are killed and their temp dirs removed) and exits within {@link TERM_GRACE_MS}.
 * A closed stdout (`rocke plan | head`) is EPIPE: output stops, the work is aborted, no stack trace.
 */
export function processIo(): CliIo {
  const controller = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('\nrocke: interrupted; stopping (Ctrl-C again to quit now)\n');
    controller.abort(new Error('interrupted'));
  });
  process.once('SIGTERM', () => {
    controller.abort(new Error('terminated'));
    setTimeout(() => process.exit(143), TERM_GRACE_MS).unref();
  });
  let stdoutOpen = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    stdoutOpen = false;
    if (err.code === 'EPIPE') controller.abort(new Error('stdout closed'));
    else {
      process.stderr.write(`rocke: cannot write to stdout: ${oneLine(err.message)}\n`);
      process.exit(1);
    }
  });
  return {
    signal: controller.signal,
    stdout: (t) => void (stdoutOpen && process.stdout.write(t)),
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
      case 'catalog':
        return catalogCommand(rest, io);
      case 'tune':
        return await tuneCommand(rest, io, d);
      case 'run':
        return await runCommand(rest, io, d);
      case 'report':
        return reportCommand(rest, io);
      case 'cache':
        return cacheCommand(rest, io, d);
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
    // Reasons echo user input (flag values, paths, file contents): each line is escaped and capped,
    // and a usage error is exactly one line.
    if (err instanceof UsageError) {
      io.stderr(`rocke: ${oneLine(err.message)} (rocke --help for usage)\n`);
      return 2;
    }
    const e = err as Error;
    const lines = String(e?.message ?? err).split('\n');
    io.stderr(`${lines.map((l, i) => (i === 0 ? `rocke ${oneLine(command ?? '')}: ${oneLine(l)}` : oneLine(l))).join('\n')}\n`);
    if (io.env['ROCKE_DEBUG'] && e?.stack) io.stderr(`${e.stack}\n`);
    return 1;
  }
}
