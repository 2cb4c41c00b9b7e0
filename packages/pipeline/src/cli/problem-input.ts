import { parseMiopenCommand, parseProblemFlags, type Problem } from '@rocke/conv-direct';
import { UsageError } from '../io.js';

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

/** Usage text of the problem flags. */
export const PROBLEM_USAGE = `problem, by flags:   --n N --c C --h H --w W --k K [--r 3 --s 3 --stride 1 --pad same --dilation 1 --groups 1 --dtype fp16|bf16]
  or a MIOpenDriver line: --miopen "convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -g 1"`;

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
