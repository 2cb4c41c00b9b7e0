/**
 * Fitting the ranker on measured rows, deterministically: ridge regression of log2 time on the
 * features, with one free constant per shape (only differences between candidates of one shape
 * are fitted, which is what choosing needs), and the leave-one-shape-out evaluation.
 */
import { z } from 'zod';
import { ProblemSchema, type Problem } from '../problem.js';
import { kernelName, type Spec } from '../spec.js';
import { RANKER_FEATURES, rankerFeatures } from './features.js';
import type { RankerModel } from './model.js';
import { rankerScore } from './model.js';
import { specFromKernelName } from './spec-from-name.js';

/** Measured rows as committed: per shape, each timed (kernel, split count) and its median time. */
export const RankerRowsSchema = z
  .object({
    format: z.literal(1),
    device: z.string(),
    target: z.string(),
    /** Where the rows came from (the bench command and run). */
    source: z.string(),
    shapes: z.array(
      z
        .object({
          name: z.string().min(1),
          problem: ProblemSchema,
          candidates: z.array(z.object({ kernelName: z.string(), splits: z.number().int().positive().optional(), medianMs: z.number().positive() }).strict()),
        })
        .strict(),
    ),
  })
  .strict();

export type RankerRows = z.infer<typeof RankerRowsSchema>;

/** One row of the fit: a candidate of a shape with its features and log2 time. */
interface FitRow {
  shape: string;
  spec: Spec;
  problem: Problem;
  splits: number;
  medianMs: number;
  features: number[];
}

/**
 * Reduces a `rocke bench` bench-details.json (`{ shapes: ShapeResult[] }`) to the rows the fit
 * needs: every candidate that was timed without error and did not fail verification; split_c
 * candidates give one row per timed split count. Times are kept to 0.1 ns.
 */
export function rowsFromBenchDetails(details: unknown, meta: { device: string; target: string; source: string }): RankerRows {
  const shapes = (details as { shapes?: unknown[] }).shapes;
  if (!Array.isArray(shapes)) throw new TypeError('bench details have no shapes array');
  const keep = (ms: number) => Math.round(ms * 1e7) / 1e7;
  const out: RankerRows['shapes'] = [];
  for (const s of shapes as { name: string; problem: unknown; candidates?: Record<string, unknown>[] }[]) {
    const problem = ProblemSchema.parse(s.problem);
    const candidates: RankerRows['shapes'][number]['candidates'] = [];
    for (const c of s.candidates ?? []) {
      if (typeof c['medianMs'] !== 'number' || c['error'] !== undefined) continue;
      if ((c['verify'] as { pass?: boolean } | undefined)?.pass === false) continue;
      const name = String(c['kernelName']);
      const splitTimes = c['splitTimes'] as { splits: number; medianMs: number }[] | undefined;
      if (splitTimes?.length) for (const t of splitTimes) candidates.push({ kernelName: name, splits: t.splits, medianMs: keep(t.medianMs) });
      else candidates.push({ kernelName: name, medianMs: keep(c['medianMs'] as number) });
    }
    if (candidates.length) out.push({ name: s.name, problem, candidates });
  }
  return RankerRowsSchema.parse({ format: 1, ...meta, shapes: out });
}

function fitRows(rows: RankerRows): FitRow[] {
  const out: FitRow[] = [];
  for (const shape of rows.shapes) {
    for (const c of shape.candidates) {
      const parsed = specFromKernelName(c.kernelName);
      if (!parsed.ok) throw new Error(`shape ${shape.name}: ${parsed.reason}`);
      const splits = c.splits ?? 1;
      out.push({ shape: shape.name, spec: parsed.spec, problem: shape.problem, splits, medianMs: c.medianMs, features: rankerFeatures(parsed.spec, shape.problem, splits) });
    }
  }
  return out;
}

/** Solves the symmetric positive definite system `a x = b` (Cholesky; `a` is n×n row-major). */
function solveSpd(a: number[][], b: number[]): number[] {
  const n = b.length;
  const l = a.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = a[i]![j]!;
      for (let k = 0; k < j; k++) sum -= l[i]![k]! * l[j]![k]!;
      l[i]![j] = i === j ? Math.sqrt(sum) : sum / l[j]![j]!;
    }
  }
  const y = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let sum = b[i]!;
    for (let k = 0; k < i; k++) sum -= l[i]![k]! * y[k]!;
    y[i] = sum / l[i]![i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let sum = y[i]!;
    for (let k = i + 1; k < n; k++) sum -= l[k]![i]! * x[k]!;
    x[i] = sum / l[i]![i]!;
  }
  return x;
}

/** Options of {@link fitRanker}. */
export interface FitOptions {
  /** Ridge strength per row on standardized features (default 0.01). */
  lambda?: number;
  /** Relative times above 2^clampLog2 count as 2^clampLog2 (default 8: only pathological outliers). */
  clampLog2?: number;
  /** Shapes left out of the fit (leave-one-shape-out). */
  exclude?: ReadonlySet<string>;
}

function fitOn(all: readonly FitRow[], rows: RankerRows, options: FitOptions): RankerModel {
  const lambda = options.lambda ?? 0.01;
  const clampLog2 = options.clampLog2 ?? 8;
  const used = all.filter((r) => !options.exclude?.has(r.shape));
  const byShape = new Map<string, FitRow[]>();
  for (const r of used) byShape.set(r.shape, [...(byShape.get(r.shape) ?? []), r]);
  const n = RANKER_FEATURES.length;
  // Centre features and clamped log2 times within each shape: the shape's constant drops out.
  const xs: number[][] = [];
  const ys: number[] = [];
  for (const group of byShape.values()) {
    const best = Math.min(...group.map((r) => r.medianMs));
    const y = group.map((r) => Math.min(Math.log2(r.medianMs / best), clampLog2));
    const yMean = y.reduce((s, v) => s + v, 0) / y.length;
    const fMean = Array.from({ length: n }, (_, j) => group.reduce((s, r) => s + r.features[j]!, 0) / group.length);
    group.forEach((r, i) => {
      xs.push(r.features.map((v, j) => v - fMean[j]!));
      ys.push(y[i]! - yMean);
    });
  }
  const scale = Array.from({ length: n }, (_, j) => Math.sqrt(xs.reduce((s, x) => s + x[j]! * x[j]!, 0) / Math.max(1, xs.length)));
  const live = scale.map((s) => s > 1e-9);
  const a = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? lambda * xs.length + (live[i] ? 0 : 1) : 0)));
  const b = new Array<number>(n).fill(0);
  for (let r = 0; r < xs.length; r++) {
    const z = xs[r]!.map((v, j) => (live[j] ? v / scale[j]! : 0));
    for (let i = 0; i < n; i++) {
      b[i]! += z[i]! * ys[r]!;
      for (let j = 0; j < n; j++) a[i]![j]! += z[i]! * z[j]!;
    }
  }
  const w = solveSpd(a, b).map((v, j) => (live[j] ? v / scale[j]! : 0));
  const round = (v: number) => Number(v.toPrecision(8));
  return {
    format: 1,
    features: [...RANKER_FEATURES],
    weights: w.map(round),
    lambda,
    clampLog2,
    source: { device: rows.device, target: rows.target, data: rows.source, shapes: [...byShape.keys()], rows: used.length },
  };
}

/** Fits the ranker on `rows` (all shapes but `options.exclude`). Same rows and options → same model. */
export function fitRanker(rows: RankerRows, options: FitOptions = {}): RankerModel {
  return fitOn(fitRows(rows), rows, options);
}

/** One held-out shape: the measured time of the ranker's pick against the shape's best. */
export interface HeldOutShape {
  shape: string;
  chosen: string;
  chosenSplits: number;
  chosenMs: number;
  bestMs: number;
  /** chosenMs / bestMs (1: the ranker picked the fastest measured candidate). */
  ratio: number;
}

/**
 * Leave-one-shape-out: for each shape, fits on the others and picks among that shape's measured
 * candidates by the model; reports the pick's measured time against the best one's.
 */
export function leaveOneShapeOut(rows: RankerRows, options: Omit<FitOptions, 'exclude'> = {}): { shapes: HeldOutShape[]; geomean: number; worst: number } {
  const all = fitRows(rows);
  return summarize(rows.shapes.map((shape) => pick(all.filter((r) => r.shape === shape.name), fitOn(all, rows, { ...options, exclude: new Set([shape.name]) }))));
}

/** The model's pick per shape of `rows` (none left out of anything) against each shape's measured best. */
export function evaluateRanker(rows: RankerRows, model: RankerModel): { shapes: HeldOutShape[]; geomean: number; worst: number } {
  const all = fitRows(rows);
  return summarize(rows.shapes.map((shape) => pick(all.filter((r) => r.shape === shape.name), model)));
}

/** The model's choice among one shape's measured rows, and how it measured against the best. */
function pick(mine: readonly FitRow[], model: RankerModel): HeldOutShape {
  const scored = mine.map((r) => ({ r, score: rankerScore(model, r.spec, r.problem, r.splits), name: kernelName(r.spec) }));
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.r.splits - b.r.splits);
  const chosen = scored[0]!.r;
  const bestMs = Math.min(...mine.map((r) => r.medianMs));
  return { shape: chosen.shape, chosen: kernelName(chosen.spec), chosenSplits: chosen.splits, chosenMs: chosen.medianMs, bestMs, ratio: chosen.medianMs / bestMs };
}

function summarize(shapes: HeldOutShape[]): { shapes: HeldOutShape[]; geomean: number; worst: number } {
  const geomean = 2 ** (shapes.reduce((s, x) => s + Math.log2(x.ratio), 0) / Math.max(1, shapes.length));
  return { shapes, geomean, worst: Math.max(1, ...shapes.map((s) => s.ratio)) };
}

/** The TypeScript source of ranker/model.generated.ts for a fitted model. */
export function generatedModelSource(model: RankerModel): string {
  return [
    '// Generated by `ROCKE_FIT_RANKER=1 npx vitest run src/ranker/fit.test.ts` from ranker/h200-rows.json; do not edit.',
    '// The fitted ranker (see ranker/fit.ts): one weight per feature of ranker/features.ts.',
    `export const FITTED_RANKER = ${JSON.stringify(model, null, 2)} as const;`,
    '',
  ].join('\n');
}
