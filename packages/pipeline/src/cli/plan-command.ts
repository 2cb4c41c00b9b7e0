import { problemJson } from '../api/kernel-source.js';
import type { CacheEntry, KernelCache } from '../cache/cache.js';
import { RecordIntegrityError, RecordStore } from '../cache/records.js';
import { TARGET_NAMES } from '@rocke/ir';
import type { TargetName } from '../compile/llvm-toolchain.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, PROBLEM_USAGE, problemSetFromValues, type NamedProblem } from './problem-input.js';
import { formatBytes, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson, targetsFrom } from './args.js';
import { cliOp } from './wiring.js';

export const PLAN_USAGE = `rocke plan (<problem> | --suite FILE | --miopen-file FILE) [--target gfx950|gfx942|sm_90|all] [--variant dense|split_c|grouped|depthwise|pointwise] [--kernel NAME] [--explain] [--json]
  Lists the valid candidates for the problem and the launch plan of the chosen one (no GPU needed).
  Chosen (nothing is timed): --kernel NAME if given; else the tuning record of the problem on the
  target in the cache's records/ (rocke tune); else the ranker, a cost model fitted on H200 bench
  rows, over the kernels compiled in the cache (every valid candidate when none is). explain says
  which and why; --json carries "chosenBy": "record" | "ranker" ("kernel" for --kernel) and, for the
  ranker, "ranking": every candidate in predicted order with its predicted time and the cost terms
  behind it (--explain prints that list). With a
  problem set or --target all: one row per shape and target (chosen kernel and chosenBy, or the
  decisive reason when none is valid). Exit 2 when a shape has no valid candidate or cannot be planned.
  ${PROBLEM_USAGE}
  ${PROBLEM_SET_USAGE}`;

/** The result of {@link planProblem}: what `rocke plan --json` prints (the family's plan report). */
export type PlanReport = Exclude<ReturnType<typeof cliOp.planReport>, { usage: string }>;

/** A variant the family weighs. */
type Variant = PlanReport['variant'];

/** Options of {@link planProblem}. */
export interface PlanOptions {
  variant?: Variant;
  kernel?: string;
  cache?: KernelCache;
  /** The cache's entries, when the caller plans many problems against one listing. */
  cacheEntries?: readonly CacheEntry[];
  /** Leave the ranker's order and the rejection tally out of the report (problem sets print one row per shape, not every candidate's line). */
  noRanking?: boolean;
  /** Candidate grids shared across the problems of a set ({@link cliOp}.planGrids). */
  grids?: ReturnType<typeof cliOp.planGrids>;
}

/** Kernels of the cache for `target` among `valid`: compiled (blob intact) and pruned (name → reason). */
function cacheState(options: PlanOptions, target: string, valid: ReadonlySet<string>): { cached: Set<string>; pruned: Record<string, string> } {
  const cached = new Set<string>();
  const pruned: Record<string, string> = {};
  if (!options.cache) return { cached, pruned };
  for (const e of options.cacheEntries ?? options.cache.listEntries().entries) {
    if (e.identity.family !== cliOp.family || e.identity.target !== target || !valid.has(e.kernelName)) continue;
    if (e.pruned) pruned[e.kernelName] = e.pruned.reason;
    else if (options.cache.checkBlob(e.code).ok) cached.add(e.kernelName);
  }
  return { cached, pruned };
}

/** The problem's tuning record on `target` in the cache's records, if one is there and intact. */
function recordOf(cache: KernelCache, target: TargetName, problem: NamedProblem['problem']) {
  let record;
  try {
    record = new RecordStore(cache.root).lookup(cliOp.family, target, problemJson(problem));
  } catch (err) {
    if (!(err instanceof RecordIntegrityError)) throw err;
  }
  return record ? { spec: record.choice.spec, launch: record.choice.launch, timeMs: record.timeMs, device: record.device.name, date: record.date } : undefined;
}

/**
 * Candidates and the chosen plan for one problem on one target: --kernel if given, else the
 * family's chooser — the tuning record for (target, problem) in the cache's records if it still
 * validates, else the ranker over the kernels compiled in the cache. Nothing is timed.
 */
export function planProblem(problem: NamedProblem['problem'], target: TargetName, options: PlanOptions = {}): PlanReport {
  const cache = options.cache;
  const r = cliOp.planReport(problem, target, {
    ...(options.variant ? { variant: options.variant } : {}),
    ...(options.kernel !== undefined ? { kernel: options.kernel } : {}),
    ...(options.noRanking ? { noRanking: true } : {}),
    ...(options.grids ? { grids: options.grids } : {}),
    cache: (valid) => cacheState(options, target, valid),
    ...(cache ? { record: () => recordOf(cache, target, problem) } : {}),
  });
  if ('usage' in r) throw new UsageError(r.usage);
  return r;
}

/** One row of a multi-problem plan (`--suite`, `--miopen-file`, `--target all`). */
export interface PlanRow {
  name: string;
  label: string;
  target: TargetName;
  variant: Variant;
  valid: number;
  chosen: string | null;
  /** How the kernel was chosen (null when none was). */
  chosenBy: 'record' | 'ranker' | 'kernel' | null;
  splits: number | null;
  explain: readonly string[];
  /** Why nothing was chosen (the decisive reason when no candidate is valid); null when one was. */
  reason: string | null;
}

/** `rocke plan`. */
export function planCommand(argv: readonly string[], io: CliIo): number {
  const options = { ...COMMON_OPTIONS, ...PROBLEM_OPTIONS, ...PROBLEM_SET_OPTIONS, target: { type: 'string' }, variant: { type: 'string' }, kernel: { type: 'string' }, explain: { type: 'boolean' } } as const;
  const { values } = parse('plan', () => parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${PLAN_USAGE}\n`);
    return 0;
  }
  const input = problemSetFromValues(values, io);
  if (!input) throw new UsageError('plan needs a problem (--n --c --h --w --k ..., or --miopen LINE), a --suite or a --miopen-file');
  const targets: TargetName[] = values.target === 'all' ? [...TARGET_NAMES] : (targetsFrom(values.target) ?? ['gfx950']);
  if (values.variant !== undefined && !(cliOp.variants as readonly string[]).includes(values.variant)) {
    throw new UsageError(`unknown variant '${values.variant}' (known: ${cliOp.variants.join(', ')})`);
  }
  const cache = cacheFrom(values, io);
  const planOptions: PlanOptions = {
    cache,
    ...(values.variant !== undefined ? { variant: values.variant as Variant } : {}),
    ...(values.kernel !== undefined ? { kernel: values.kernel } : {}),
  };
  const only = input.problems.length === 1 && targets.length === 1 && values.suite === undefined && values['miopen-file'] === undefined;
  if (only) return planOne(io, planProblem(input.problems[0]!.problem, targets[0]!, planOptions), values.json === true, values.explain === true);
  const cacheEntries = cache.listEntries().entries;
  const grids = cliOp.planGrids();
  const rows: PlanRow[] = [];
  for (const { name, problem } of input.problems) {
    for (const target of targets) {
      const r = planProblem(problem, target, { ...planOptions, cacheEntries, noRanking: true, grids });
      const c = r.chosen;
      rows.push({ name, label: r.label, target, variant: r.variant, valid: r.candidates.valid, chosen: c?.kernelName ?? null, chosenBy: c?.chosenBy ?? null, splits: c?.plan.splits ?? null, explain: c?.explain ?? [], reason: r.note });
    }
  }
  if (values.json) printJson(io, { rows, note: input.note });
  else {
    if (input.note) io.stdout(`${input.note}\n`);
    io.stdout(
      formatTable(
        ['shape', 'target', 'variant', 'valid', 'chosen by', 'chosen / reason'],
        rows.map((r) => [r.name, r.target, r.variant, r.valid, r.chosenBy ?? '-', r.chosen ? `${r.chosen}${r.splits ? ` splits ${r.splits}` : ''}` : (r.reason ?? '')]),
        ['left', 'left', 'left', 'right', 'left', 'left'],
      ),
    );
    io.stdout(`${rows.filter((r) => r.chosen).length} of ${rows.length} planned (${rows.filter((r) => r.chosenBy === 'record').length} from tuning records)\n`);
  }
  const failed = rows.filter((r) => r.chosen === null);
  if (failed.length === 0) return 0;
  io.stderr(`rocke plan: ${failed.length} of ${rows.length} shape/target rows have no plan; first: ${failed[0]!.name} on ${failed[0]!.target}: ${failed[0]!.reason}\n`);
  return 2;
}

/** The detailed report of one problem on one target; exit 2 when nothing could be planned. */
function planOne(io: CliIo, report: PlanReport, json: boolean, explain: boolean): number {
  if (json) {
    printJson(io, report);
    if (!report.chosen) throw new UsageError(report.note ?? 'no plan');
    return 0;
  }
  const c = report.candidates;
  const target = report.target;
  io.stdout(`${report.label} on ${target}, variant${report.variants.length > 1 ? 's' : ''} ${report.variants.join(', ')}\n`);
  io.stdout(`candidates: ${c.valid} valid, ${c.rejected} rejected, ${c.duplicates} duplicates (of ${c.raw} in the grid)\n`);
  io.stdout(`cache: ${report.cachedKernels.length} of the valid kernels compiled, ${Object.keys(report.prunedKernels).length} pruned\n`);
  if (report.rejectedReasons.length) {
    io.stdout(formatTable(['rejected', 'reason'], report.rejectedReasons.slice(0, 8).map((r) => [r.count, r.reason]), ['right', 'left']));
  }
  if (!report.chosen) throw new UsageError(report.note ?? 'no plan');
  const p = report.chosen.plan;
  io.stdout(`\nchosen by ${report.chosen.chosenBy}: ${report.chosen.kernelName}\n`);
  for (const line of report.chosen.explain) io.stdout(`  ${line}\n`);
  io.stdout(`workspace ${formatBytes(p.workspaceBytes)}${p.splits !== undefined ? `, splits ${p.splits}` : ''}${cliOp.specDetail(report.chosen.spec)}\n`);
  io.stdout(
    formatTable(
      ['launch', 'images', 'grid', 'block', 'LDS', 'splits', 'workspace'],
      p.launches.map((l, i) => [i, `${l.images.start}..${l.images.start + l.images.count - 1}`, l.grid.join('x'), l.block.join('x'), formatBytes(l.sharedBytes), l.splits, formatBytes(l.workspaceBytes)]),
    ),
  );
  for (const line of [...report.chosen.mergeExplain, ...p.explain]) io.stdout(`  ${line}\n`);
  if (explain && report.ranking.length) {
    io.stdout(`\nranking (the cost model's predicted order, ${report.ranking.length} candidates):\n`);
    for (const r of report.ranking) io.stdout(`  #${r.position} ${r.kernelName}${r.splits !== undefined ? ` splits ${r.splits}` : ''}: ${r.reason}\n`);
  }
  return 0;
}
