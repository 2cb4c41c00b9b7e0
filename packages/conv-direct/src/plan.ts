/**
 * Launch plans: grid, block, shared memory and kernargs of every launch a problem needs. Batches
 * whose activations pass the 32-bit buffer range run as balanced per-chunk launches over views of
 * the same buffers (NHWC / NHWK are batch-outermost, so a chunk of images is one byte range).
 */
import { kernargValues, type BufferRef, type EpilogueScalars, type KernargValue } from './abi.js';
import { launchGrid } from './grid.js';
import { PlanError } from './plan-error.js';
import { checkProblem, problemGeometry, problemLabel, type Dtype, type Problem } from './problem.js';
import { kernelName, specGeometry, type Spec, type Variant } from './spec.js';
import { chooseSplits } from './split-chooser.js';
import { MAX_GRID, MAX_TENSOR_BYTES, type TargetName } from './targets.js';
import { validate, WORKSPACE_ELEMENT_BYTES } from './validate.js';

/** One kernel launch. */
export interface Launch {
  readonly kernelName: string;
  /** Workgroups (x, y, z); the kernels use a flat x grid. */
  readonly grid: readonly [number, number, number];
  /** Threads per workgroup. */
  readonly block: readonly [number, number, number];
  /** Dynamic shared memory (LDS) bytes. */
  readonly sharedBytes: number;
  /** Values in ABI-table order; pointers are views of the bound buffers. */
  readonly kernargs: readonly KernargValue[];
  /** Byte offsets of this launch's views into x and y (and ws; always 0, the workspace is reused). */
  readonly xOffsetBytes: number;
  readonly yOffsetBytes: number;
  readonly wsOffsetBytes: number;
  /** Images [start, start + count) of the batch. */
  readonly images: { readonly start: number; readonly count: number };
  /** The problem this launch solves (the batch restricted to its images). */
  readonly problem: Problem;
  /** Channel slices (split_c), else 1. */
  readonly splits: number;
  /** Workspace bytes this launch writes (split_c), else 0. */
  readonly workspaceBytes: number;
}

/**
 * What @rocke/split-reduce needs after a split_c launch: fold `splits` fp32 slices of `elements`
 * values each (slice stride `elements`), starting at `wsOffsetBytes`, into y at `yOffsetBytes`.
 */
export interface ReduceStep {
  readonly launchIndex: number;
  readonly splits: number;
  readonly elements: number;
  readonly wsOffsetBytes: number;
  readonly yOffsetBytes: number;
  readonly dtype: Dtype;
}

/** Everything needed to run one problem with one spec. */
export interface LaunchPlan {
  readonly kernelName: string;
  readonly variant: Variant;
  readonly launches: readonly Launch[];
  /** Workspace to allocate (split_c: the largest launch's [splits, n, Ho, Wo, K] fp32), else 0. */
  readonly workspaceBytes: number;
  /** split_c: the split count every launch uses. */
  readonly splits?: number;
  /** split_c: the reduce that must follow each launch, before the next launch reuses the workspace. */
  readonly reduce?: readonly ReduceStep[];
  /** Why the plan looks the way it does, one line per decision. */
  readonly explain: readonly string[];
}

/** Options for {@link plan}. */
export interface PlanOptions {
  /** split_c: a fixed split count; by default the split planner chooses one. */
  splits?: number;
  /** split_c: waves of resident workgroups to aim for (default: the cost model's lowest predicted time). */
  minWaves?: number;
  /** The scalars of the spec's fused epilogue (alpha, beta default 1; slope, lo, hi where its act needs them). */
  epilogue?: EpilogueScalars;
}

/**
 * Image counts of `chunks` balanced chunks over `n` images: the first `n mod chunks` get one more.
 * Every chunk differs from every other by at most one image.
 */
export function balancedChunks(n: number, maxPerChunk: number): number[] {
  if (!Number.isInteger(n) || n < 1) throw new PlanError(`batch must be a positive integer (got ${n})`);
  if (!Number.isInteger(maxPerChunk) || maxPerChunk < 1) throw new PlanError(`images per chunk must be a positive integer (got ${maxPerChunk})`);
  const chunks = Math.ceil(n / maxPerChunk);
  const base = Math.floor(n / chunks);
  const extra = n % chunks;
  // Largest chunks first: callers read the extremes as counts[0] and counts[length - 1].
  return Array.from({ length: chunks }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * Most launches one plan may hold. A launch covers up to MAX_TENSOR_BYTES of its largest tensor (or
 * MAX_GRID workgroups), so a batch needing more than this many is terabytes of operands, past the
 * memory of any one device; refusing it keeps the plan (one record per launch) small.
 */
export const MAX_PLAN_LAUNCHES = 1024;

const hexLimit = `0x7F000000 (${MAX_TENSOR_BYTES})`;

/**
 * Plans `problem` with `spec` on `target`. Throws a {@link PlanError} whose message names the
 * reason and sizes when the spec cannot serve the problem, the weights pass the buffer range, or a
 * single image does.
 */
export function plan(spec: Spec, problem: Problem, target: TargetName, opts: PlanOptions = {}): LaunchPlan {
  const specCheck = validate(spec);
  if (!specCheck.ok) throw new PlanError(`invalid spec: ${specCheck.reason}`);
  if (spec.target !== target) throw new PlanError(`spec is built for ${spec.target}, not ${target}`);
  const problemReason = checkProblem(problem);
  if (problemReason) throw new PlanError(`invalid problem: ${problemReason}`);
  if (spec.variant !== 'split_c' && opts.splits !== undefined && opts.splits !== 1) {
    throw new PlanError(`splits ${opts.splits} needs the split_c variant (spec is ${spec.variant})`);
  }
  const split = spec.variant === 'split_c';
  const name = kernelName(spec);
  const geo = problemGeometry(problem);
  const sg = specGeometry(spec);
  const explain: string[] = [
    `${name} for ${problemLabel(problem)}: ${sg.threads} threads, ${sg.ldsBytes} bytes LDS per workgroup`,
    `tensors: x ${geo.xBytes}, w ${geo.wBytes}, y ${geo.yBytes} bytes (per-launch limit ${hexLimit})`,
  ];

  if (geo.wBytes > MAX_TENSOR_BYTES) {
    throw new PlanError(`w is ${geo.wBytes} bytes (K ${problem.K} x ${problem.R}x${problem.S} x cpg ${geo.cpg} x 2), over the per-launch limit ${hexLimit}; weights cannot be chunked`);
  }
  // Per-image bytes of every batch-outermost tensor; ws counts one slice when splits are chosen later.
  const fixedSplits = split ? (opts.splits ?? 1) : 1;
  const perImage: [string, number, string][] = [
    ['x', geo.xImageBytes, `H ${problem.H} x W ${problem.W} x C ${problem.C} x 2`],
    ['y', geo.yImageBytes, `Ho ${geo.Ho} x Wo ${geo.Wo} x K ${problem.K} x 2`],
  ];
  if (split) {
    perImage.push(['ws', WORKSPACE_ELEMENT_BYTES * fixedSplits * geo.Ho * geo.Wo * problem.K, `splits ${fixedSplits} x Ho ${geo.Ho} x Wo ${geo.Wo} x K ${problem.K} x 4`]);
  }
  const [bigName, bigBytes, bigFormula] = perImage.reduce((a, b) => (b[1] > a[1] ? b : a));
  if (bigBytes > MAX_TENSOR_BYTES) {
    throw new PlanError(`one image of ${bigName} is ${bigBytes} bytes (${bigFormula}), over the per-launch limit ${hexLimit}; the batch cannot be split below one image`);
  }
  const one = validate(spec, { ...problem, N: 1 }, { splits: fixedSplits });
  if (!one.ok) throw new PlanError(`spec cannot serve this problem: ${one.reason}`);
  const byBytes = Math.floor(MAX_TENSOR_BYTES / bigBytes);
  const wgPerImage = launchGrid(spec, { ...problem, N: 1 }, fixedSplits).workgroups;
  const byGrid = Math.floor(MAX_GRID / wgPerImage);
  const maxImages = Math.min(byBytes, byGrid);
  const launchCount = Math.ceil(problem.N / maxImages);
  if (launchCount > MAX_PLAN_LAUNCHES) {
    throw new PlanError(
      `batch of ${problem.N} needs ${launchCount} launches of at most ${maxImages} images, over the limit of ${MAX_PLAN_LAUNCHES} per plan ` +
        `(x is ${problem.N * geo.xImageBytes} bytes, y ${problem.N * geo.yImageBytes}: more than one device holds); split the batch`,
    );
  }
  const counts = balancedChunks(problem.N, maxImages);
  if (counts.length === 1) {
    explain.push(`one launch covers all ${problem.N} images`);
  } else {
    const limitBy = byGrid < byBytes ? `the grid limit (${wgPerImage} workgroups per image)` : `${bigName} at ${bigBytes} bytes per image`;
    explain.push(
      `batch of ${problem.N} passes the per-launch limits: ${counts.length} balanced chunks of ${counts[counts.length - 1]}..${counts[0]} images ` +
        `(at most ${maxImages} per launch, set by ${limitBy}); each chunk is a view of the same buffers`,
    );
  }

  let splits = 1;
  if (split) {
    const largest = { ...problem, N: counts[0]! };
    if (opts.splits !== undefined) {
      splits = opts.splits;
      explain.push(`splits ${splits} fixed by the caller`);
    } else {
      const choice = chooseSplits(spec, largest, opts.minWaves);
      splits = choice.splits;
      explain.push(...choice.explain);
    }
    if (counts.length > 1) explain.push('chunks reuse the workspace: run each chunk\'s reduce before the next chunk\'s conv (stream order)');
  }

  const launches: Launch[] = [];
  const reduce: ReduceStep[] = [];
  let start = 0;
  for (const count of counts) {
    const chunk: Problem = { ...problem, N: count };
    const v = validate(spec, chunk, { splits });
    if (!v.ok) throw new PlanError(`images ${start}..${start + count - 1}: ${v.reason}`);
    const xOffsetBytes = start * geo.xImageBytes;
    const yOffsetBytes = start * geo.yImageBytes;
    const view = (buffer: BufferRef['buffer'], offsetBytes: number): BufferRef => ({ buffer, offsetBytes });
    const workspaceBytes = split ? WORKSPACE_ELEMENT_BYTES * splits * count * geo.Ho * geo.Wo * problem.K : 0;
    const kernargs = kernargValues(
      spec.variant,
      chunk,
      { x: view('x', xOffsetBytes), w: view('w', 0), y: view('y', yOffsetBytes), ...(split ? { ws: view('ws', 0) } : {}) },
      { ...(split ? { splits } : {}), ...(spec.epilogue ? { epilogue: { shape: spec.epilogue, scalars: opts.epilogue ?? {} } } : {}) },
    );
    const grid = launchGrid(spec, chunk, splits);
    launches.push({
      kernelName: name,
      grid: [grid.workgroups, 1, 1],
      block: [sg.threads, 1, 1],
      sharedBytes: sg.ldsBytes,
      kernargs,
      xOffsetBytes,
      yOffsetBytes,
      wsOffsetBytes: 0,
      images: { start, count },
      problem: chunk,
      splits,
      workspaceBytes,
    });
    if (split) {
      reduce.push({ launchIndex: launches.length - 1, splits, elements: count * geo.Ho * geo.Wo * problem.K, wsOffsetBytes: 0, yOffsetBytes, dtype: problem.dtype });
    }
    start += count;
  }
  const workspaceBytes = Math.max(0, ...launches.map((l) => l.workspaceBytes));
  return split
    ? { kernelName: name, variant: spec.variant, launches, workspaceBytes, splits, reduce, explain }
    : { kernelName: name, variant: spec.variant, launches, workspaceBytes, explain };
}
