/**
 * Fitting the cost model (cost-model.ts) on measured rows, deterministically: its few coefficients
 * (one per term, the MMA term per atom class) by Levenberg-Marquardt on log time, each shape free to
 * sit above or below the model (what choosing needs is the order inside a shape), pulled toward the
 * roofline values; and the leave-one-shape-out and leave-one-class-out evaluations.
 */
import { z } from 'zod';
import { COMBINE, COST_TERMS, coefficientKey, costTerms, type CostTerm } from '../cost-model.js';
import { problemGeometry, ProblemSchema, type Problem } from '../problem.js';
import { SPLIT_C_MAX_PIXELS } from '../selection.js';
import type { Spec } from '../spec.js';
import { rankerScore, type RankerModel } from './model.js';
import { specFromKernelName } from './spec-from-name.js';

const { overlapped: OVERLAPPED_TERMS, norm: OVERLAP_NORM } = COMBINE;

/** One timed shape: its problem and each timed (kernel, split count) with its median time. */
const RankerShapeSchema = z
  .object({
    name: z.string().min(1),
    /** The run (of `runs`) that timed it. */
    run: z.string().min(1),
    problem: ProblemSchema,
    candidates: z.array(z.object({ kernelName: z.string(), splits: z.number().int().positive().optional(), medianMs: z.number().positive() }).strict()),
  })
  .strict();

/**
 * Measured rows as committed: the bench runs they come from, and per shape of each run every timed
 * (kernel, split count) with its median time. One problem may appear in several runs (each run's
 * times are compared only among themselves).
 */
export const RankerRowsSchema = z
  .object({
    format: z.literal(2),
    device: z.string(),
    target: z.string(),
    /** Each run: an id and where it came from (the bench command, suite and date). */
    runs: z.array(z.object({ id: z.string().min(1), source: z.string() }).strict()).min(1),
    shapes: z.array(RankerShapeSchema),
  })
  .strict()
  .superRefine((rows, ctx) => {
    const ids = rows.runs.map((r) => r.id);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: `duplicate run ids in ${ids.join(', ')}` });
    for (const s of rows.shapes) if (!ids.includes(s.run)) ctx.addIssue({ code: 'custom', message: `shape ${s.name} names run '${s.run}', which is not listed` });
  });

export type RankerRows = z.infer<typeof RankerRowsSchema>;

/** What identifies one run's rows: the device and target timed on, and the run's id and source. */
export interface RunMeta {
  readonly device: string;
  readonly target: string;
  readonly run: { readonly id: string; readonly source: string };
}

/**
 * Reduces a `rocke bench` / `rocke tune` details JSON (`{ shapes: ShapeResult[] }`) to the rows the
 * fit needs: every candidate that was timed without error and did not fail verification; split_c
 * candidates give one row per timed split count. Times are kept to 0.1 ns.
 */
export function rowsFromBenchDetails(details: unknown, meta: RunMeta): RankerRows {
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
    if (candidates.length) out.push({ name: s.name, run: meta.run.id, problem, candidates });
  }
  return RankerRowsSchema.parse({ format: 2, device: meta.device, target: meta.target, runs: [meta.run], shapes: out });
}

/** A problem's identity across runs (field order fixed by the schema). */
export function problemKey(problem: Problem): string {
  return JSON.stringify(ProblemSchema.parse(problem));
}

/**
 * Joins the rows of several runs on one device and target, in the order given, leaving out every
 * shape `exclude` names or whose problem it holds (an evaluation set stays out of the fit under any
 * name). Shapes keep their run; a shape with a single timed candidate is dropped (it orders nothing).
 */
export function mergeRows(parts: readonly RankerRows[], exclude: { names?: ReadonlySet<string>; problems?: ReadonlySet<string> } = {}): RankerRows {
  const first = parts[0];
  if (!first) throw new Error('no rows to merge');
  for (const p of parts) if (p.device !== first.device || p.target !== first.target) throw new Error(`rows of ${p.device} / ${p.target} cannot join rows of ${first.device} / ${first.target}`);
  const shapes = parts.flatMap((p) => p.shapes).filter((s) => s.candidates.length > 1 && !exclude.names?.has(s.name) && !exclude.problems?.has(problemKey(s.problem)));
  return RankerRowsSchema.parse({ format: 2, device: first.device, target: first.target, runs: parts.flatMap((p) => p.runs), shapes });
}

/**
 * The committed form of rows: one line per candidate, so a diff of a refit shows the rows that
 * changed. Parses back to the same rows.
 */
export function rowsSource(rows: RankerRows): string {
  const head = JSON.stringify({ format: rows.format, device: rows.device, target: rows.target, runs: rows.runs }, null, 1).slice(0, -2);
  const shapes = rows.shapes.map((s) => {
    const cands = s.candidates.map((c) => `    ${JSON.stringify(c)}`).join(',\n');
    return `  {"name": ${JSON.stringify(s.name)}, "run": ${JSON.stringify(s.run)}, "problem": ${JSON.stringify(s.problem)}, "candidates": [\n${cands}\n  ]}`;
  });
  return `${head},\n "shapes": [\n${shapes.join(',\n')}\n ]\n}\n`;
}

/** The class a problem is evaluated under (leave-one-class-out): derived from the problem alone. */
export function problemClass(problem: Problem): 'pointwise' | 'depthwise' | 'grouped' | 'small-map' | 'dense' {
  if (problem.R === 1 && problem.S === 1 && problem.groups === 1) return 'pointwise';
  if (problem.groups > 1) return problem.groups === problem.C && problem.K === problem.C ? 'depthwise' : 'grouped';
  const g = problemGeometry(problem);
  return g.Ho * g.Wo <= SPLIT_C_MAX_PIXELS ? 'small-map' : 'dense';
}

/** One row of the fit: a measured candidate with its raw cost terms and their coefficient keys. */
interface FitRow {
  readonly shape: string;
  readonly run: string;
  /** The shape in its run (`run/name`): times compare only within one. */
  readonly instance: string;
  readonly problemKey: string;
  readonly spec: Spec;
  readonly name: string;
  readonly problem: Problem;
  readonly splits: number;
  readonly medianMs: number;
  readonly raw: Readonly<Record<CostTerm, number>>;
  /** Residency rounds on the busiest unit (how much of the store overlaps). */
  readonly rounds: number;
  readonly keys: Readonly<Record<CostTerm, string>>;
}

function fitRows(rows: RankerRows): FitRow[] {
  const out: FitRow[] = [];
  for (const shape of rows.shapes) {
    const instance = `${shape.run}/${shape.name}`;
    const key = problemKey(shape.problem);
    for (const c of shape.candidates) {
      const parsed = specFromKernelName(c.kernelName);
      if (!parsed.ok) throw new Error(`shape ${shape.name}: ${parsed.reason}`);
      const splits = c.splits ?? 1;
      const { terms, facts } = costTerms(parsed.spec, shape.problem, splits);
      const keys = Object.fromEntries(COST_TERMS.map((t) => [t, coefficientKey(t, facts.atomClass)])) as Record<CostTerm, string>;
      out.push({ shape: shape.name, run: shape.run, instance, problemKey: key, spec: parsed.spec, name: c.kernelName, problem: shape.problem, splits, medianMs: c.medianMs, raw: terms, rounds: facts.storeRounds, keys });
    }
  }
  return out;
}

/** Options of {@link fitRanker}. */
export interface FitOptions {
  /** Ridge pull of each log coefficient toward 0 (the roofline), per unit of row weight (default 0.0002). */
  lambda?: number;
  /** Weight of each shape's mean log error against its within-shape spread (default 0.1): pins the time scale. */
  anchor?: number;
  /** Rows weigh (best / time)^weightPower: the fast candidates, among which the choice falls, count most (default 1). */
  weightPower?: number;
  /** Shapes left out of the fit (by name, in every run). */
  exclude?: ReadonlySet<string>;
}

const DEFAULTS = { lambda: 0.0002, anchor: 0.1, weightPower: 1 } as const;

/** A fit row with its coefficient keys resolved to indices of the fitted key list. */
interface IndexedRow {
  readonly row: FitRow;
  readonly key: readonly number[];
  /** The row's raw terms in COST_TERMS order. */
  readonly raw: readonly number[];
  readonly logMeasured: number;
  readonly weight: number;
}

/** Which cost terms the combination overlaps (a p-norm) rather than adds, in COST_TERMS order. */
const OVERLAPPED = COST_TERMS.map((t) => OVERLAPPED_TERMS.includes(t));

/**
 * Log predicted time of a row under log coefficients `theta` (combineTerms, written out), and its
 * gradient by coefficient index: an overlapped part's slope is (part / p-norm)^(p-1), an added one's 1.
 */
function predictLog(x: IndexedRow, coef: readonly number[]): { log: number; grad: number[] } {
  const exposed = 1 / x.row.rounds;
  const t = x.raw.map((v, i) => v * coef[x.key[i]!]!);
  // Each term as (overlapped part, added part): only the store splits (its last round's share adds).
  const parts = t.map((v, i) => (COST_TERMS[i] === 'store' ? [v * (1 - exposed), v * exposed] : OVERLAPPED[i] ? [v, 0] : [0, v]) as [number, number]);
  const o = parts.reduce((a, [p]) => a + p ** OVERLAP_NORM, 0) ** (1 / OVERLAP_NORM);
  const total = o + parts.reduce((a, [, q]) => a + q, 0);
  const grad = new Array<number>(coef.length).fill(0);
  parts.forEach(([p, q], i) => (grad[x.key[i]!]! += ((o > 0 ? p * (p / o) ** (OVERLAP_NORM - 1) : 0) + q) / total));
  return { log: Math.log(total), grad };
}

/** The residual vector and its Jacobian (rows: within-shape, per-shape anchor, ridge) at `theta`. */
function residuals(shapes: readonly (readonly IndexedRow[])[], theta: readonly number[], o: Required<Omit<FitOptions, 'exclude'>>): { r: number[]; j: number[][] } {
  const n = theta.length;
  const coef = theta.map(Math.exp);
  const r: number[] = [];
  const j: number[][] = [];
  let totalWeight = 0;
  for (const rowsOf of shapes) {
    const p = rowsOf.map((x) => predictLog(x, coef));
    const e = rowsOf.map((x, i) => p[i]!.log - x.logMeasured);
    const sw = rowsOf.reduce((a, x) => a + x.weight, 0);
    const mean = e.reduce((a, v, i) => a + rowsOf[i]!.weight * v, 0) / sw;
    const meanGrad = new Array<number>(n).fill(0);
    p.forEach((q, i) => q.grad.forEach((g, k) => (meanGrad[k]! += (rowsOf[i]!.weight * g) / sw)));
    rowsOf.forEach((x, i) => {
      const s = Math.sqrt(x.weight);
      r.push(s * (e[i]! - mean));
      j.push(p[i]!.grad.map((g, k) => s * (g - meanGrad[k]!)));
    });
    const a = Math.sqrt(o.anchor * sw);
    r.push(a * mean);
    j.push(meanGrad.map((v) => a * v));
    totalWeight += sw;
  }
  const l = Math.sqrt(o.lambda * totalWeight);
  for (let k = 0; k < n; k++) {
    r.push(l * theta[k]!);
    j.push(Array.from({ length: n }, (_, c) => (c === k ? l : 0)));
  }
  return { r, j };
}

/** Solves the symmetric positive definite system `a x = b` (Cholesky; `a` is n×n row-major). */
function solveSpd(a: number[][], b: number[]): number[] {
  const n = b.length;
  const l = a.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let jj = 0; jj <= i; jj++) {
      let sum = a[i]![jj]!;
      for (let k = 0; k < jj; k++) sum -= l[i]![k]! * l[jj]![k]!;
      l[i]![jj] = i === jj ? Math.sqrt(sum) : sum / l[jj]![jj]!;
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

const sumSquares = (r: readonly number[]) => r.reduce((a, v) => a + v * v, 0);

/** Relative decrease of the residual below which the fit stops. */
const CONVERGED = 1e-6;

/**
 * Levenberg-Marquardt on the log coefficients, from 0 (the roofline), until a step buys less than
 * {@link CONVERGED} of the residual (at most 100 steps): sums in row order, no randomness, so the
 * same rows give the same coefficients byte for byte.
 */
function fitOn(all: readonly FitRow[], rows: RankerRows, options: Omit<FitOptions, 'exclude'>, excluded: (row: FitRow) => boolean = () => false): RankerModel {
  const o = { lambda: options.lambda ?? DEFAULTS.lambda, anchor: options.anchor ?? DEFAULTS.anchor, weightPower: options.weightPower ?? DEFAULTS.weightPower };
  const used = all.filter((r) => !excluded(r));
  if (used.length === 0) throw new Error('no rows left to fit');
  const keys = [...new Set(used.flatMap((r) => COST_TERMS.map((t) => r.keys[t])))].sort();
  const byShape = new Map<string, FitRow[]>();
  for (const row of used) byShape.set(row.instance, [...(byShape.get(row.instance) ?? []), row]);
  const shapes = [...byShape.values()].map((rowsOf) => {
    const best = Math.min(...rowsOf.map((x) => x.medianMs));
    return rowsOf.map((row) => ({ row, key: COST_TERMS.map((t) => keys.indexOf(row.keys[t])), raw: COST_TERMS.map((t) => row.raw[t]), logMeasured: Math.log(row.medianMs * 1000), weight: (best / row.medianMs) ** o.weightPower }));
  });
  const n = keys.length;
  let theta = new Array<number>(n).fill(0);
  let damping = 1e-3;
  let current = residuals(shapes, theta, o);
  for (let iter = 0; iter < 100 && damping < 1e12; iter++) {
    const a = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    const g = new Array<number>(n).fill(0);
    current.j.forEach((row, i) => {
      for (let x = 0; x < n; x++) {
        g[x]! += row[x]! * current.r[i]!;
        for (let y = 0; y < n; y++) a[x]![y]! += row[x]! * row[y]!;
      }
    });
    for (let x = 0; x < n; x++) a[x]![x]! += damping * (a[x]![x]! + 1e-12);
    const step = solveSpd(a, g.map((v) => -v));
    const next = theta.map((v, x) => v + step[x]!);
    const trial = residuals(shapes, next, o);
    const [before, after] = [sumSquares(current.r), sumSquares(trial.r)];
    if (after < before) {
      theta = next;
      current = trial;
      damping = Math.max(damping / 10, 1e-9);
      // Converged: the step no longer buys a relative part in a million of the residual.
      if (before - after < CONVERGED * before) break;
    } else damping *= 10;
  }
  const round = (v: number) => Number(v.toPrecision(6));
  return {
    format: 2,
    target: rows.target as RankerModel['target'],
    coefficients: Object.fromEntries(keys.map((k, x) => [k, round(Math.exp(theta[x]!))])),
    fit: o,
    source: { device: rows.device, data: rows.runs.map((r) => `${r.id}: ${r.source}`).join('; '), shapes: [...new Set(used.map((r) => r.shape))], rows: used.length },
  };
}

/** Fits the cost model's coefficients on `rows` (all shapes but `options.exclude`). Same rows and options → same model. */
export function fitRanker(rows: RankerRows, options: FitOptions = {}): RankerModel {
  const { exclude, ...rest } = options;
  return fitOn(fitRows(rows), rows, rest, (r) => exclude?.has(r.shape) ?? false);
}

/** One evaluated shape: the measured time of the model's pick against the shape's best. */
export interface HeldOutShape {
  shape: string;
  run: string;
  cls: string;
  chosen: string;
  chosenSplits: number;
  chosenMs: number;
  bestMs: number;
  /** chosenMs / bestMs (1: the model picked the fastest measured candidate). */
  ratio: number;
  /** Where the fastest measured candidate sits in the model's order of the measured ones (1: first): the cap a bench needs to keep it. */
  bestRank: number;
}

/** Per-shape results with their geometric mean and worst ratio. */
export interface Evaluation {
  shapes: HeldOutShape[];
  geomean: number;
  worst: number;
}

/**
 * Leave-one-group-out: for each group of shapes (`groupOf`, read from the problem), fits on the
 * other groups and picks among each held-out shape's measured candidates (in every run) by the model.
 */
export function leaveGroupOut(rows: RankerRows, groupOf: (problem: Problem) => string, options: Omit<FitOptions, 'exclude'> = {}): Evaluation {
  const all = fitRows(rows);
  const group = new Map(rows.shapes.map((s) => [problemKey(s.problem), groupOf(s.problem)]));
  const models = new Map([...new Set(group.values())].map((g) => [g, fitOn(all, rows, options, (r) => group.get(r.problemKey) === g)]));
  return summarize(rows.shapes.map((s) => pick(all.filter((r) => r.instance === `${s.run}/${s.name}`), models.get(groupOf(s.problem))!)));
}

/** Leave-one-shape-out: a shape is its problem, held out of the fit in every run that timed it. */
export function leaveOneShapeOut(rows: RankerRows, options: Omit<FitOptions, 'exclude'> = {}): Evaluation {
  return leaveGroupOut(rows, problemKey, options);
}

/** Leave-one-class-out ({@link problemClass}): every shape of a class held out together. */
export function leaveOneClassOut(rows: RankerRows, options: Omit<FitOptions, 'exclude'> = {}): Evaluation {
  return leaveGroupOut(rows, problemClass, options);
}

/** The model's pick per shape of `rows` against each shape's measured best. */
export function evaluateRanker(rows: RankerRows, model: RankerModel): Evaluation {
  const all = fitRows(rows);
  return summarize(rows.shapes.map((s) => pick(all.filter((r) => r.instance === `${s.run}/${s.name}`), model)));
}

/** The model's choice among one shape's measured rows, and how it measured against the best. */
function pick(mine: readonly FitRow[], model: RankerModel): HeldOutShape {
  const scored = mine.map((r) => ({ r, score: rankerScore(model, r.spec, r.problem, r.splits) }));
  scored.sort((a, b) => a.score - b.score || (a.r.name < b.r.name ? -1 : a.r.name > b.r.name ? 1 : 0) || a.r.splits - b.r.splits);
  const chosen = scored[0]!.r;
  const bestMs = Math.min(...mine.map((r) => r.medianMs));
  // Split counts of one kernel are one bench candidate: rank kernels by their first appearance.
  const kernels = [...new Set(scored.map((s) => s.r.name))];
  const bestRank = kernels.indexOf(scored.find((s) => s.r.medianMs === bestMs)!.r.name) + 1;
  return { shape: chosen.shape, run: chosen.run, cls: problemClass(chosen.problem), chosen: chosen.name, chosenSplits: chosen.splits, chosenMs: chosen.medianMs, bestMs, ratio: chosen.medianMs / bestMs, bestRank };
}

function summarize(shapes: HeldOutShape[]): Evaluation {
  const geomean = 2 ** (shapes.reduce((s, x) => s + Math.log2(x.ratio), 0) / Math.max(1, shapes.length));
  return { shapes, geomean, worst: Math.max(1, ...shapes.map((s) => s.ratio)) };
}

/** The TypeScript source of ranker/model.generated.ts for a fitted model. */
export function generatedModelSource(model: RankerModel): string {
  return [
    '// Generated by `ROCKE_FIT_RANKER=1 npx vitest run src/ranker/fit.test.ts` from ranker/h200-rows.json; do not edit.',
    "// The cost model's fitted coefficients (see cost-model.ts and ranker/fit.ts).",
    `export const FITTED_RANKER = ${JSON.stringify(model, null, 2)} as const;`,
    '',
  ].join('\n');
}
