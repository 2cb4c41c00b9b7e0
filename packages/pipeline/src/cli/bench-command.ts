import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseProblem, type Problem } from '@rocke/conv-direct';
import { summarizeBench } from '../bench/bench-report.js';
import type { BenchRequest } from '../bench/requests.js';
import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { PROBLEM_OPTIONS, PROBLEM_USAGE, problemFromValues } from './problem-input.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, targetsFrom } from './args.js';
import { benchSummaryText, writeBenchReport } from './report-command.js';

export const BENCH_USAGE = `rocke bench (<problem> | --suite SUITE.json) [--target T] [--verify] [--vs-cudnn]
            [--warmup 3] [--iters 20] [--report out.html|out.svg] [--cache-dir DIR] [--json]
  Times the cached candidates on a GPU (device events, median), verifies against @rocke/reference
  with --verify, compares with cuDNN with --vs-cudnn, prints the ranking. Exit 1 on a failed
  verification or when no GPU runtime is available.
  ${PROBLEM_USAGE}`;

/**
 * Reads a shape suite (`{"shapes": [{name, N, C, H, W, K, R, S, stride, pad, groups, dtype, cls}]}`,
 * as in ../shared/suites/public.json) into named problems; a bad shape names its index and reason.
 */
export function readSuite(text: string): BenchRequest['problems'] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`suite is not JSON: ${(err as Error).message}`);
  }
  const shapes = (data as { shapes?: unknown } | null)?.shapes;
  if (!Array.isArray(shapes) || shapes.length === 0) throw new UsageError('suite needs a non-empty "shapes" array');
  return shapes.map((s: Record<string, unknown>, i) => {
    const { name, cls, stride, pad, dilation, ...rest } = s ?? {};
    const r = parseProblem({
      strideH: stride ?? 1,
      strideW: stride ?? 1,
      padH: pad ?? 0,
      padW: pad ?? 0,
      dilationH: dilation ?? 1,
      dilationW: dilation ?? 1,
      groups: 1,
      ...rest,
    });
    if (!r.ok) throw new UsageError(`suite shape ${i} (${String(name)}): ${r.reason}`);
    return { name: typeof name === 'string' ? name : `shape${i}`, problem: r.problem as Problem, cls: typeof cls === 'string' ? cls : null };
  });
}

/** `rocke bench`. */
export async function benchCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('bench', () => parseArgs({ args: [...argv], options: {
    ...COMMON_OPTIONS,
    ...PROBLEM_OPTIONS,
    suite: { type: 'string' },
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
  const problem = problemFromValues(values);
  if (problem && values.suite) throw new UsageError('give either a problem or --suite, not both');
  let problems: BenchRequest['problems'];
  if (values.suite) {
    const path = resolve(io.cwd, values.suite);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --suite ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    problems = readSuite(text);
  } else if (problem) problems = [{ name: 'problem', problem, cls: null }];
  else throw new UsageError(`bench needs a problem or --suite\n${PROBLEM_USAGE}`);
  if (values.report && !values['vs-cudnn']) throw new UsageError('--report charts ratios against cuDNN: add --vs-cudnn');
  const request: BenchRequest = {
    problems,
    target: targetsFrom(values.target)?.[0] ?? null,
    verify: values.verify ?? false,
    vsCudnn: values['vs-cudnn'] ?? false,
    warmup: positiveInt('warmup', values.warmup, 3),
    iters: positiveInt('iters', values.iters, 20),
    cacheDir: cacheFrom(values, io).root,
  };
  if (!deps.bench) {
    io.stderr(`rocke bench: no GPU runtime is wired into this build; ${problems.length} problem(s) parsed, nothing timed\n`);
    return 1;
  }
  const result = await deps.bench(request, io);
  if (values.json) printJson(io, result);
  if (request.vsCudnn && result.rows.length) {
    const summary = summarizeBench(result.rows);
    if (!values.json) io.stdout(benchSummaryText(summary));
    if (values.report) {
      const out = resolve(io.cwd, values.report);
      writeBenchReport(out, summary);
      io.stderr(`wrote ${out}\n`);
    }
  }
  return result.failures ? 1 : 0;
}
