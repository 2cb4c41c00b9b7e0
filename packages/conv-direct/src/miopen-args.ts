/**
 * MIOpenDriver command lines as problem input, e.g.
 * `MIOpenDriver convbfp16 -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1`.
 */
import { parseProblem, type ProblemResult } from './problem.js';

/** Driver flags that set a problem field: short name, long name, field, MIOpenDriver's default. */
const SHAPE_FLAGS = [
  ['n', 'batchsize', 'N', null],
  ['c', 'in_channels', 'C', null],
  ['H', 'in_h', 'H', null],
  ['W', 'in_w', 'W', null],
  ['k', 'out_channels', 'K', null],
  ['y', 'fil_h', 'R', 3],
  ['x', 'fil_w', 'S', 3],
  ['p', 'pad_h', 'padH', 0],
  ['q', 'pad_w', 'padW', 0],
  ['u', 'conv_stride_h', 'strideH', 1],
  ['v', 'conv_stride_w', 'strideW', 1],
  ['l', 'dilation_h', 'dilationH', 1],
  ['j', 'dilation_w', 'dilationW', 1],
  ['g', 'group_count', 'groups', 1],
] as const;

/** Flags that only steer the driver's own run (timing, verification, search); their values are ignored. */
const IGNORED_FLAGS = [
  ['t', 'time'],
  ['V', 'verify'],
  ['i', 'iter'],
  ['s', 'search'],
  ['w', 'wall'],
  ['b', 'bias'],
  ['S', 'solution'],
] as const;

/** Layout flags: the kernels read NHWC activations and KRSC weights only. */
const LAYOUT_FLAGS = [
  ['I', 'in_layout'],
  ['O', 'out_layout'],
  ['f', 'fil_layout'],
] as const;

const DRIVER_OPS: Readonly<Record<string, 'fp16' | 'bf16' | string>> = {
  convfp16: 'fp16',
  convbfp16: 'bf16',
};

function splitCommandLine(line: string): string[] {
  return line.trim().split(/\s+/).filter((t) => t.length > 0);
}

/**
 * Parses one MIOpenDriver forward-conv line (a string or its tokens). The operation word
 * `convfp16` / `convbfp16` picks the dtype (a leading path to MIOpenDriver is skipped); `conv`
 * (fp32) and `convint8` are rejected. Flags take their value as the next token, as the driver's
 * own parser does; long names (`--batchsize`) work too. N, C, H, W and K must be given; the other
 * shape flags default to MIOpenDriver's defaults (3x3 filter, pad 0, stride 1, dilation 1, 1 group).
 * `-F` must select the forward direction (1; 0, the driver's "all", is read as forward); layouts,
 * when given, must be NHWC; `-m trans` and 3-D (`-_ 3`) are rejected.
 */
export function parseMiopenCommand(input: string | readonly string[]): ProblemResult {
  const tokens = typeof input === 'string' ? splitCommandLine(input) : [...input];
  const opIndex = tokens.findIndex((t) => /^conv/.test(t));
  if (opIndex < 0) return { ok: false, reason: 'no MIOpenDriver operation found (expected convfp16 or convbfp16)' };
  const op = tokens[opIndex] ?? '';
  for (const t of tokens.slice(0, opIndex)) {
    if (!/(^|\/)MIOpenDriver$/.test(t)) return { ok: false, reason: `unexpected token '${t}' before the operation '${op}'` };
  }
  const dtype = DRIVER_OPS[op];
  if (!dtype) {
    const why = op === 'conv' ? 'fp32 is not supported' : op === 'convint8' ? 'int8 is not supported' : 'unknown operation';
    return { ok: false, reason: `operation '${op}': ${why} (use convfp16 or convbfp16)` };
  }
  const fields: Record<string, number | string> = { dtype };
  const seen = new Set<string>();
  const rest = tokens.slice(opIndex + 1);
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] ?? '';
    const m = /^--?(.+)$/.exec(token);
    if (!m) return { ok: false, reason: `unexpected token '${token}' (flags look like -n 4)` };
    const name = m[1] ?? '';
    const value = rest[++i];
    if (value === undefined) return { ok: false, reason: `flag ${token} needs a value` };
    const shape = SHAPE_FLAGS.find(([s, l]) => name === s || name === l);
    if (shape) {
      const field = shape[2];
      if (seen.has(field)) return { ok: false, reason: `flag ${token} repeats ${field}` };
      seen.add(field);
      if (!/^-?\d+$/.test(value)) return { ok: false, reason: `flag ${token} (${field}) must be an integer (got '${value}')` };
      fields[field] = Number(value);
      continue;
    }
    if (name === 'F' || name === 'forw') {
      if (value !== '1' && value !== '0') {
        return { ok: false, reason: `-F ${value} selects a backward direction; conv-direct implements forward only (-F 1)` };
      }
      continue;
    }
    if (name === 'm' || name === 'mode') {
      if (value !== 'conv') return { ok: false, reason: `-m ${value} is not supported (only -m conv)` };
      continue;
    }
    if (name === '_' || name === 'spatial_dim') {
      if (value !== '2') return { ok: false, reason: `spatial dimension ${value} is not supported (2-D only)` };
      continue;
    }
    if (LAYOUT_FLAGS.some(([s, l]) => name === s || name === l)) {
      if (value !== 'NHWC') return { ok: false, reason: `layout ${token} ${value} is not supported (NHWC only)` };
      continue;
    }
    if (IGNORED_FLAGS.some(([s, l]) => name === s || name === l)) continue;
    return { ok: false, reason: `unknown MIOpenDriver flag ${token}` };
  }
  for (const [short, , field, fallback] of SHAPE_FLAGS) {
    if (fields[field] !== undefined) continue;
    if (fallback === null) return { ok: false, reason: `missing -${short} (${field})` };
    fields[field] = fallback;
  }
  return parseProblem(fields);
}
