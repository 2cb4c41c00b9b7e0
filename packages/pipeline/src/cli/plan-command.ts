import {
  candidateCoverage,
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
import type { CacheEntry, KernelCache } from '../cache/cache.js';
import { TARGETS, type TargetName } from '../compile/llvm-toolchain.js';
import type { CliIo } from '../io.js';
import { CONV_DIRECT_FAMILY } from '../compile/families/conv-direct.js';
import { UsageError } from '../io.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, PROBLEM_USAGE, problemSetFromValues } from './problem-input.js';
import { formatBytes, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson, targetsFrom } from './args.js';

export const PLAN_USAGE = `rocke plan (<problem> | --suite FILE | --miopen-file FILE) [--target gfx950|gfx942|sm_90|all] [--variant dense|split_c|grouped|depthwise] [--kernel NAME] [--json]
  Lists the valid candidates for the problem and the launch plan of the chosen one (no GPU needed).
  Chosen: --kernel NAME if given, else the first valid candidate compiled in the cache and not
  pruned, else the first valid candidate (none is timed: rocke bench ranks by measured time);
  grouped specs get the merge degree of conv-direct's merge planner. With a problem set or
  --target all: one row per shape and target (valid candidates, chosen kernel, or the decisive
  reason when none is valid). Exit 2 when a shape has no valid candidate or cannot be planned.
  ${PROBLEM_USAGE}
  ${PROBLEM_SET_USAGE}`;

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
  /** Why nothing was chosen: no valid candidate (conv-direct's decisive reason), or the plan failed. */
  note: string | null;
}

/** Options of {@link planProblem}. */
export interface PlanOptions {
  variant?: Variant;
  kernel?: string;
  cache?: KernelCache;
  /** The cache's entries, when the caller plans many problems against one listing. */
  cacheEntries?: readonly CacheEntry[];
}

/** Candidates and the chosen plan for one problem on one target. */
export function planProblem(problem: Problem, target: TargetName, options: PlanOptions = {}): PlanReport {
  const variant: Variant = options.variant ?? defaultVariant(problem);
  const set = problemCandidates(problem, target, { variant });
  const reasons = new Map<string, number>();
  for (const r of set.rejected) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
  const validKernels = set.valid.map((s) => kernelName(s));
  const cached = new Set<string>();
  const prunedKernels: Record<string, string> = {};
  if (options.cache) {
    const valid = new Set(validKernels);
    for (const e of options.cacheEntries ?? options.cache.listEntries().entries) {
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
  if (!spec) return { ...base, chosen: null, note: candidateCoverage(set, target, variant).reason ?? `every valid ${variant} candidate on ${target} was pruned` };
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

/** One row of a multi-problem plan (`--suite`, `--miopen-file`, `--target all`). */
export interface PlanRow {
  name: string;
  label: string;
  target: TargetName;
  variant: Variant;
  valid: number;
  chosen: string | null;
  /** Why nothing was chosen (the decisive reason when no candidate is valid); null when one was. */
  reason: string | null;
}

/** `rocke plan`. */
export function planCommand(argv: readonly string[], io: CliIo): number {
  const options = { ...COMMON_OPTIONS, ...PROBLEM_OPTIONS, ...PROBLEM_SET_OPTIONS, target: { type: 'string' }, variant: { type: 'string' }, kernel: { type: 'string' } } as const;
  const { values } = parse('plan', () => parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${PLAN_USAGE}\n`);
    return 0;
  }
  const input = problemSetFromValues(values, io);
  if (!input) throw new UsageError('plan needs a problem (--n --c --h --w --k ..., or --miopen LINE), a --suite or a --miopen-file');
  const targets: TargetName[] = values.target === 'all' ? [...TARGETS] : (targetsFrom(values.target) ?? ['gfx950']);
  if (values.variant !== undefined && !(VARIANTS as readonly string[]).includes(values.variant)) {
    throw new UsageError(`unknown variant '${values.variant}' (known: ${VARIANTS.join(', ')})`);
  }
  const cache = cacheFrom(values, io);
  const planOptions: PlanOptions = {
    cache,
    ...(values.variant !== undefined ? { variant: values.variant as Variant } : {}),
    ...(values.kernel !== undefined ? { kernel: values.kernel } : {}),
  };
  const only = input.problems.length === 1 && targets.length === 1 && values.suite === undefined && values['miopen-file'] === undefined;
  if (only) return planOne(io, planProblem(input.problems[0]!.problem, targets[0]!, planOptions), values.json === true);
  const cacheEntries = cache.listEntries().entries;
  const rows: PlanRow[] = [];
  for (const { name, problem } of input.problems) {
    for (const target of targets) {
      const r = planProblem(problem, target, { ...planOptions, cacheEntries });
      rows.push({ name, label: r.label, target, variant: r.variant, valid: r.candidates.valid, chosen: r.chosen?.kernelName ?? null, reason: r.note });
    }
  }
  if (values.json) printJson(io, { rows, note: input.note });
  else {
    if (input.note) io.stdout(`${input.note}\n`);
    io.stdout(formatTable(['shape', 'target', 'variant', 'valid', 'chosen / reason'], rows.map((r) => [r.name, r.target, r.variant, r.valid, r.chosen ?? r.reason ?? '']), ['left', 'left', 'left', 'right', 'left']));
  }
  const failed = rows.filter((r) => r.chosen === null);
  if (failed.length === 0) return 0;
  io.stderr(`rocke plan: ${failed.length} of ${rows.length} shape/target rows have no plan; first: ${failed[0]!.name} on ${failed[0]!.target}: ${failed[0]!.reason}\n`);
  return 2;
}

/** The detailed report of one problem on one target; exit 2 when nothing could be planned. */
function planOne(io: CliIo, report: PlanReport, json: boolean): number {
  if (json) {
    printJson(io, report);
    if (!report.chosen) throw new UsageError(report.note ?? 'no plan');
    return 0;
  }
  const c = report.candidates;
  const target = report.target;
  io.stdout(`${report.label} on ${target}, variant ${report.variant}\n`);
  io.stdout(`candidates: ${c.valid} valid, ${c.rejected} rejected, ${c.duplicates} duplicates (of ${c.raw} in the grid)\n`);
  io.stdout(`cache: ${report.cachedKernels.length} of the valid kernels compiled, ${Object.keys(report.prunedKernels).length} pruned\n`);
  if (report.rejectedReasons.length) {
    io.stdout(formatTable(['rejected', 'reason'], report.rejectedReasons.slice(0, 8).map((r) => [r.count, r.reason]), ['right', 'left']));
  }
  if (!report.chosen) throw new UsageError(report.note ?? 'no plan');
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
