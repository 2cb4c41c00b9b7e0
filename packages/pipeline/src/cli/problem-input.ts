import { parseMiopenCommand, parseProblem, parseProblemFlags, problemLabel, type Problem } from '@rocke/conv-direct';
import { UsageError, type CliIo } from '../io.js';
import type { NamedProblem } from '@rocke/conv-direct';
import { readTextInput } from './files.js';

/** parseArgs option table for a problem given by flags or a MIOpenDriver command line. */
export const PROBLEM_OPTIONS = {
  n: { type: 'string' },
  c: { type: 'string' },
  h: { type: 'string' },
  w: { type: 'string' },
  k: { type: 'string' },
  r: { type: 'string' },
  s: { type: 'string' },
  stride: { type: 'string' },
  pad: { type: 'string' },
  dilation: { type: 'string' },
  groups: { type: 'string' },
  dtype: { type: 'string' },
  miopen: { type: 'string' },
} as const;

/** Flag (lower case, as the CLI spells it) → conv-direct's flag name. */
const FLAG_TO_CONV: Record<string, string> = {
  n: 'N',
  c: 'C',
  h: 'H',
  w: 'W',
  k: 'K',
  r: 'R',
  s: 'S',
  stride: 'stride',
  pad: 'pad',
  dilation: 'dilation',
  groups: 'groups',
  dtype: 'dtype',
};

/** parseArgs option table for problem sets: a suite file or a file of MIOpenDriver commands. */
export const PROBLEM_SET_OPTIONS = {
  suite: { type: 'string' },
  'miopen-file': { type: 'string' },
} as const;

/** Usage text of the problem flags. */
export const PROBLEM_USAGE = `problem, by flags:   --n N --c C --h H --w W --k K [--r 3 --s 3 --stride 1 --pad same --dilation 1 --groups 1 --dtype fp16|bf16]
  or a MIOpenDriver line: --miopen "convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1"`;

/** Usage text of the problem-set inputs. */
export const PROBLEM_SET_USAGE = `problem sets: --suite SUITE.json ({"shapes": [{name, N, C, H, W, K, R, S, stride, pad, dilation, groups, dtype, cls}]})
  or --miopen-file LOG (one MIOpenDriver command per line, as MIOPEN_ENABLE_LOGGING_CMD=1 logs them;
  other lines and unsupported commands are skipped and counted, repeated problems kept once)`;

/** Most shapes one suite or MIOpenDriver file may hold: far past a network's layers, and it bounds the work a file can ask for. */
export const MAX_SUITE_SHAPES = 10_000;

/**
 * The problem named by the parsed flags, or undefined when none of them is present.
 * Throws {@link UsageError} with conv-direct's reason for an invalid problem or mixed inputs.
 */
export function problemFromValues(values: Record<string, unknown>): Problem | undefined {
  const flagNames = Object.keys(FLAG_TO_CONV).filter((f) => values[f] !== undefined);
  const miopen = values['miopen'];
  if (typeof miopen === 'string') {
    if (flagNames.length) throw new UsageError(`give the problem either by --miopen or by flags, not both (also got ${flagNames.map((f) => `--${f}`).join(' ')})`);
    const r = parseMiopenCommand(miopen);
    if (!r.ok) throw new UsageError(`bad MIOpenDriver command: ${r.reason}`);
    return r.problem;
  }
  if (flagNames.length === 0) return undefined;
  const argv: string[] = [];
  for (const f of flagNames) argv.push(`--${FLAG_TO_CONV[f]}`, String(values[f]));
  const r = parseProblemFlags(argv);
  if (!r.ok) throw new UsageError(`bad problem: ${lowerFlagNames(r.reason)}`);
  return r.problem;
}

/** conv-direct names flags --N/--C…; the CLI spells them in lower case. */
function lowerFlagNames(reason: string): string {
  return reason.replace(/--([NCHWKRS])\b/g, (_, f: string) => `--${f.toLowerCase()}`);
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
    const { name, cls, stride, pad, dilation, ...rest } = s as Record<string, unknown>;
    const label = typeof name === 'string' ? name : `shape${i}`;
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
    if (!r.ok) throw new UsageError(`suite shape ${i} (${label}): ${r.reason}`);
    return { name: label, problem: r.problem as Problem, cls: typeof cls === 'string' ? cls : null };
  });
}

/** The problems of a MIOpenDriver log and what was skipped. */
export interface MiopenFileProblems {
  problems: NamedProblem[];
  /** Lines read, lines holding no MIOpenDriver command, commands repeating an earlier problem. */
  lines: number;
  otherLines: number;
  repeats: number;
  /** Commands conv-direct does not take (fp32, backward, NCHW…), by reason, most first. */
  unsupported: { reason: string; count: number }[];
}

/** `MIOpenDriver conv…` anywhere in a line (after a log prefix), or a line that is a bare `conv…` command. */
const DRIVER_COMMAND = /(?:^|\s)(?:\S*\/)?MIOpenDriver\s+(conv\S*(?:\s.*)?)$|^\s*(conv[a-z0-9]*(?:\s.*)?)$/;

/**
 * Reads MIOpenDriver commands, one per line, as MIOpen logs them with MIOPEN_ENABLE_LOGGING_CMD=1
 * (`MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 1 …`) or bare. Other
 * lines are counted and skipped; so are commands conv-direct does not take, by reason; a problem
 * met again is kept once. No supported command at all is a usage error saying what was skipped.
 */
export function readMiopenFile(text: string): MiopenFileProblems {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const problems: NamedProblem[] = [];
  const seen = new Set<string>();
  const unsupported = new Map<string, number>();
  let otherLines = 0;
  let repeats = 0;
  lines.forEach((line, i) => {
    const m = DRIVER_COMMAND.exec(line);
    const command = m?.[1] ?? m?.[2];
    if (command === undefined) {
      otherLines++;
      return;
    }
    const r = parseMiopenCommand(command);
    if (!r.ok) {
      unsupported.set(r.reason, (unsupported.get(r.reason) ?? 0) + 1);
      return;
    }
    const label = problemLabel(r.problem);
    if (seen.has(label)) {
      repeats++;
      return;
    }
    seen.add(label);
    if (problems.length === MAX_SUITE_SHAPES) throw new UsageError(`more than ${MAX_SUITE_SHAPES} distinct problems`);
    problems.push({ name: `line${i + 1}`, problem: r.problem, cls: null });
  });
  const skipped = [...unsupported].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
  if (problems.length === 0) {
    const why = skipped.length ? `; unsupported: ${skipped.slice(0, 3).map((u) => `${u.reason} (${u.count}x)`).join('; ')}` : '';
    throw new UsageError(`no supported MIOpenDriver conv command in ${lines.length} lines (${otherLines} other lines${why})`);
  }
  return { problems, lines: lines.length, otherLines, repeats, unsupported: skipped };
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
