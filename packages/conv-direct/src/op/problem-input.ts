/**
 * Problems as a command line gives them: one by flags or a MIOpenDriver command, a suite row, a
 * MIOpen log, or the shapes of x and w. Each reader returns the problem or a one-line reason that
 * names the flag or field at fault; the caller decides how to report it.
 */
import { parseMiopenCommand } from '../miopen-args.js';
import { parseProblem, parseProblemFlags, problemLabel, type Dtype, type Problem, type ProblemResult } from '../problem.js';
import type { NamedProblem } from '../selection.js';

/** parseArgs option table of one problem given by flags or a MIOpenDriver command line. */
export const PROBLEM_FLAGS = {
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

/** The problem flags but `miopen`, lower case as the command line spells them; {@link parseProblemFlags} spells the one-letter sizes in upper case. */
const SIZE_FLAGS = Object.keys(PROBLEM_FLAGS).filter((f) => f !== 'miopen');
const flagName = (f: string): string => (f.length === 1 ? f.toUpperCase() : f);

/** Usage text of {@link PROBLEM_FLAGS}. */
export const PROBLEM_USAGE = `problem, by flags:   --n N --c C --h H --w W --k K [--r 3 --s 3 --stride 1 --pad same --dilation 1 --groups 1 --dtype fp16|bf16]
  or a MIOpenDriver line: --miopen "convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1"`;

/** Usage text of the problem-set inputs: a suite file and a MIOpen log. */
export const PROBLEM_SET_USAGE = `problem sets: --suite SUITE.json ({"shapes": [{name, N, C, H, W, K, R, S, stride, pad, dilation, groups, dtype, cls}]})
  or --miopen-file LOG (one MIOpenDriver command per line, as MIOPEN_ENABLE_LOGGING_CMD=1 logs them;
  other lines and unsupported commands are skipped and counted, repeated problems kept once)`;

/**
 * The problem named by parsed {@link PROBLEM_FLAGS} values, or undefined when none is present; a
 * reason for an invalid problem or for both a MIOpenDriver line and flags.
 */
export function problemFromFlags(values: Record<string, unknown>): ProblemResult | undefined {
  const flagNames = SIZE_FLAGS.filter((f) => values[f] !== undefined);
  const miopen = values['miopen'];
  if (typeof miopen === 'string') {
    if (flagNames.length) return { ok: false, reason: `give the problem either by --miopen or by flags, not both (also got ${flagNames.map((f) => `--${f}`).join(' ')})` };
    const r = parseMiopenCommand(miopen);
    return r.ok ? r : { ok: false, reason: `bad MIOpenDriver command: ${r.reason}` };
  }
  if (flagNames.length === 0) return undefined;
  const argv: string[] = [];
  for (const f of flagNames) argv.push(`--${flagName(f)}`, String(values[f]));
  const r = parseProblemFlags(argv);
  // parseProblemFlags names flags --N/--C…; the command line spells them in lower case.
  return r.ok ? r : { ok: false, reason: `bad problem: ${r.reason.replace(/--([NCHWKRS])\b/g, (_, f: string) => `--${f.toLowerCase()}`)}` };
}

/**
 * The problem of one suite row (`{N, C, H, W, K, R, S, stride, pad, dilation, groups, dtype}`, the
 * row's name and class taken off): one stride, pad and dilation for both axes, groups 1 by default.
 */
export function problemFromSuiteRow(row: Record<string, unknown>): ProblemResult {
  const { stride, pad, dilation, ...rest } = row;
  return parseProblem({
    strideH: stride ?? 1,
    strideW: stride ?? 1,
    padH: pad ?? 0,
    padW: pad ?? 0,
    dilationH: dilation ?? 1,
    dilationW: dilation ?? 1,
    groups: 1,
    ...rest,
  });
}

/** The problems of a MIOpen log and what was skipped. */
export interface MiopenLog {
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
 * (`MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 -n 1 …`) or bare, each
 * problem named `line<number>`. Other lines are counted and skipped; so are commands conv-direct
 * does not take, by reason; a problem met again is kept once. A reason instead when more than
 * `maxProblems` distinct problems are given or no supported command at all (saying what was skipped).
 */
export function readMiopenLog(text: string, maxProblems: number): MiopenLog | { reason: string } {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const problems: NamedProblem[] = [];
  const seen = new Set<string>();
  const unsupported = new Map<string, number>();
  let otherLines = 0;
  let repeats = 0;
  for (const [i, line] of lines.entries()) {
    const m = DRIVER_COMMAND.exec(line);
    const command = m?.[1] ?? m?.[2];
    if (command === undefined) {
      otherLines++;
      continue;
    }
    const r = parseMiopenCommand(command);
    if (!r.ok) {
      unsupported.set(r.reason, (unsupported.get(r.reason) ?? 0) + 1);
      continue;
    }
    const label = problemLabel(r.problem);
    if (seen.has(label)) {
      repeats++;
      continue;
    }
    seen.add(label);
    if (problems.length === maxProblems) return { reason: `more than ${maxProblems} distinct problems` };
    problems.push({ name: `line${i + 1}`, problem: r.problem, cls: null });
  }
  const skipped = [...unsupported].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
  if (problems.length === 0) {
    const why = skipped.length ? `; unsupported: ${skipped.slice(0, 3).map((u) => `${u.reason} (${u.count}x)`).join('; ')}` : '';
    return { reason: `no supported MIOpenDriver conv command in ${lines.length} lines (${otherLines} other lines${why})` };
  }
  return { problems, lines: lines.length, otherLines, repeats, unsupported: skipped };
}

const { stride, pad, dilation, groups, dtype, miopen } = PROBLEM_FLAGS;

/**
 * parseArgs option table of a problem whose sizes come from its operands' shapes (`rocke run`):
 * the rest of the problem, or a MIOpenDriver line naming all of it.
 */
export const OPERAND_PROBLEM_FLAGS = { stride, pad, dilation, groups, dtype, miopen };

/**
 * The problem of x (NHWC) and w (KRSC) with the given stride, pad, dilation, groups (default
 * C / w's last dimension) and dtype (default `dataDtype`, the operands' own), or the one a
 * MIOpenDriver line names, with none of those flags beside it. A reason when the pieces disagree.
 */
export function problemFromOperands(values: Record<string, unknown>, xShape: readonly number[], wShape: readonly number[], dataDtype: Dtype | undefined): ProblemResult {
  if (values['miopen'] !== undefined) {
    const extra = Object.keys(OPERAND_PROBLEM_FLAGS).filter((f) => f !== 'miopen' && values[f] !== undefined);
    if (extra.length) return { ok: false, reason: `with --miopen the problem is fully given; drop ${extra.map((f) => `--${f}`).join(' ')}` };
    return problemFromFlags({ miopen: values['miopen'] })!;
  }
  if (xShape.length !== 4) return { ok: false, reason: `x must be 4-D NHWC, got shape (${xShape.join(', ')})` };
  if (wShape.length !== 4) return { ok: false, reason: `w must be 4-D KRSC, got shape (${wShape.join(', ')})` };
  const [N, H, W, C] = xShape as [number, number, number, number];
  const [K, R, S, cpg] = wShape as [number, number, number, number];
  let groups: string;
  if (values['groups'] !== undefined) groups = String(values['groups']);
  else {
    if (cpg === 0 || C % cpg !== 0) return { ok: false, reason: `w's last dimension ${cpg} does not divide x's channels ${C}` };
    groups = String(C / cpg);
  }
  const dtype = values['dtype'] === undefined ? dataDtype : String(values['dtype']);
  if (dtype === undefined) return { ok: false, reason: 'x and w are float32: say which dtype to run with --dtype fp16|bf16' };
  const argv = ['--N', N, '--H', H, '--W', W, '--C', C, '--K', K, '--R', R, '--S', S, '--groups', groups, '--dtype', dtype].map(String);
  for (const f of ['stride', 'pad', 'dilation'] as const) if (values[f] !== undefined) argv.push(`--${f}`, String(values[f]));
  const r = parseProblemFlags(argv);
  return r.ok ? r : { ok: false, reason: `bad problem: ${r.reason}` };
}

/** The shapes of a problem's operands: x NHWC, w KRSC (C per group). */
export function operandShapes(p: Problem): { x: number[]; w: number[] } {
  return { x: [p.N, p.H, p.W, p.C], w: [p.K, p.R, p.S, p.C / p.groups] };
}
