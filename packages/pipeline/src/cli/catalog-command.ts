import { resolve } from 'node:path';
import { buildCatalog } from '../api/catalog.js';
import { convRuntime } from './wiring.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { formatBytes, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson, targetsFrom } from './args.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, problemSetFromValues } from './problem-input.js';

export const CATALOG_USAGE = `rocke catalog build --target T --out DIR [--suite F | --miopen-file F | <problem>] [--cache-dir CACHE] [--json]
  Writes an AOT catalog into DIR (new or empty): every kept code object of T in CACHE (compiled,
  not pruned; content-addressed under DIR/blobs/), the split-reduce helpers, the tuning records
  of T, and for each given problem the plan chosen by record, else ranker (DIR/catalog.json).
  openConv(problem, { device, catalog: DIR }) then runs with no LLVM, no compile and no search.
  ${PROBLEM_SET_USAGE}`;

/** `rocke catalog build`. */
export function catalogCommand(argv: readonly string[], io: CliIo): number {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === 'help') {
    io.stdout(`${CATALOG_USAGE}\n`);
    return 0;
  }
  if (sub !== 'build') throw new UsageError(sub === undefined ? 'catalog needs a subcommand: build' : `unknown catalog subcommand '${sub}' (build)`);
  const { values } = parse('catalog build', () =>
    parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, ...PROBLEM_OPTIONS, ...PROBLEM_SET_OPTIONS, target: { type: 'string' }, out: { type: 'string' } }, strict: true, allowPositionals: false }),
  );
  if (values.help) {
    io.stdout(`${CATALOG_USAGE}\n`);
    return 0;
  }
  const target = targetsFrom(values.target)?.[0];
  if (!target) throw new UsageError('catalog build needs --target gfx950|gfx942|sm_90');
  if (!values.out) throw new UsageError('catalog build needs --out DIR');
  const problems = problemSetFromValues(values, io)?.problems ?? [];
  const report = buildCatalog(convRuntime(), cacheFrom(values, io).root, target, resolve(io.cwd, values.out), problems);
  if (values.json) printJson(io, report);
  else {
    if (report.plans.length) {
      io.stdout(formatTable(['shape', 'chosen by', 'kernel', 'splits'], report.plans.map((p) => [p.name, p.chosenBy, p.kernelName.replace(/^rocke_direct_/, ''), String(p.launch['splits'] ?? '')])));
    }
    for (const u of report.unplanned) io.stderr(`rocke catalog: ${u.name}: ${u.reason}\n`);
    io.stdout(`catalog ${report.dir}: ${report.kernels} kernels + ${report.helpers} helpers (${formatBytes(report.bytes)}) for ${report.target}, ${report.plans.length} plans\n`);
  }
  return report.unplanned.length ? 1 : 0;
}
