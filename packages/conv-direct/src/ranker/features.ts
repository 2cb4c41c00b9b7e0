/**
 * What the ranker knows about one (problem, spec, split count): host-side facts of the launch, as
 * logarithms where the effect on time is multiplicative. Nothing here is measured; the fit decides
 * how much each fact is worth.
 */
import { launchGrid } from '../grid.js';
import { mergeRow } from '../merge-chooser.js';
import { problemGeometry, type Problem } from '../problem.js';
import { fragmentLoadsPerMma, spatialUtilization } from '../ranking.js';
import { residency } from '../residency.js';
import { registerEstimate } from '../spill.js';
import { specGeometry, wgmmaLds, type Spec } from '../spec.js';
import { isWarpgroupAtom, TARGETS } from '../targets.js';
import { WORKSPACE_ELEMENT_BYTES } from '../validate.js';

/** Feature names, in vector order. */
export const RANKER_FEATURES = [
  /** -log2(useful outputs / outputs computed): partial spatial and channel tiles, the block diagonal's zeros. */
  'tileWaste',
  /** log2(rounds of resident workgroups / exact rounds): the last round's idle slots. */
  'roundLoss',
  /** log2(SMs / workgroups) when the grid does not cover the machine once, else 0. */
  'underfill',
  /** log2(workgroups resident per CU / SM): latency hiding. */
  'residentPerUnit',
  /** log2(LDS bytes per workgroup). */
  'ldsBytes',
  /** log2(threads per workgroup). */
  'threads',
  /** log2(registers per lane, the spill heuristic's live estimate). */
  'registers',
  /** log2(input bytes staged over all workgroups / useful FLOPs). */
  'xStagedPerFlop',
  /** log2(weight bytes staged over all workgroups / useful FLOPs). */
  'wStagedPerFlop',
  /** log2(1 + fp32 workspace bytes written and read / output bytes): split_c's extra traffic. */
  'workspaceTraffic',
  /** log2(channel splits). */
  'splits',
  /** 1 for split_c: the reduce launch behind the conv. */
  'reduceLaunch',
  /** log2(groups merged into one MMA problem). */
  'groupMerge',
  /** log2(channel chunks each workgroup loops over). */
  'chunks',
  /** log2(channels per chunk). */
  'ck',
  /** log2(images per tile). */
  'tileN',
  /** Operand fragments a wave reads from LDS per MMA. */
  'fragmentsPerMma',
  /** 1 for the warpgroup MMA atom. */
  'warpgroupAtom',
  /** 1 for a warpgroup MMA reading 128B-swizzled rows. */
  'swizzledRows',
  /** 1 for two LDS stages. */
  'doubleBuffer',
] as const;

export type RankerFeature = (typeof RANKER_FEATURES)[number];

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** Useful outputs / outputs computed (grouped: the merge model's channel terms and diagonal share). */
function tileUtilization(spec: Spec, problem: Problem): number {
  const spatial = spatialUtilization(spec, problem);
  if (spec.variant === 'grouped') {
    const row = mergeRow(spec, problem, spec.group_merge);
    return spatial * row.kUtilisation * row.nUtilisation * row.diagonalShare;
  }
  return spatial * (problem.K / roundUp(problem.K, spec.tile_k));
}

/**
 * The feature vector of `spec` on `problem` with `splits` channel slices (1 unless split_c), in
 * {@link RANKER_FEATURES} order. Call it on specs that validate for the problem.
 */
export function rankerFeatures(spec: Spec, problem: Problem, splits = 1): number[] {
  const g = problemGeometry(problem);
  const sg = specGeometry(spec);
  const grid = launchGrid(spec, problem, splits);
  const res = residency(spec);
  const units = TARGETS[spec.target].computeUnits;
  const wg = grid.workgroups;
  const exactRounds = wg / res.slots;
  // Channels one workgroup reduces: its slice of the group (merged groups: gm of them).
  const reduced = ((spec.variant === 'grouped' ? spec.group_merge : 1) * g.cpg) / splits;
  const chunks = Math.ceil(reduced / spec.ck);
  const xStaged = wg * sg.ldsRows * sg.ldsInW * chunks * spec.ck * 2;
  const wStaged = wg * spec.tile_k * spec.R * spec.S * chunks * spec.ck * 2;
  const wsBytes = spec.variant === 'split_c' ? 2 * splits * problem.N * g.Ho * g.Wo * problem.K * WORKSPACE_ELEMENT_BYTES : 0;
  const values: Record<RankerFeature, number> = {
    tileWaste: -Math.log2(tileUtilization(spec, problem)),
    roundLoss: Math.log2(Math.ceil(exactRounds) / exactRounds),
    underfill: Math.max(0, Math.log2(units / wg)),
    residentPerUnit: Math.log2(res.perUnit),
    ldsBytes: Math.log2(sg.ldsBytes),
    threads: Math.log2(sg.threads),
    registers: Math.log2(Math.max(1, registerEstimate(spec).live)),
    xStagedPerFlop: Math.log2(xStaged / g.flops),
    wStagedPerFlop: Math.log2(wStaged / g.flops),
    workspaceTraffic: Math.log2(1 + wsBytes / g.yBytes),
    splits: Math.log2(splits),
    reduceLaunch: spec.variant === 'split_c' ? 1 : 0,
    groupMerge: Math.log2(spec.group_merge),
    chunks: Math.log2(chunks),
    ck: Math.log2(spec.ck),
    tileN: Math.log2(spec.tile_n),
    fragmentsPerMma: fragmentLoadsPerMma(spec),
    warpgroupAtom: isWarpgroupAtom(spec.atom) ? 1 : 0,
    swizzledRows: isWarpgroupAtom(spec.atom) && wgmmaLds(spec).swizzle ? 1 : 0,
    doubleBuffer: spec.double_buffer ? 1 : 0,
  };
  return RANKER_FEATURES.map((f) => values[f]);
}
