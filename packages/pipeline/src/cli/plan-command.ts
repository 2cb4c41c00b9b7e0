import {
  chooseGroupMerge,
  defaultVariant,
  kernelName,
  plan,
  problemCandidates,
  problemLabel,
  VARIANTS,
  type LaunchPlan,
  type Problem,
  type Spec,
  type Variant,
} from '@rocke/conv-direct';
import type { KernelCache } from '../cache/cache.js';
import type { CliIo } from '../io.js';
import { CONV_DIRECT_FAMILY } from '../compile/families/conv-direct.js';
import { UsageError } from '../io.js';
import { PROBLEM_OPTIONS, PROBLEM_USAGE, problemFromValues } from './problem-input.js';
import { formatBytes, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson, targetsFrom } from './args.js';

export const PLAN_USAGE = `rocke plan <problem> [--target gfx950|gfx942|sm_90] [--variant dense|split_c|grouped|depthwise] [--kernel NAME] [--json]
  Lists the valid candidates for the problem and the launch plan of the chosen one (no GPU needed).
  Chosen: --kernel NAME if given, else the first valid candidate compiled in the cache and not
  pruned, else the first valid candidate (none is timed: rocke bench ranks by measured time);
  grouped specs get the merge degree of conv-direct's merge planner.
  ${PROBLEM_USAGE}`;

/** The result of {@link planProblem}: what `rocke plan --json` prints. */
export interface PlanReport {
  problem: Problem;
  label: string;
  target: string;
  variant: Variant;
  candidates: { raw: number; valid: number; rejected: number; duplicates: number };
  validKernels: string[];
  /** Valid kernels with an unpruned cache entry for this target, and those compile-all pruned (name → reason). */
  cachedKernels: string[];
  prunedKernels: Record<string, string>;
  rejectedReasons: { reason: string; count: number }[];
  chosen: { kernelName: string; rule: string; spec: Spec; mergeExplain: readonly string[]; plan: LaunchPlan } | null;
  /** Why nothing was chosen (no valid candidate, or the plan failed). */
  note: string | null;
}

/** Candidates and the chosen plan for one problem on one target. */
export function planProblem(problem: Problem, target: 'gfx950' | 'gfx942' | 'sm_90', options: { variant?: Variant; kernel?: string; cache?: KernelCache } = {}): PlanReport {
  const variant: Variant = options.variant ?? defaultVariant(problem);
  const set = problemCandidates(problem, target, { variant });
  const reasons = new Map<string, number>();
  for (const r of set.rejected) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
  const validKernels = set.valid.map((s) => kernelName(s));
  const cached = new Set<string>();
  const prunedKernels: Record<string, string> = {};
  if (options.cache) {
    const valid = new Set(validKernels);
    for (const e of options.cache.listEntries().entries) {
      if (e.identity.family !== CONV_DIRECT_FAMILY || e.identity.target !== target || !valid.has(e.kernelName)) continue;
      if (e.pruned) prunedKernels[e.kernelName] = e.pruned.reason;
      else if (options.cache.checkBlob(e.code).ok) cached.add(e.kernelName);
    }
  }
  const cachedKernels = validKernels.filter((k) => cached.has(k));
  const base = {
    problem,
    label: problemLabel(problem),
    target,
    variant,
    candidates: { raw: set.raw, valid: set.valid.length, rejected: set.rejected.length, duplicates: set.duplicates },
    validKernels,
    cachedKernels,
    prunedKernels,
    rejectedReasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
  };
  let spec: Spec | undefined;
  let rule: string;
  if (options.kernel !== undefined) {
    spec = set.valid.find((s) => kernelName(s) === options.kernel);
    if (!spec) throw new UsageError(`kernel ${options.kernel} is not a valid ${variant} candidate for ${base.label} on ${target}`);
    rule = '--kernel';
  } else if (cachedKernels.length) {
    spec = set.valid.find((s) => kernelName(s) === cachedKernels[0]);
    rule = 'first valid candidate compiled in the cache (grid order); not timed, rocke bench ranks by measured time';
  } else {
    spec = set.valid.find((s) => !(kernelName(s) in prunedKernels));
    rule = 'first valid candidate in grid order (none compiled in the cache); not timed, rocke bench ranks by measured time';
  }
  if (!spec) return { ...base, chosen: null, note: `no valid ${variant} candidate for this problem on ${target}` };
  let mergeExplain: readonly string[] = [];
  if (spec.variant === 'grouped') {
    const merge = chooseGroupMerge(spec, problem);
    spec = merge.spec;
    mergeExplain = merge.explain;
  }
  try {
    return { ...base, chosen: { kernelName: kernelName(spec), rule, spec, mergeExplain, plan: plan(spec, problem, target) }, note: null };
  } catch (err) {
    return { ...base, chosen: null, note: `planning ${kernelName(spec)} failed: ${(err as Error).message}` };
  }
}

/** `rocke plan`. */
export function planCommand(argv: readonly string[], io: CliIo): number {
  const { values } = parse('plan', () => parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, ...PROBLEM_OPTIONS, target: { type: 'string' }, variant: { type: 'string' }, kernel: { type: 'string' } }, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${PLAN_USAGE}\n`);
    return 0;
  }
  const problem = problemFromValues(values);
  if (!problem) throw new UsageError(`plan needs a problem\n${PROBLEM_USAGE}`);
  const target = targetsFrom(values.target)?.[0] ?? 'gfx950';
  if (values.variant !== undefined && !(VARIANTS as readonly string[]).includes(values.variant)) {
    throw new UsageError(`unknown variant '${values.variant}' (known: ${VARIANTS.join(', ')})`);
  }
  const report = planProblem(problem, target, {
    cache: cacheFrom(values, io),
    ...(values.variant !== undefined ? { variant: values.variant as Variant } : {}),
    ...(values.kernel !== undefined ? { kernel: values.kernel } : {}),
  });
  if (values.json) {
    printJson(io, report);
    return report.chosen ? 0 : 1;
  }
  const c = report.candidates;
  io.stdout(`${report.label} on ${target}, variant ${report.variant}\n`);
  io.stdout(`candidates: ${c.valid} valid, ${c.rejected} rejected, ${c.duplicates} duplicates (of ${c.raw} in the grid)\n`);
  io.stdout(`cache: ${report.cachedKernels.length} of the valid kernels compiled, ${Object.keys(report.prunedKernels).length} pruned\n`);
  if (report.rejectedReasons.length) {
    io.stdout(formatTable(['rejected', 'reason'], report.rejectedReasons.slice(0, 8).map((r) => [r.count, r.reason]), ['right', 'left']));
  }
  if (!report.chosen) {
    io.stderr(`rocke plan: ${report.note}\n`);
    return 1;
  }
  const p = report.chosen.plan;
  io.stdout(`\nchosen: ${report.chosen.kernelName} (${report.chosen.rule})\n`);
  io.stdout(`workspace ${formatBytes(p.workspaceBytes)}${p.splits !== undefined ? `, splits ${p.splits}` : ''}${report.chosen.spec.variant === 'grouped' ? `, group_merge ${report.chosen.spec.group_merge}` : ''}\n`);
  io.stdout(
    formatTable(
      ['launch', 'images', 'grid', 'block', 'LDS', 'splits', 'workspace'],
      p.launches.map((l, i) => [i, `${l.images.start}..${l.images.start + l.images.count - 1}`, l.grid.join('x'), l.block.join('x'), formatBytes(l.sharedBytes), l.splits, formatBytes(l.workspaceBytes)]),
    ),
  );
  for (const line of [...report.chosen.mergeExplain, ...p.explain]) io.stdout(`  ${line}\n`);
  return 0;
}
