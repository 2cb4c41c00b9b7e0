import { summarizeBench } from '../bench/bench-report.js';
import type { BenchRequest } from '../bench/requests.js';
import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { formatUncovered, uncoveredProblems } from './uncovered.js';
import { checkOutput } from './files.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, PROBLEM_USAGE, problemSetFromValues } from './problem-input.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, targetsFrom } from './args.js';
import { benchSummaryText, writeBenchReport } from './report-command.js';

export const BENCH_USAGE = `rocke bench (<problem> | --suite SUITE.json | --miopen-file LOG) [--target T] [--verify] [--vs-cudnn]
            [--warmup 3] [--iters 20] [--report out.html|out.svg] [--cache-dir DIR] [--json]
  Times the cached candidates on a GPU (device events, median), verifies against @rocke/reference
  with --verify, compares with cuDNN with --vs-cudnn, prints the ranking. Exit 1 on a failed
  verification or when no GPU runtime is available. With --target, a shape with no valid candidate
  there is not timed: exit 2 with conv-direct's decisive reason (after timing the others).
  ${PROBLEM_USAGE}
  ${PROBLEM_SET_USAGE}`;

/** `rocke bench`. */
export async function benchCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('bench', () => parseArgs({ args: [...argv], options: {
    ...COMMON_OPTIONS,
    ...PROBLEM_OPTIONS,
    ...PROBLEM_SET_OPTIONS,
    target: { type: 'string' },
    verify: { type: 'boolean' },
    'vs-cudnn': { type: 'boolean' },
    warmup: { type: 'string' },
    iters: { type: 'string' },
    report: { type: 'string' },
  }, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${BENCH_USAGE}\n`);
    return 0;
  }
  const input = problemSetFromValues(values, io);
  if (!input) throw new UsageError('bench needs a problem (--n --c --h --w --k ..., or --miopen LINE), a --suite or a --miopen-file');
  const target = targetsFrom(values.target)?.[0] ?? null;
  const uncovered = target ? uncoveredProblems(input.problems, target) : [];
  if (uncovered.length === input.problems.length) throw new UsageError(`no valid candidate for ${formatUncovered(uncovered[0]!)}${uncovered.length > 1 ? ` (and ${uncovered.length - 1} more shapes)` : ''}`);
  if (input.note) io.stderr(`rocke bench: ${input.note}\n`);
  for (const u of uncovered) io.stderr(`rocke bench: not timed: ${formatUncovered(u)}\n`);
  const skip = new Set(uncovered.map((u) => u.name));
  const problems = input.problems.filter((p) => !skip.has(p.name));
  if (values.report && !values['vs-cudnn']) throw new UsageError('--report charts ratios against cuDNN: add --vs-cudnn');
  if (values.report) checkOutput(io, '--report', values.report);
  const request: BenchRequest = {
    problems,
    target,
    verify: values.verify ?? false,
    vsCudnn: values['vs-cudnn'] ?? false,
    warmup: positiveInt('warmup', values.warmup, 3),
    iters: positiveInt('iters', values.iters, 20),
    cacheDir: cacheFrom(values, io).root,
  };
  if (!deps.bench) {
    throw new Error(`no GPU runtime is wired into this build; ${problems.length} problem(s) parsed, nothing timed`);
  }
  const result = await deps.bench(request, io);
  if (values.json) printJson(io, result);
  if (request.vsCudnn && result.rows.length) {
    const summary = summarizeBench(result.rows);
    if (!values.json) io.stdout(benchSummaryText(summary));
    if (values.report) io.stderr(`wrote ${writeBenchReport(io, '--report', values.report, summary)}\n`);
  }
  return result.failures ? 1 : uncovered.length ? 2 : 0;
}
