/**
 * Split-count planner for the split_c variant. The split count is a runtime kernarg, so the
 * choice is per launch: enough channel slices to give the machine a target number of waves of
 * resident workgroups, and no more, because every extra slice adds N*Ho*Wo*K fp32 of workspace
 * traffic, a partial-sum epilogue per workgroup and a shorter channel loop to hide latency in.
 */
import { launchGrid } from './grid.js';
import { PlanError } from './plan-error.js';
import { problemGeometry, type Problem } from './problem.js';
import { residency, type Residency } from './residency.js';
import type { Spec } from './spec.js';
import { TARGETS, type TargetName } from './targets.js';
import { validate, WORKSPACE_ELEMENT_BYTES } from './validate.js';

/** Waves of resident workgroups the planners aim for where nothing was measured (the issue's rule). */
export const TARGET_WAVES = 2;

/** A split rule fitted to one target's measurements. */
export interface SplitRule {
  /** Waves of resident slots to reach. */
  readonly waves: number;
  /** Fewest input channels one split may keep (more slices than that are not taken). */
  readonly minChannelsPerSplit: number;
}

/**
 * Split rules measured per target. sm_90: the H200 split sweeps of the public suite's small-map and
 * d_14 shapes (85 split_c spec x shape pairs, 3-4 split counts each) were fastest at about half a
 * wave of resident slots, and rarely gained from slices under 32 channels: extra slices add
 * workspace traffic and one-chunk channel loops with nothing to overlap. Against the fastest count
 * timed, this rule costs a geometric mean of 1.04x; the two-wave rule cost 1.36x.
 */
export const MEASURED_SPLIT_RULES: Readonly<Partial<Record<TargetName, SplitRule>>> = { sm_90: { waves: 0.5, minChannelsPerSplit: 32 } };

/** The wave target {@link chooseSplits} uses when the caller gives none. */
export function defaultSplitWaves(target: TargetName): number {
  return MEASURED_SPLIT_RULES[target]?.waves ?? TARGET_WAVES;
}

/** One feasible split count. */
export interface SplitOption {
  readonly splits: number;
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
 * Split counts that pass validation for `spec` over `problem`: s divides C, C/s is a multiple of ck
 * (of c_tail when the spec has a channel tail), the workspace fits the buffer range and the grid stays
 * below 2^31.
 */
export function splitOptions(spec: Spec, problem: Problem): SplitOption[] {
  if (spec.variant !== 'split_c') throw new PlanError(`split counts apply to split_c specs, not ${spec.variant}`);
  const base = validate(spec, problem, { splits: 1 });
  if (!base.ok) throw new PlanError(`spec cannot run this problem: ${base.reason}`);
  const g = problemGeometry(problem);
  const slots = residency(spec).slots;
  const options: SplitOption[] = [];
  // A split's channels come in whole channel runs: ck chunks, or c_tail runs when the spec has a tail.
  const unit = spec.c_tail === 0 ? spec.ck : spec.c_tail;
  for (let s = 1; s * unit <= problem.C; s++) {
    if (problem.C % (s * unit) !== 0) continue;
    if (!validate(spec, problem, { splits: s }).ok) continue;
    const workgroups = launchGrid(spec, problem, s).workgroups;
    options.push({
      splits: s,
      channelsPerSplit: problem.C / s,
      workgroups,
      waves: workgroups / slots,
      workspaceBytes: WORKSPACE_ELEMENT_BYTES * s * problem.N * g.Ho * g.Wo * problem.K,
    });
  }
  return options;
}

/**
 * Picks the smallest split count whose grid reaches `minWaves` waves of resident workgroups on the
 * target (default {@link defaultSplitWaves}); when none does, the largest feasible one (the most
 * fill available). On a target with a {@link MEASURED_SPLIT_RULES} entry, no more slices than keep
 * its channel floor per split. Throws a {@link PlanError} when the spec cannot run the problem at all
 * or `minWaves` is not a positive number.
 */
export function chooseSplits(spec: Spec, problem: Problem, minWaves = defaultSplitWaves(spec.target)): SplitChoice {
  if (!(minWaves > 0) || !Number.isFinite(minWaves)) throw new PlanError(`minWaves must be a positive number, got ${minWaves}`);
  const options = splitOptions(spec, problem);
  const res = residency(spec);
  const t = TARGETS[spec.target];
  const first = options[0];
  if (!first) throw new PlanError(`no split count is feasible for C ${problem.C}, ck ${spec.ck}`);
  const need = Math.ceil(minWaves * res.slots);
  const rule = MEASURED_SPLIT_RULES[spec.target];
  const reaching = options.find((o) => o.workgroups >= need);
  const filled = reaching ?? (options[options.length - 1] as SplitOption);
  // The measured channel floor wins over fill: the most slices that keep minChannelsPerSplit (at least 1 split).
  const floor = rule?.minChannelsPerSplit ?? 0;
  const keeping = options.filter((o) => o.splits <= filled.splits && o.channelsPerSplit >= floor);
  const pick = keeping[keeping.length - 1] ?? first;
  const capped = pick.splits !== filled.splits;
  const explain = [
    `residency: ${res.perUnit} workgroup(s) per ${t.vendor === 'amd' ? 'CU' : 'SM'} (limited by ${res.limitedBy}; ` +
      `threads ${res.limits.threads}, shared ${res.limits.shared}, registers ${res.limits.registers}` +
      `${res.limits.blocks === null ? '' : `, blocks ${res.limits.blocks}`}) x ${t.computeUnits} = ${res.slots} slots; ` +
      `${minWaves} waves need ${need} workgroups` +
      (minWaves === rule?.waves ? ` (${spec.target}'s measured split target)` : ''),
    `unsplit grid: ${first.workgroups} workgroups`,
    `feasible splits (C ${problem.C} = splits x k x ${spec.c_tail === 0 ? `ck ${spec.ck}` : `c_tail ${spec.c_tail}`}, workspace <= 0x7F000000): ${options.map((o) => o.splits).join(', ')}`,
    capped
      ? `chose splits ${pick.splits}: ${filled.splits} would ${reaching ? `reach ${minWaves} waves` : 'give the most fill'} but leave ` +
        `${filled.channelsPerSplit} channels per split, under ${spec.target}'s measured floor of ${floor}; ${pick.splits} gives ` +
        `${pick.workgroups} workgroups (${pick.waves.toFixed(2)} waves), ${pick.channelsPerSplit} channels per split, workspace ${pick.workspaceBytes} bytes`
      : reaching
      ? `chose splits ${pick.splits}: the smallest reaching ${minWaves} waves (${pick.workgroups} workgroups, ${pick.waves.toFixed(2)} waves), ` +
        `${pick.channelsPerSplit} channels per split, workspace ${pick.workspaceBytes} bytes`
      : `chose splits ${pick.splits}: no feasible count reaches ${minWaves} waves; the largest gives ${pick.workgroups} workgroups ` +
        `(${pick.waves.toFixed(2)} waves), ${pick.channelsPerSplit} channels per split, workspace ${pick.workspaceBytes} bytes`,
  ];
  return { ...pick, residency: res, options, explain };
}
