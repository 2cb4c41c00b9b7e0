/**
 * Split-count planner for the split_c variant. The split count is a runtime kernarg, so the
 * choice is per launch: enough channel slices to give the machine at least two waves of resident
 * workgroups, and no more, because every extra slice adds N*Ho*Wo*K fp32 of workspace traffic.
 */
import { launchGrid } from './grid.js';
import { PlanError } from './plan-error.js';
import { problemGeometry, type Problem } from './problem.js';
import { residency, type Residency } from './residency.js';
import type { Spec } from './spec.js';
import { TARGETS } from './targets.js';
import { validate, WORKSPACE_ELEMENT_BYTES } from './validate.js';

/** Waves of resident workgroups the planner aims for. */
export const TARGET_WAVES = 2;

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
 * Split counts that pass validation for `spec` over `problem`: s divides C, (C/s) % ck == 0, the
 * workspace fits the buffer range and the grid stays below 2^31.
 */
export function splitOptions(spec: Spec, problem: Problem): SplitOption[] {
  if (spec.variant !== 'split_c') throw new PlanError(`split counts apply to split_c specs, not ${spec.variant}`);
  const base = validate(spec, problem, { splits: 1 });
  if (!base.ok) throw new PlanError(`spec cannot run this problem: ${base.reason}`);
  const g = problemGeometry(problem);
  const slots = residency(spec).slots;
  const options: SplitOption[] = [];
  for (let s = 1; s * spec.ck <= problem.C; s++) {
    if (problem.C % (s * spec.ck) !== 0) continue;
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
 * target; when none does, the largest feasible one (the most fill available). Throws a
 * {@link PlanError} when the spec cannot run the problem at all.
 */
export function chooseSplits(spec: Spec, problem: Problem, minWaves = TARGET_WAVES): SplitChoice {
  const options = splitOptions(spec, problem);
  const res = residency(spec);
  const t = TARGETS[spec.target];
  const first = options[0];
  if (!first) throw new PlanError(`no split count is feasible for C ${problem.C}, ck ${spec.ck}`);
  const need = minWaves * res.slots;
  const reaching = options.find((o) => o.workgroups >= need);
  const pick = reaching ?? (options[options.length - 1] as SplitOption);
  const explain = [
    `residency: ${res.perUnit} workgroup(s) per ${t.vendor === 'amd' ? 'CU' : 'SM'} (limited by ${res.limitedBy}; ` +
      `threads ${res.limits.threads}, shared ${res.limits.shared}, registers ${res.limits.registers}` +
      `${res.limits.blocks === null ? '' : `, blocks ${res.limits.blocks}`}) x ${t.computeUnits} = ${res.slots} slots; ` +
      `${minWaves} waves need ${need} workgroups`,
    `unsplit grid: ${first.workgroups} workgroups`,
    `feasible splits (C ${problem.C} = splits x k x ck ${spec.ck}, workspace <= 0x7F000000): ${options.map((o) => o.splits).join(', ')}`,
    reaching
      ? `chose splits ${pick.splits}: the smallest reaching ${minWaves} waves (${pick.workgroups} workgroups, ${pick.waves.toFixed(2)} waves), ` +
        `${pick.channelsPerSplit} channels per split, workspace ${pick.workspaceBytes} bytes`
      : `chose splits ${pick.splits}: no feasible count reaches ${minWaves} waves; the largest gives ${pick.workgroups} workgroups ` +
        `(${pick.waves.toFixed(2)} waves), ${pick.channelsPerSplit} channels per split, workspace ${pick.workspaceBytes} bytes`,
  ];
  return { ...pick, residency: res, options, explain };
}
