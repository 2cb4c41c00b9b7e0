/**
 * Merge-degree planner for the grouped variant. `group_merge = gm` packs gm adjacent groups into
 * one block-diagonal MMA problem of gm*cpg input and gm*kpg output channels.
 *
 * Cost model (relative time; 1 = only useful MMA work on a full machine). For each feasible gm:
 * - k utilisation  = gm*cpg / roundUp(gm*cpg, atom K): atom K lanes that carry merged channels;
 * - n utilisation  = gm*kpg / roundUp(gm*kpg, tile_k): tile rows inside the merged block;
 * - diagonal share = 1/gm: of the merged block's weights only the diagonal blocks are non-zero,
 *   the rest is multiply-by-zero work;
 * - fill           = workgroups / (ceil(workgroups/slots) * slots): the share of resident slots
 *   busy over the waves the grid needs (a grid below one wave, or a ragged last wave, idles slots);
 * - cost = 1 / (k utilisation x n utilisation x diagonal share x fill).
 * These terms explain a degree; the choice is the cost model's (cost-model.ts, which counts the
 * same padded work and fill plus the bytes staged, LDS reads and loop latency): the lowest
 * predicted time wins; ties go to the smaller degree. Grids under two waves are flagged in the
 * explanation. Infeasible degrees (validation fails) are listed with their reason.
 */
import { launchGrid } from './grid.js';
import { PlanError } from './plan-error.js';
import { checkProblem, problemGeometry, type Problem } from './problem.js';
import { residency } from './residency.js';
import type { Spec } from './spec.js';
import { ATOMS } from './targets.js';
import { groupMergeChoices } from './candidates.js';
import { validate } from './validate.js';
import { TARGET_WAVES } from './split-chooser.js';
import { estimateCost } from './cost-model.js';

/** The cost model's terms for one merge degree. */
export interface MergeRow {
  readonly groupMerge: number;
  /** Null when feasible, else the validation reason. */
  readonly reason: string | null;
  readonly kUtilisation: number;
  readonly nUtilisation: number;
  readonly diagonalShare: number;
  readonly workgroups: number;
  readonly waves: number;
  readonly fill: number;
  /** Relative time; Infinity when infeasible. */
  readonly cost: number;
  /** The cost model's predicted time, microseconds; Infinity when infeasible. */
  readonly predictedUs: number;
}

/** The planner's decision. */
export interface MergeChoice {
  readonly groupMerge: number;
  /** The input spec with the chosen degree. */
  readonly spec: Spec;
  readonly rows: readonly MergeRow[];
  readonly explain: readonly string[];
}

const EPS = 1e-12;

/** Evaluates the cost model for `spec`'s tile at merge degree `gm` over `problem`. */
export function mergeRow(spec: Spec, problem: Problem, gm: number): MergeRow {
  const candidate: Spec = { ...spec, group_merge: gm };
  const v = validate(candidate, problem);
  const g = problemGeometry(problem);
  const atom = ATOMS[spec.atom];
  const mc = gm * g.cpg;
  const mk = gm * g.kpg;
  const kUtilisation = mc / (Math.ceil(mc / atom.k) * atom.k);
  const nUtilisation = mk / (Math.ceil(mk / spec.tile_k) * spec.tile_k);
  const diagonalShare = 1 / gm;
  if (!v.ok) {
    return { groupMerge: gm, reason: v.reason, kUtilisation, nUtilisation, diagonalShare, workgroups: 0, waves: 0, fill: 0, cost: Infinity, predictedUs: Infinity };
  }
  const slots = residency(candidate).slots;
  const workgroups = launchGrid(candidate, problem).workgroups;
  const fill = workgroups / (Math.ceil(workgroups / slots) * slots);
  const cost = 1 / (kUtilisation * nUtilisation * diagonalShare * fill);
  const predictedUs = estimateCost(candidate, problem).us;
  return { groupMerge: gm, reason: null, kUtilisation, nUtilisation, diagonalShare, workgroups, waves: workgroups / slots, fill, cost, predictedUs };
}

/**
 * Picks the merge degree for a grouped spec's tile over `problem` (degrees default to the grid's
 * for the problem's group count, {@link groupMergeChoices}). Throws a {@link PlanError} listing
 * every degree's reason when none is feasible.
 */
export function chooseGroupMerge(spec: Spec, problem: Problem, degrees?: readonly number[]): MergeChoice {
  if (spec.variant !== 'grouped') throw new PlanError(`merge degrees apply to grouped specs, not ${spec.variant}`);
  const problemReason = checkProblem(problem);
  if (problemReason) throw new PlanError(`cannot plan a merge degree: ${problemReason}`);
  const rows = [...new Set(degrees ?? groupMergeChoices(problem.groups))].sort((a, b) => a - b).map((gm) => mergeRow(spec, problem, gm));
  let best: MergeRow | undefined;
  for (const r of rows) {
    if (r.reason !== null) continue;
    if (!best || r.predictedUs < best.predictedUs - EPS) best = r;
  }
  const lines = rows.map((r) =>
    r.reason !== null
      ? `gm ${r.groupMerge}: infeasible (${r.reason})`
      : `gm ${r.groupMerge}: k-util ${r.kUtilisation.toFixed(3)} n-util ${r.nUtilisation.toFixed(3)} diagonal ${r.diagonalShare.toFixed(3)} ` +
        `fill ${r.fill.toFixed(3)} (${r.workgroups} workgroups, ${r.waves.toFixed(2)} waves${r.waves < TARGET_WAVES ? ', under 2 waves' : ''}) cost ${r.cost.toFixed(3)}, predicted ${r.predictedUs.toFixed(2)} us`,
  );
  if (!best) throw new PlanError(`no merge degree fits groups ${problem.groups} with this tile:\n${lines.join('\n')}`);
  return {
    groupMerge: best.groupMerge,
    spec: { ...spec, group_merge: best.groupMerge },
    rows,
    explain: [...lines, `chose group_merge ${best.groupMerge} (lowest predicted time ${best.predictedUs.toFixed(2)} us; ties go to the smaller degree)`],
  };
}

/** One grouped spec scored by the cost model at its own (baked) merge degree. */
export interface RankedGroupedSpec {
  readonly spec: Spec;
  readonly row: MergeRow;
}

/**
 * Scores grouped specs that already carry their merge degree (e.g. the binaries in a cache) with
 * the same cost model and returns the feasible ones, cheapest first; ties go to the smaller
 * degree, then to the order given. Infeasible specs are left out.
 */
export function rankGroupedSpecs(specs: readonly Spec[], problem: Problem): RankedGroupedSpec[] {
  if (checkProblem(problem) !== null) return [];
  return specs
    .filter((spec) => spec.variant === 'grouped')
    .map((spec, index) => ({ spec, row: mergeRow(spec, problem, spec.group_merge), index }))
    .filter((r) => r.row.reason === null)
    .sort((a, b) => a.row.predictedUs - b.row.predictedUs || a.spec.group_merge - b.spec.group_merge || a.index - b.index)
    .map(({ spec, row }) => ({ spec, row }));
}
