/**
 * Choosing a kernel for a problem without timing anything: the tuning record for the problem on
 * this device if there is one, else the ranker over the valid candidates.
 */
import { problemCandidates } from '../candidates.js';
import type { Problem } from '../problem.js';
import type { Epilogue } from '@rocke/ir';
import { kernelName, parseSpec, withEpilogue, type Spec, type Variant } from '../spec.js';
import { spillFilter } from '../spill.js';
import type { TargetName } from '../targets.js';
import { frozenProblem, validate } from '../validate.js';
import { benchVariants } from '../selection.js';
import { defaultRankerModel, rankerOrder, rankerExplain, type RankedCandidate, type RankerModel } from './model.js';

/** What a tuning record holds for conv-direct: the winning spec and launch, its time and where it was measured. */
export interface ConvRecordChoice {
  readonly spec: unknown;
  readonly launch: { readonly splits?: unknown };
  readonly timeMs: number;
  readonly device: string;
  readonly date: string;
}

/** The chosen kernel and why. */
export interface ConvChoice {
  readonly spec: Spec;
  readonly kernelName: string;
  /** split_c: the split count to launch with. */
  readonly splits?: number;
  readonly chosenBy: 'record' | 'ranker';
  /** One line per decision. */
  readonly explain: readonly string[];
  /** Ranker: the candidates in predicted order (the first is the choice). */
  readonly ranked?: readonly RankedCandidate[];
}

/** Options of {@link chooseConv}. */
export interface ChooseOptions {
  /** The tuning record for (device arch, problem), if one exists. */
  readonly record?: ConvRecordChoice | undefined;
  /** Variants the ranker weighs (default: the bench's, {@link benchVariants}). */
  readonly variants?: readonly Variant[];
  /** Only kernels this says are available (compiled in a cache or catalog); default: every valid one. */
  readonly available?: (kernelName: string) => boolean;
  readonly model?: RankerModel;
  /** The valid candidates of the variants, when the caller has them already (`problemCandidates(...).valid`); default: computed here. */
  readonly candidates?: readonly Spec[];
  /**
   * A fused epilogue: the candidates (and the record's kernel) are weighed in their fused form
   * ({@link withEpilogue}: at the store, split_c bare since its reduce applies it); those that
   * cannot fuse it are left out.
   */
  readonly epilogue?: Epilogue;
}

/** The record's choice, when it still serves the problem; else the reason it is ignored. */
function fromRecord(record: ConvRecordChoice, problem: Problem, target: TargetName, available?: (name: string) => boolean, epilogue?: Epilogue): ConvChoice | string {
  const parsed = parseSpec(record.spec);
  if (!parsed.ok) return `the tuning record's spec does not parse (${parsed.reason})`;
  const spec = withEpilogue(parsed.spec, epilogue);
  const name = kernelName(spec);
  if (spec.target !== target) return `the tuning record is for ${spec.target}, not ${target}`;
  const splits = typeof record.launch.splits === 'number' ? record.launch.splits : undefined;
  const v = validate(spec, problem, splits === undefined ? {} : { splits });
  if (!v.ok) return `the tuning record's kernel no longer validates (${v.reason})`;
  if (available && !available(name)) return `the tuning record's kernel ${name} is not available here`;
  const us = (record.timeMs * 1000).toFixed(1);
  return {
    spec,
    kernelName: name,
    ...(splits !== undefined ? { splits } : {}),
    chosenBy: 'record',
    explain: [`record: ${name}${splits !== undefined ? ` splits ${splits}` : ''}, the fastest verified candidate when tuned (${us} us on ${record.device}, ${record.date})`],
  };
}

/**
 * Chooses a kernel for `problem` on `target`: the tuning record if it still validates (and is
 * available), else the ranker's first choice among the valid, non-spilling candidates of the
 * variants (restricted to `available`). Returns the reason when nothing can be chosen.
 */
export function chooseConv(given: Problem, target: TargetName, options: ChooseOptions = {}): ConvChoice | { reason: string } {
  const problem = frozenProblem(given);
  const notes: string[] = [];
  if (options.record) {
    const r = fromRecord(options.record, problem, target, options.available, options.epilogue);
    if (typeof r !== 'string') return r;
    notes.push(`record ignored: ${r}`);
  } else notes.push('no tuning record for this problem on this device');
  const variants = options.variants ?? benchVariants(problem);
  const valid = options.candidates ?? variants.flatMap((variant) => problemCandidates(problem, target, { variant }).valid);
  const kept = spillFilter(valid).kept;
  const specs = options.epilogue ? kept.map((s) => withEpilogue(s, options.epilogue)).filter((s) => validate(s, problem).ok) : kept;
  const pool = options.available ? specs.filter((s) => options.available!(kernelName(s))) : specs;
  if (pool.length === 0) {
    const where = options.available ? ` (${specs.length} valid, none available)` : '';
    return { reason: `no valid ${variants.join('/')} candidate for this problem on ${target}${where}` };
  }
  const model = options.model ?? defaultRankerModel();
  const ranked = rankerOrder(pool, problem, model);
  const first = ranked[0];
  if (!first) return { reason: `none of the ${pool.length} candidates can be planned for this problem` };
  return {
    spec: first.spec,
    kernelName: first.kernelName,
    ...(first.splits !== undefined ? { splits: first.splits } : {}),
    chosenBy: 'ranker',
    explain: [...notes, ...rankerExplain(ranked, model)],
    ranked,
  };
}
