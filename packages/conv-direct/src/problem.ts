/**
 * The forward-convolution problem: shapes, strides, padding, groups and dtype. Layouts are fixed:
 * x NHWC, w [K, R, S, C/groups] (KRSC), y NHWK, fp16/bf16 in and out with fp32 accumulation.
 */
import { z } from 'zod';

/** Element types the kernels read and write. */
export const DTYPES = ['fp16', 'bf16'] as const;
export type Dtype = (typeof DTYPES)[number];

/** Bytes per element of x, w and y (fp16 and bf16 are both 2). */
export const ELEMENT_BYTES = 2;

const int = z.number().int();

/**
 * Strict problem schema. Shape fields are any integers here so that a nonsense shape reaches
 * {@link checkProblem} / `validate()` and gets a reason naming the field; unknown or missing
 * fields are schema errors.
 */
export const ProblemSchema = z
  .object({
    N: int,
    H: int,
    W: int,
    C: int,
    K: int,
    R: int,
    S: int,
    strideH: int,
    strideW: int,
    padH: int,
    padW: int,
    dilationH: int,
    dilationW: int,
    groups: int,
    dtype: z.enum(DTYPES),
  })
  .strict();

export type Problem = z.infer<typeof ProblemSchema>;

/** Quantities derived from a problem (valid only when {@link checkProblem} passes). */
export interface ProblemGeometry {
  readonly Ho: number;
  readonly Wo: number;
  /** Input channels per group. */
  readonly cpg: number;
  /** Output channels per group. */
  readonly kpg: number;
  /** 2 * N*Ho*Wo*K*R*S*cpg: multiply-adds counted as two flops. */
  readonly flops: number;
  /** Bytes of x, w and y, and their sum (the compulsory traffic). */
  readonly xBytes: number;
  readonly wBytes: number;
  readonly yBytes: number;
  readonly bytes: number;
  /** Bytes of one image of x and of y (the unit of batch chunking). */
  readonly xImageBytes: number;
  readonly yImageBytes: number;
}

/** Output extent along one axis: floor((in + 2*pad - dil*(f-1) - 1) / stride) + 1. */
export function outputExtent(input: number, filter: number, stride: number, pad: number, dilation: number): number {
  return Math.floor((input + 2 * pad - dilation * (filter - 1) - 1) / stride) + 1;
}

/**
 * Reason a parsed problem cannot be a convolution at all, or null. Positivity comes before any
 * division, so groups = 0 reports a reason instead of dividing by zero.
 */
export function checkProblem(p: Problem): string | null {
  const kept = keptProblemFacts(p);
  return kept ? kept.reason : problemReason(p);
}

/**
 * Answers kept per frozen problem: a candidate search asks one problem its check and geometry for
 * every candidate, split count and cost estimate, and a frozen problem (its fields are numbers and
 * a string) cannot change.
 */
const KEPT = new WeakMap<Problem, { readonly reason: string | null; geometry?: ProblemGeometry }>();

function keptProblemFacts(p: Problem): { readonly reason: string | null; geometry?: ProblemGeometry } | undefined {
  let facts = KEPT.get(p);
  if (facts || !Object.isFrozen(p)) return facts;
  KEPT.set(p, (facts = { reason: problemReason(p) }));
  return facts;
}

/** {@link checkProblem}, computed. */
function problemReason(p: Problem): string | null {
  for (const f of ['N', 'H', 'W', 'C', 'K', 'R', 'S', 'strideH', 'strideW', 'dilationH', 'dilationW'] as const) {
    if (p[f] < 1) return `problem.${f} must be >= 1 (got ${p[f]})`;
  }
  if (p.groups < 1) return `problem.groups must be >= 1 (got ${p.groups})`;
  if (p.padH < 0 || p.padW < 0) return `problem padding must be >= 0 (got padH ${p.padH}, padW ${p.padW})`;
  if (p.C % p.groups !== 0) return `groups ${p.groups} does not divide C ${p.C}`;
  if (p.K % p.groups !== 0) return `groups ${p.groups} does not divide K ${p.K}`;
  const Ho = outputExtent(p.H, p.R, p.strideH, p.padH, p.dilationH);
  const Wo = outputExtent(p.W, p.S, p.strideW, p.padW, p.dilationW);
  if (Ho < 1 || Wo < 1) return `output is empty: Ho ${Ho}, Wo ${Wo} (filter ${p.R}x${p.S} larger than the padded input ${p.H}x${p.W})`;
  return null;
}

/** Derived geometry of a problem; throws when {@link checkProblem} reports a reason. */
export function problemGeometry(p: Problem): ProblemGeometry {
  const kept = keptProblemFacts(p);
  if (!kept) return geometryOf(p, problemReason(p));
  return (kept.geometry ??= geometryOf(p, kept.reason));
}

/** {@link problemGeometry}, computed (frozen: a kept answer is shared). */
function geometryOf(p: Problem, reason: string | null): ProblemGeometry {
  if (reason) throw new Error(`invalid problem: ${reason}`);
  const Ho = outputExtent(p.H, p.R, p.strideH, p.padH, p.dilationH);
  const Wo = outputExtent(p.W, p.S, p.strideW, p.padW, p.dilationW);
  const cpg = p.C / p.groups;
  const kpg = p.K / p.groups;
  const xImageBytes = ELEMENT_BYTES * p.H * p.W * p.C;
  const yImageBytes = ELEMENT_BYTES * Ho * Wo * p.K;
  const xBytes = p.N * xImageBytes;
  const wBytes = ELEMENT_BYTES * p.K * p.R * p.S * cpg;
  const yBytes = p.N * yImageBytes;
  return Object.freeze({
    Ho,
    Wo,
    cpg,
    kpg,
    flops: 2 * p.N * Ho * Wo * p.K * p.R * p.S * cpg,
    xBytes,
    wBytes,
    yBytes,
    bytes: xBytes + wBytes + yBytes,
    xImageBytes,
    yImageBytes,
  });
}

/** Outcome of parsing: a problem or the reason there is none. */
export type ProblemResult = { ok: true; problem: Problem } | { ok: false; reason: string };

/** Formats the first zod issue as `path: message`. */
export function zodReason(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  const path = issue.path.length ? issue.path.join('.') : '(root)';
  return `${path}: ${issue.message}`;
}

/** Parses an object against the strict schema, then checks it is a convolution. */
export function parseProblem(input: unknown): ProblemResult {
  const parsed = ProblemSchema.safeParse(input);
  if (!parsed.success) return { ok: false, reason: zodReason(parsed.error) };
  const reason = checkProblem(parsed.data);
  return reason ? { ok: false, reason } : { ok: true, problem: parsed.data };
}

/** A short, stable label: `n4h64w64c640k640_r3s3_u1v1_p1q1_g1_bf16` (dilation added when not 1). */
export function problemLabel(p: Problem): string {
  const dil = p.dilationH !== 1 || p.dilationW !== 1 ? `_l${p.dilationH}j${p.dilationW}` : '';
  return `n${p.N}h${p.H}w${p.W}c${p.C}k${p.K}_r${p.R}s${p.S}_u${p.strideH}v${p.strideW}_p${p.padH}q${p.padW}${dil}_g${p.groups}_${p.dtype}`;
}

/** Flag names (after `--`) and the problem field each one sets; `stride`, `pad`, `dilation` set both axes. */
const FLAG_FIELDS: Readonly<Record<string, readonly (keyof Problem)[]>> = {
  N: ['N'],
  n: ['N'],
  H: ['H'],
  Hi: ['H'],
  W: ['W'],
  Wi: ['W'],
  C: ['C'],
  K: ['K'],
  R: ['R'],
  Y: ['R'],
  S: ['S'],
  X: ['S'],
  strideH: ['strideH'],
  sH: ['strideH'],
  strideW: ['strideW'],
  sW: ['strideW'],
  stride: ['strideH', 'strideW'],
  padH: ['padH'],
  pH: ['padH'],
  padW: ['padW'],
  pW: ['padW'],
  pad: ['padH', 'padW'],
  dilationH: ['dilationH'],
  dH: ['dilationH'],
  dilationW: ['dilationW'],
  dW: ['dilationW'],
  dilation: ['dilationH', 'dilationW'],
  groups: ['groups'],
  g: ['groups'],
  dtype: ['dtype'],
};

const FLAG_REQUIRED: readonly (keyof Problem)[] = ['N', 'H', 'W', 'C', 'K', 'dtype'];

/**
 * Parses `--N 4 --H 64 --W 64 --C 640 --K 640 --dtype bf16 [--R 3 --S 3 --stride 1 --pad 1
 * --dilation 1 --groups 1]` (also `--name=value`, and the benchmark spellings `--Hi --Wi --Y --X
 * --sH --sW --pH --pW --dH --dW`). N, H, W, C, K and dtype are required; R and S default to 3,
 * stride and dilation to 1, padding to "same" (floor((R-1)/2)) and groups to 1.
 */
export function parseProblemFlags(argv: readonly string[]): ProblemResult {
  const values: Partial<Record<keyof Problem, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (!token.startsWith('--')) return { ok: false, reason: `unexpected argument '${token}' (flags look like --N 4)` };
    let name = token.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    } else {
      value = argv[++i];
    }
    const fields = FLAG_FIELDS[name];
    if (!fields) return { ok: false, reason: `unknown flag --${name} (known: ${Object.keys(FLAG_FIELDS).map((f) => `--${f}`).join(' ')})` };
    if (value === undefined || value.startsWith('--')) return { ok: false, reason: `flag --${name} needs a value` };
    for (const f of fields) {
      if (values[f] !== undefined) return { ok: false, reason: `flag --${name} sets ${f}, which is already set` };
      values[f] = value;
    }
  }
  for (const f of FLAG_REQUIRED) {
    if (values[f] === undefined) return { ok: false, reason: `missing --${f}` };
  }
  const numbers: Record<string, number | string> = {};
  for (const [f, v] of Object.entries(values)) {
    if (f === 'dtype') {
      numbers[f] = v;
      continue;
    }
    if (!/^-?\d+$/.test(v)) return { ok: false, reason: `${f} must be an integer (got '${v}')` };
    numbers[f] = Number(v);
  }
  const R = (numbers.R as number | undefined) ?? 3;
  const S = (numbers.S as number | undefined) ?? 3;
  return parseProblem({
    strideH: 1,
    strideW: 1,
    dilationH: 1,
    dilationW: 1,
    groups: 1,
    padH: Math.max(0, Math.floor((R - 1) / 2)),
    padW: Math.max(0, Math.floor((S - 1) / 2)),
    R,
    S,
    ...numbers,
  });
}
