/**
 * Split-count planner for the split_c variant. The split count is a runtime kernarg, so the
 * choice is per launch, by the cost model (cost-model.ts): more slices fill the machine, and every
 * extra slice adds N*Ho*Wo*K fp32 of workspace traffic and shortens the channel loop the loads
 * hide behind; the predicted time settles the trade.
 */
import { TARGETS } from '@rocke/ir';
import { launchGrid } from './grid.js';
import { PlanError } from './plan-error.js';
import { problemGeometry, type Problem } from './problem.js';
import { residency, type Residency } from './residency.js';
import type { Spec } from './spec.js';
import { defaultCoefficients, estimateCost, type CostCoefficients, type CostEstimate } from './cost-model.js';
import { longestSlice, splitUnit } from './split-slices.js';
import { splitCountReason, validate, WORKSPACE_ELEMENT_BYTES } from './validate.js';

/** Waves of resident workgroups a grid needs before the merge chooser stops flagging it (and a `minWaves` callers may pass). */
export const TARGET_WAVES = 2;

/** One feasible split count. */
export interface SplitOption {
  readonly splits: number;
  /** Channels of the longest slice (the others have as many or one channel run fewer). */
  readonly channelsPerSplit: number;
  readonly workgroups: number;
  /** workgroups / resident slots. */
  readonly waves: number;
  /** fp32 workspace [splits, N, Ho, Wo, K] in bytes. */
  readonly workspaceBytes: number;
}

/** The planner's decision and why. */
export interface SplitChoice extends SplitOption {
  readonly residency: Residency;
  /** Every feasible split count, ascending. */
  readonly options: readonly SplitOption[];
  readonly explain: readonly string[];
}

/**
 * Split counts worth launching for `spec` over `problem`: each slice whole channel runs (ck, or
 * c_tail when the spec has a channel tail; uneven by at most one run, split-slices.ts), and of the
 * counts whose longest slice is equally long only the smallest — a larger one adds workgroups and
 * workspace traffic but leaves every workgroup the same channel loop to wait for. The workspace
 * fits the buffer range and the grid stays below 2^31 (validation).
 */
export function splitOptions(spec: Spec, problem: Problem): SplitOption[] {
  if (spec.variant !== 'split_c') throw new PlanError(`split counts apply to split_c specs, not ${spec.variant}`);
  const base = validate(spec, problem, { splits: 1 });
  if (!base.ok) throw new PlanError(`spec cannot run this problem: ${base.reason}`);
  const g = problemGeometry(problem);
  const slots = residency(spec).slots;
  const options: SplitOption[] = [];
  const unit = splitUnit(spec);
  for (let s = 1; s * unit <= problem.C; s++) {
    const longest = longestSlice(problem.C, unit, s);
    if (s > 1 && longest === longestSlice(problem.C, unit, s - 1)) continue;
    // One split validated (base): another does when the rules that read the count pass.
    if (splitCountReason(spec, problem, s) !== null) continue;
    const workgroups = launchGrid(spec, problem, s).workgroups;
    options.push({
      splits: s,
      channelsPerSplit: longest,
      workgroups,
      waves: workgroups / slots,
      workspaceBytes: WORKSPACE_ELEMENT_BYTES * s * problem.N * g.Ho * g.Wo * problem.K,
    });
  }
  return options;
}

/**
 * Picks the split count. By default the cost model's (cost-model.ts): every feasible count's
 * predicted time — grid fill against workspace traffic, the reduce launch and a shorter channel
 * loop — and the lowest wins (ties: fewer slices). With `minWaves`, the smallest count whose grid
 * reaches that many waves of resident workgroups, else the largest feasible one (the most fill
 * available). Throws a {@link PlanError} when the spec cannot run the problem at all or
 * `minWaves` is not a positive number. `coefficients`: the cost model's (default: the committed fit).
 */
export function chooseSplits(spec: Spec, problem: Problem, minWaves?: number, coefficients: CostCoefficients = defaultCoefficients(spec.target)): SplitChoice {
  if (minWaves !== undefined && (!(minWaves > 0) || !Number.isFinite(minWaves))) throw new PlanError(`minWaves must be a positive number, got ${minWaves}`);
  const options = feasibleSplits(spec, problem);
  const res = residency(spec);
  const t = TARGETS[spec.target];
  const first = options[0]!;
  const head = [
    `residency: ${res.perUnit} workgroup(s) per ${t.vendor === 'amd' ? 'CU' : 'SM'} (limited by ${res.limitedBy}; ` +
      `threads ${res.limits.threads}, shared ${res.limits.shared}, registers ${res.limits.registers}` +
      `${res.limits.blocks === null ? '' : `, blocks ${res.limits.blocks}`}) x ${t.computeUnits} = ${res.slots} slots`,
    `unsplit grid: ${first.workgroups} workgroups`,
    `feasible splits (C ${problem.C} in slices of whole ${spec.c_tail === 0 ? `ck ${spec.ck}` : `c_tail ${spec.c_tail}`} runs, the smallest count per longest slice, workspace <= 0x7F000000): ${options.map((o) => o.splits).join(', ')}`,
  ];
  const done = (pick: SplitOption, why: string): SplitChoice => ({
    ...pick,
    residency: res,
    options,
    explain: [...head, `chose splits ${pick.splits}: ${why} (${pick.workgroups} workgroups, ${pick.waves.toFixed(2)} waves, ${pick.channelsPerSplit} channels in the longest split, workspace ${pick.workspaceBytes} bytes)`],
  });
  if (minWaves === undefined) {
    const { costs, best } = cheapest(spec, problem, options, coefficients);
    const near = [...costs].sort((a, b) => a.us - b.us || a.o.splits - b.o.splits).slice(0, 4);
    return done(best.o, `the lowest predicted time of the cost model, ${best.us.toFixed(2)} us (${near.map((c) => `${c.o.splits}: ${c.us.toFixed(2)}`).join(', ')})`);
  }
  const need = Math.ceil(minWaves * res.slots);
  const reaching = options.find((o) => o.workgroups >= need);
  if (reaching) return done(reaching, `the smallest reaching ${minWaves} waves (${need} workgroups)`);
  return done(options[options.length - 1]!, `no feasible count reaches ${minWaves} waves; the largest gives the most fill`);
}

/** {@link splitOptions}, at least one: throws a PlanError when none is feasible. */
function feasibleSplits(spec: Spec, problem: Problem): SplitOption[] {
  const options = splitOptions(spec, problem);
  if (options.length === 0) throw new PlanError(`no split count is feasible for C ${problem.C}, ck ${spec.ck}`);
  return options;
}

/** Every option's predicted cost and the lowest (the first of equal ones: fewer slices). */
function cheapest(spec: Spec, problem: Problem, options: readonly SplitOption[], coefficients: CostCoefficients) {
  const costs = options.map((o) => {
    const cost = estimateCost(spec, problem, o.splits, coefficients);
    return { o, cost, us: cost.us };
  });
  return { costs, best: costs.reduce((a, b) => (b.us < a.us ? b : a)) };
}

/**
 * The split count {@link chooseSplits} picks by default (the lowest predicted time) and its cost
 * estimate, without the explain lines: what ranking many candidates needs. Throws as chooseSplits does.
 */
export function cheapestSplit(spec: Spec, problem: Problem, coefficients: CostCoefficients = defaultCoefficients(spec.target)): { splits: number; cost: CostEstimate } {
  const { best } = cheapest(spec, problem, feasibleSplits(spec, problem), coefficients);
  return { splits: best.o.splits, cost: best.cost };
}
