import { UsageError, type CliIo } from '../io.js';
import { readTextInput } from './files.js';
import { cliOp } from './wiring.js';

/** A problem with the name and class it is reported under. */
export type NamedProblem = ReturnType<typeof cliOp.defaultProblems>[number];
type Problem = NamedProblem['problem'];

/** parseArgs option table for a problem given by flags (the kernel family's). */
export const PROBLEM_OPTIONS = cliOp.problemFlags;

/** parseArgs option table for problem sets: a suite file or a file of MIOpenDriver commands. */
export const PROBLEM_SET_OPTIONS = {
  suite: { type: 'string' },
  'miopen-file': { type: 'string' },
} as const;

/** Usage text of the problem flags. */
export const PROBLEM_USAGE = cliOp.problemUsage;

/** Usage text of the problem-set inputs. */
export const PROBLEM_SET_USAGE = cliOp.problemSetUsage;

/** Most shapes one suite or MIOpenDriver file may hold: far past a network's layers, and it bounds the work a file can ask for. */
export const MAX_SUITE_SHAPES = 10_000;

/**
 * The problem named by the parsed flags, or undefined when none of them is present.
 * Throws {@link UsageError} with the family's reason for an invalid problem or mixed inputs.
 */
export function problemFromValues(values: Record<string, unknown>): Problem | undefined {
  const r = cliOp.problemFromFlags(values);
  if (r && !r.ok) throw new UsageError(r.reason);
  return r?.problem;
}

/**
 * Reads a shape suite (`{"shapes": [{name, N, C, H, W, K, R, S, stride, pad, groups, dtype, cls}]}`,
 * as in ../shared/suites/public.json) into named problems; a bad shape names its index and reason.
 */
export function readSuite(text: string): NamedProblem[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`suite is not JSON: ${(err as Error).message}`);
  }
  const shapes = (data as { shapes?: unknown } | null)?.shapes;
  if (!Array.isArray(shapes) || shapes.length === 0) throw new UsageError('suite needs a non-empty "shapes" array');
  if (shapes.length > MAX_SUITE_SHAPES) throw new UsageError(`suite has ${shapes.length} shapes, over the limit of ${MAX_SUITE_SHAPES}`);
  return shapes.map((s: unknown, i) => {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new UsageError(`suite shape ${i} is not an object`);
    const { name, cls, ...row } = s as Record<string, unknown>;
    const label = typeof name === 'string' ? name : `shape${i}`;
    const r = cliOp.problemFromSuiteRow(row);
    if (!r.ok) throw new UsageError(`suite shape ${i} (${label}): ${r.reason}`);
    return { name: label, problem: r.problem, cls: typeof cls === 'string' ? cls : null };
  });
}

/** The problems of a MIOpenDriver log and what was skipped. */
export type MiopenFileProblems = Exclude<ReturnType<typeof cliOp.readMiopenLog>, { reason: string }>;

/**
 * Reads MIOpenDriver commands, one per line, as MIOpen logs them (or bare), each problem named
 * `line<number>`: other lines, unsupported commands and repeated problems are skipped and counted.
 * No supported command at all, or more than {@link MAX_SUITE_SHAPES} problems, is a usage error.
 */
export function readMiopenFile(text: string): MiopenFileProblems {
  const r = cliOp.readMiopenLog(text, MAX_SUITE_SHAPES);
  if ('reason' in r) throw new UsageError(r.reason);
  return r;
}

/** A problem set from the command line and a one-line note on what its file skipped (null if nothing). */
export interface ProblemSetInput {
  problems: NamedProblem[];
  note: string | null;
}

/**
 * The problems named by `--suite FILE`, `--miopen-file FILE`, or one problem by flags / `--miopen`
 * (named `problem`); null when none is given. More than one of these is a usage error.
 */
export function problemSetFromValues(values: Record<string, unknown>, io: CliIo): ProblemSetInput | null {
  const suite = values['suite'];
  const miopenFile = values['miopen-file'];
  const problem = problemFromValues(values);
  const given = [typeof suite === 'string' && '--suite', typeof miopenFile === 'string' && '--miopen-file', problem && 'a problem'].filter(Boolean);
  if (given.length > 1) throw new UsageError(`give one of --suite, --miopen-file or a problem (got ${given.join(' and ')})`);
  if (typeof suite === 'string') return { problems: readSuite(readTextInput(io, '--suite', suite)), note: null };
  if (typeof miopenFile === 'string') {
    const r = readMiopenFile(readTextInput(io, '--miopen-file', miopenFile));
    const skipped = r.otherLines + r.repeats + r.unsupported.reduce((a, u) => a + u.count, 0);
    const detail = [
      r.otherLines && `${r.otherLines} other lines`,
      r.repeats && `${r.repeats} repeated problems`,
      ...r.unsupported.map((u) => `${u.count} unsupported (${u.reason})`),
    ].filter(Boolean);
    return { problems: r.problems, note: skipped ? `${miopenFile}: ${r.problems.length} problems from ${r.lines} lines; skipped ${detail.join(', ')}` : null };
  }
  return problem ? { problems: [{ name: 'problem', problem, cls: null }], note: null } : null;
}
