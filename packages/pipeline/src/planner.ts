/**
 * What bench/ needs to know about a kernel family's problems, and nothing more: the contract a
 * family's planner fills (cli/wiring.ts plugs conv-direct's in). bench/ handles problems, specs and
 * launch sequences as this file types them; the family decides what they mean.
 */
import type { Epilogue, SequencedLaunch } from '@rocke/ir';
import type { EpilogueValues } from '@rocke/reference';
import type { AnyFamily } from './compile/family.js';
import type { TargetName } from './compile/llvm-toolchain.js';

/** Element types the bench's tensors hold (16-bit bits in Uint16Arrays). */
export type Dtype = 'fp16' | 'bf16';

/** A problem as the pipeline carries it: the family's JSON object; the pipeline reads its dtype only. */
export interface OpProblem {
  readonly dtype: Dtype;
}

/** A problem with the name and class it is reported under (a suite entry). */
export interface NamedOpProblem {
  name: string;
  cls: string | null;
  problem: OpProblem;
}

/**
 * One launch of a planned sequence, in stream order (@rocke/ir's launch shape, which the kernel
 * packages' plans produce): `conv` runs the candidate's own kernel, `reduce` the helper kernel that
 * follows it.
 */
export type PlannedLaunch = SequencedLaunch<'conv' | 'reduce'>;

/** A candidate's plan for a problem and its launches in stream order. */
export interface PlannedSequence {
  readonly plan: {
    readonly kernelName: string;
    /** Workspace bytes to bind as buffer `ws` (0: none). */
    readonly workspaceBytes: number;
    /** The split count, for a plan that splits its reduction (reported with the timing). */
    readonly splits?: number;
    readonly explain: readonly string[];
  };
  readonly launches: readonly PlannedLaunch[];
}

/** A helper kernel of a kernels directory (the family's second-pass kernels). */
export interface HelperKernel {
  kernelName: string;
  spec: unknown;
}

/** How one shape's outputs are checked against a reference. */
export interface ReferenceCheck {
  /** `full` (every output) or `sampled N` (N seeded outputs). */
  readonly mode: string;
  check(y: Uint16Array): { pass: boolean; count: number; mismatches: number; maxAbs: number; maxRel: number; worstRatio: number };
}

/** Bytes and shapes of a problem's tensors (x, w, y; the bias has `channels` elements). */
export interface ProblemTensors {
  xBytes: number;
  wBytes: number;
  yBytes: number;
  /** Bias elements of a fused epilogue (the output channels). */
  channels: number;
  /** Multiply-adds of the problem (decides a full or sampled reference check). */
  macs: number;
  /** y's dimensions, outermost first (an .npy of the output). */
  yShape: number[];
}

/** One shape's selection: its variants' counts and its candidates in bench order. */
export interface PlannedSelection {
  name: string;
  cls: string | null;
  problem: OpProblem;
  /** Candidates per shape this selection was capped at. */
  cap: number;
  /** Per apt variant: valid candidates, and why selecting it failed, if it did. */
  variants: { variant: string; valid: number; selected: number; error?: string }[];
  /** Candidates in bench order: the selected ones first, then those the cap left out (back-fill). */
  ranked: { variant: string; spec: unknown; kernelName: string; score: number }[];
  /** How many of `ranked` the cap selected. */
  selected: number;
}

/**
 * A kernel family as bench/ uses it: its compile family and helpers, its selection, its launch
 * planning, its reference and its vendor baseline. Everything about what a problem is lives behind it.
 */
export interface OpPlanner {
  /** The family whose kernels are selected and timed. */
  readonly family: AnyFamily;
  /** Its helper kernels' family (compiled whole beside it), with a fused epilogue when given. */
  helperFamily(epilogue?: Epilogue): AnyFamily;
  /** Candidates per shape when no cap is given. */
  readonly defaultCap: number;
  /** Reads a problem as stored in a manifest or suite: the problem, or a one-line reason. */
  parseProblem(json: unknown): { ok: true; problem: OpProblem } | { ok: false; reason: string };
  tensors(problem: OpProblem): ProblemTensors;
  /** Each shape's candidates on `target` under `cap` (only `variants` when given), with `epilogue` compiled in. */
  select(problems: readonly NamedOpProblem[], target: TargetName, options: { cap: number; variants?: readonly string[]; epilogue?: Epilogue }): PlannedSelection[];
  /** The selection among kernels already compiled (`isCompiled` by kernel name), for a manifest built from a cache. */
  compiledSelection(problem: OpProblem, target: TargetName, cap: number, isCompiled: (kernelName: string) => boolean): { variants: { variant: string; valid: number; compiled: number }[]; picks: PlannedSelection['ranked'] };
  /**
   * The launch sequences to time for a candidate (several when a launch parameter is tried, the
   * fastest kept), and the fields the bench reports beside its time (e.g. `merge`).
   */
  trials(spec: unknown, problem: OpProblem, helpers: readonly HelperKernel[], epilogue?: Epilogue): { trials: PlannedSequence[]; report: { merge?: number } };
  /** The helper kernel a problem's multi-launch plans use, if any fits. */
  helperFor<H extends HelperKernel>(helpers: readonly H[], problem: OpProblem, epilogue?: Epilogue): H | undefined;
  /** The reference of one shape's inputs: full up to `fullMaxMacs`, else sampled with `seed`. */
  reference(problem: OpProblem, x: Uint16Array, w: Uint16Array, seed: number, fullMaxMacs: number, epilogue?: EpilogueValues): Promise<ReferenceCheck>;
  /** The problem as the vendor baseline script reads it, or why it cannot be written. */
  baselineShape(name: string, cls: string | null, problem: OpProblem): Record<string, unknown> | string;
}

/** A fused epilogue to run: its compiled-in shape and the scalars it launches with (alpha, beta default 1). */
export interface OpEpilogue extends Epilogue {
  alpha?: number;
  beta?: number;
  slope?: number;
  lo?: number;
  hi?: number;
}

/** A kernel chosen without timing, and why. */
export interface OpChoice {
  readonly kernelName: string;
  /** The launch parameter the plan splits its reduction by, when it does. */
  readonly splits?: number;
  readonly chosenBy: 'record' | 'ranker';
  /** One line per decision. */
  readonly explain: readonly string[];
}

/** A compiled kernel a runtime can load (a kernel source's). */
export interface LoadableKernel {
  kernelName: string;
  spec: unknown;
}

/** What {@link OpRuntime.open} returns: the choice, its launches, and the kernels and argument tables each role loads. */
export interface OpenedPlan<C extends OpChoice, K extends LoadableKernel, L extends PlannedSequence['plan']> {
  choice: C;
  sequence: { plan: L; launches: PlannedSequence['launches'] };
  conv: { kernel: K; signature: PlannedLaunch['signature'] };
  reduce?: { kernel: K; signature: PlannedLaunch['signature'] };
}

/** A tuning record's choice as a runtime reads it. */
export interface RecordedChoice {
  spec: unknown;
  launch: Record<string, unknown>;
  timeMs: number;
  device: string;
  date: string;
}

/**
 * A kernel family as api/ runs it: which targets it has kernels for, its problems' tensor sizes,
 * and how it chooses and plans a kernel among compiled ones, with no timing. `O` is the family's
 * own options (e.g. a ranker model).
 */
export interface OpRuntime<P extends OpProblem, C extends OpChoice, O, L extends PlannedSequence['plan'] = PlannedSequence['plan']> {
  /** Names the family in messages. */
  readonly name: string;
  /** Cache family names of its kernels and of its helper kernels. */
  readonly families: { kernels: string; helpers: string };
  hasTarget(arch: string): boolean;
  tensors(problem: P): ProblemTensors;
  /** Whether a stored spec is one of its kernels' (a catalog keeps only those). */
  isSpec(spec: unknown): boolean;
  /** A short label of a problem (a catalog plan without a name). */
  label(problem: P): string;
  /** Chooses among `available` kernels (the record first when it still serves), or the reason none fits. */
  choose(problem: P, target: string, options: { available: (kernelName: string) => boolean; record?: RecordedChoice }): C | { reason: string };
  /** Chooses and plans the launches over a source's kernels and helpers; throws with a one-line reason. */
  open<K extends LoadableKernel>(problem: P, arch: string, source: { kernels: ReadonlyMap<string, K>; helpers: readonly K[]; root: string; record?: RecordedChoice }, options: Partial<O> & { epilogue?: OpEpilogue }): OpenedPlan<C, K, L>;
}
