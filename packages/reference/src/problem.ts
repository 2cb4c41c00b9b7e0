// The forward-convolution problem, its validation and derived geometry.
// Layouts: x NHWC [N, H, W, C], w KRSC [K, R, S, C/groups], y NHWK [N, Ho, Wo, K].

import { DTYPES, type Dtype } from './dtype.js';

/** A forward convolution. Every field is explicit; {@link makeProblem} fills the usual defaults. */
export interface ConvProblem {
  N: number;
  H: number;
  W: number;
  /** Input channels (all groups). */
  C: number;
  /** Output channels (all groups). */
  K: number;
  /** Filter height. */
  R: number;
  /** Filter width. */
  S: number;
  strideH: number;
  strideW: number;
  padH: number;
  padW: number;
  dilationH: number;
  dilationW: number;
  groups: number;
  dtype: Dtype;
}

/** Derived sizes of a valid problem. */
export interface ConvGeometry {
  problem: ConvProblem;
  N: number;
  Ho: number;
  Wo: number;
  K: number;
  /** Input channels per group. */
  Cg: number;
  /** Output channels per group. */
  Kg: number;
  /** Terms summed per output: R * S * Cg. */
  reductionLength: number;
  xElements: number;
  wElements: number;
  yElements: number;
  /** Elements of one image of x (H*W*C) and of y (Ho*Wo*K). */
  xImageElements: number;
  yImageElements: number;
  /** Multiply-accumulates of the whole problem: N*Ho*Wo*K*R*S*Cg. */
  macs: number;
}

/** What went wrong, for callers that branch on it. */
export type ConvReferenceErrorCode = 'invalid-problem' | 'buffer-mismatch' | 'over-budget' | 'invalid-argument';

/** Every error this package raises for bad input; `message` says what and why. */
export class ConvReferenceError extends Error {
  readonly code: ConvReferenceErrorCode;
  constructor(code: ConvReferenceErrorCode, message: string) {
    super(message);
    this.name = 'ConvReferenceError';
    this.code = code;
  }
}

/** The shape fields and their minimum values. */
const MIN_ONE = ['N', 'H', 'W', 'C', 'K', 'R', 'S', 'strideH', 'strideW', 'dilationH', 'dilationW', 'groups'] as const;
const MIN_ZERO = ['padH', 'padW'] as const;

/** The parts of a problem that have common defaults. */
export type ConvProblemInit = Pick<ConvProblem, 'N' | 'H' | 'W' | 'C' | 'K' | 'R' | 'S' | 'dtype'> &
  Partial<Omit<ConvProblem, 'N' | 'H' | 'W' | 'C' | 'K' | 'R' | 'S' | 'dtype'>>;

/** A full problem from the required sizes; stride 1, padding 0, dilation 1, groups 1 unless given. */
export function makeProblem(init: ConvProblemInit): ConvProblem {
  return {
    strideH: 1,
    strideW: 1,
    padH: 0,
    padW: 0,
    dilationH: 1,
    dilationW: 1,
    groups: 1,
    ...init,
  };
}

/** The result of {@link validateProblem}: never throws. */
export type ProblemCheck = { ok: true; geometry: ConvGeometry } | { ok: false; reason: string };

/**
 * Check a problem and derive its geometry. Returns a reason instead of throwing; positivity is
 * checked before any division.
 */
export function validateProblem(problem: unknown): ProblemCheck {
  if (typeof problem !== 'object' || problem === null) return { ok: false, reason: 'problem must be an object' };
  const p = problem as Record<string, unknown>;
  for (const key of MIN_ONE) {
    const v = p[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
      return { ok: false, reason: `${key} must be a positive integer, got ${describe(v)}` };
    }
  }
  for (const key of MIN_ZERO) {
    const v = p[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      return { ok: false, reason: `${key} must be a non-negative integer, got ${describe(v)}` };
    }
  }
  if (!DTYPES.includes(p.dtype as Dtype)) return { ok: false, reason: `dtype must be one of ${DTYPES.join(', ')}, got ${describe(p.dtype)}` };
  const q = p as unknown as ConvProblem;
  if (q.C % q.groups !== 0) return { ok: false, reason: `groups (${q.groups}) must divide C (${q.C})` };
  if (q.K % q.groups !== 0) return { ok: false, reason: `groups (${q.groups}) must divide K (${q.K})` };
  const extentH = q.dilationH * (q.R - 1) + 1;
  const extentW = q.dilationW * (q.S - 1) + 1;
  if (q.H + 2 * q.padH < extentH) {
    return { ok: false, reason: `empty output: padded height H + 2*padH = ${q.H + 2 * q.padH} is smaller than the dilated filter height ${extentH}` };
  }
  if (q.W + 2 * q.padW < extentW) {
    return { ok: false, reason: `empty output: padded width W + 2*padW = ${q.W + 2 * q.padW} is smaller than the dilated filter width ${extentW}` };
  }
  const Ho = Math.floor((q.H + 2 * q.padH - extentH) / q.strideH) + 1;
  const Wo = Math.floor((q.W + 2 * q.padW - extentW) / q.strideW) + 1;
  const Cg = q.C / q.groups;
  const Kg = q.K / q.groups;
  const xImageElements = q.H * q.W * q.C;
  const yImageElements = Ho * Wo * q.K;
  const reductionLength = q.R * q.S * Cg;
  const geometry: ConvGeometry = {
    problem: { ...q },
    N: q.N,
    Ho,
    Wo,
    K: q.K,
    Cg,
    Kg,
    reductionLength,
    xElements: q.N * xImageElements,
    // Each output channel's filter holds one reduction's worth of weights; each output sums one reduction.
    wElements: q.K * reductionLength,
    yElements: q.N * yImageElements,
    xImageElements,
    yImageElements,
    macs: q.N * yImageElements * reductionLength,
  };
  for (const key of ['xElements', 'wElements', 'yElements', 'macs'] as const) {
    if (!Number.isSafeInteger(geometry[key])) return { ok: false, reason: `${key} (${geometry[key]}) is past the safe integer range` };
  }
  return { ok: true, geometry };
}

/** Like {@link validateProblem} but throws a {@link ConvReferenceError} (code 'invalid-problem'). */
export function convGeometry(problem: ConvProblem): ConvGeometry {
  const check = validateProblem(problem);
  if (!check.ok) throw new ConvReferenceError('invalid-problem', `invalid conv problem: ${check.reason}`);
  return check.geometry;
}

/** A short readable name of a problem, for messages and benchmark tables. */
export function problemName(p: ConvProblem): string {
  const extras = [
    p.strideH !== 1 || p.strideW !== 1 ? `s${p.strideH}x${p.strideW}` : '',
    p.padH !== 0 || p.padW !== 0 ? `p${p.padH}x${p.padW}` : '',
    p.dilationH !== 1 || p.dilationW !== 1 ? `d${p.dilationH}x${p.dilationW}` : '',
    p.groups !== 1 ? `g${p.groups}` : '',
  ].filter((s) => s !== '');
  return [`N${p.N}H${p.H}W${p.W}C${p.C}K${p.K}R${p.R}S${p.S}`, ...extras, p.dtype].join('_');
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === undefined) return 'nothing (missing)';
  return String(v);
}

/** Where an operand buffer's length must match the problem. */
export function checkBufferLength(name: string, actual: number, expected: number, shape: string): void {
  if (actual !== expected) {
    throw new ConvReferenceError(
      'buffer-mismatch',
      `${name} holds ${actual} elements but the problem needs ${shape} = ${expected}`,
    );
  }
}
