import { availableParallelism } from 'node:os';
import { identityId } from '../cache/cache.js';
import type { CliDeps } from './deps.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { compileAll, type CompileAllReport } from '../compile/compile-all.js';
import type { AnyFamily } from '../compile/family.js';
import { compileCapped, type CompileCappedOptions } from '../compile/capped.js';
import type { JsonValue } from '../hash.js';
import { formatKeptKernels, keptKernelRows } from '../compile/kept-kernels.js';
import { TARGET_NAMES } from '@rocke/ir';
import type { TargetName } from '../compile/llvm-toolchain.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, PROBLEM_USAGE, problemSetFromValues, type ProblemSetInput } from './problem-input.js';
import { formatUncovered, uncoveredSelections, type Uncovered } from './uncovered.js';
import { compileProgress } from './progress.js';
import { briefError, formatDuration, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, shardFrom, targetsFrom } from './args.js';
import type { Dtype } from '../planner.js';
import { cliOp } from './wiring.js';

/** One shape's selection on one target: its variants' candidates, back-fill and notes. */
type ShapeSelection = ReturnType<ReturnType<typeof cliOp.problemSet>['selections']>[number];
type Spec = ShapeSelection['backfill'][number]['spec'];

/** The target compile-all builds when `--target` is not given: the project's headline target. */
export const DEFAULT_COMPILE_TARGET: TargetName = 'gfx950';

export const COMPILE_ALL_USAGE = `rocke compile-all [PROBLEM | --suite FILE | --miopen-file LOG | --grid aot] [--target gfx950|gfx942|sm_90|all ...] [--family NAME ...]
                  [--variant V ...] [--dtype fp16|bf16 ...] [--cap N] [--limit N] [--jobs N]
                  [--check-ir] [--no-prune] [--shard i/n|auto/n|auto] [--quiet] [--cache-dir DIR] [--json]
  The main job. With no problem: the built-in problem set (sm_14x14_1024, g_28_c512_g32, d_14_c256:
  one small-map, grouped and dense shape, bf16) for gfx950. Per shape and target: the valid
  candidates of each apt variant (grouped; dense; split_c on maps up to 16x16), likely spillers
  dropped, ordered by the cost model's predicted time across the variants and capped at --cap per
  shape (default ${cliOp.defaultCap}; each variant keeps its own first few); plus the split-reduce helpers. A problem (flags or --miopen) or a --suite replaces
  the built-in set; --dtype re-types the built-in set (or is the problem's dtype). --grid aot
  compiles conv-direct's full shape-independent grid instead (thousands of kernels per target:
  hours), where --variant/--dtype filter it. Up-to-date entries are skipped (--check-ir also
  re-emits IR and rebuilds what changed). Then the ELF prune drops spilling and waves_per_eu-twin
  grouped/split_c entries; the kept kernels are printed (problem sets), then a summary.
  --target all: every target. --shard compiles every n-th job (0-based i; auto reads
  JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID) without pruning; rocke cache merge folds the shards,
  then one unsharded run prunes. Exit 1 if any job failed or a shape's selection threw (the other
  shapes still compile; stderr names it); else exit 2 if a shape has no valid
  candidate on a target (conv-direct's decisive reason on stderr; a single such problem compiles nothing).
  ${PROBLEM_USAGE.replace(/\n/g, '\n  ')}
  ${PROBLEM_SET_USAGE.replace(/\n/g, '\n  ')}`;

const GRIDS = ['problems', 'aot'] as const;

const COMPILE_ALL_OPTIONS = {
  ...COMMON_OPTIONS,
  ...PROBLEM_OPTIONS,
  ...PROBLEM_SET_OPTIONS,
  grid: { type: 'string' },
  target: { type: 'string', multiple: true },
  family: { type: 'string', multiple: true },
  variant: { type: 'string', multiple: true },
  dtype: { type: 'string', multiple: true },
  cap: { type: 'string' },
  limit: { type: 'string' },
  jobs: { type: 'string' },
  shard: { type: 'string' },
  'no-prune': { type: 'boolean' },
  'check-ir': { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

/** `rocke compile-all`. */
export async function compileAllCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('compile-all', () => parseArgs({ args: [...argv], options: COMPILE_ALL_OPTIONS, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${COMPILE_ALL_USAGE}\n`);
    return 0;
  }
  const grid = values.grid ?? 'problems';
  if (!(GRIDS as readonly string[]).includes(grid)) throw new UsageError(`unknown --grid '${grid}' (${GRIDS.join(', ')})`);
  const known = deps.families();
  const byName = new Map(known.map((f) => [f.name, f]));
  const names = list(values.family);
  const wanted = names.length ? [...new Set(names)] : [...deps.defaultFamilyNames];
  if (wanted.length === 0) {
    throw new UsageError(`no default kernel families are wired into this build; choose one with --family (known: ${[...byName.keys()].join(', ') || 'none'})`);
  }
  for (const n of wanted) if (!byName.has(n)) throw new UsageError(`unknown family '${n}' (known: ${[...byName.keys()].join(', ')})`);
  const targetValues = list(values.target);
  const targets: TargetName[] = targetValues.includes('all') ? [...TARGET_NAMES] : (targetsFrom(targetValues.length ? targetValues : undefined) ?? [DEFAULT_COMPILE_TARGET]);
  const jobs = positiveInt('jobs', values.jobs, availableParallelism());
  const limit = values.limit === undefined ? undefined : positiveInt('limit', values.limit, 1);
  const variants = list(values.variant);
  const dtypes = list(values.dtype);
  for (const d of dtypes) if (d !== 'fp16' && d !== 'bf16') throw new UsageError(`unknown dtype '${d}' (fp16, bf16)`);

  // The problem set: one given by flags / --miopen / --suite, else the built-in one.
  const input = problemsFrom(values, dtypes, io);
  const explicit = input?.problems ?? null;
  const problemMode = grid === 'problems' && wanted.includes(cliOp.family);
  if (grid === 'aot' && explicit) throw new UsageError('--grid aot compiles the shape-independent grid: drop the problem flags / --suite / --miopen-file');
  if (explicit && !wanted.includes(cliOp.family)) throw new UsageError(`problems select ${cliOp.family} kernels: add --family ${cliOp.family}`);
  if (values.cap !== undefined && !problemMode) throw new UsageError(`--cap applies to problem sets (${cliOp.family} without --grid aot)`);
  const cap = positiveInt('cap', values.cap, cliOp.defaultCap);
  const problems = explicit ?? cliOp.defaultProblems(dtypes as Dtype[]);
  const set = problemMode ? cliOp.problemSet(problems, { cap, ...(variants.length ? { variants } : {}) }) : null;
  const families: AnyFamily[] = wanted.map((n) => (set && n === cliOp.family ? set.family : byName.get(n)!));
  const covered = targets.filter((t) => families.some((f) => f.targets.includes(t)));
  if (covered.length === 0) throw new UsageError(`none of the families ${wanted.join(', ')} has kernels for ${targets.join(', ')}`);

  const cache = cacheFrom(values, io);
  const compiler = deps.compiler();
  const pruner = values['no-prune'] ? null : deps.pruner();
  const selections = set ? covered.filter((t) => set.family.targets.includes(t)).flatMap((t) => set.selections(t)) : [];
  const uncovered = checkCoverage(selections, explicit !== null);
  if (set && !values.json) {
    io.stdout(`compile-all: ${explicit ? 'given' : 'built-in'} problem set for ${covered.join(', ')}, at most ${cap} candidates per shape${explicit ? '' : ' (--grid aot: the full grid)'}\n`);
    if (input?.note) io.stdout(`${input.note}\n`);
    io.stdout(formatSelections(selections));
    io.stdout('\n');
  }
  const progress = values.quiet ? undefined : compileProgress({ write: io.stderr, isTTY: io.stderrIsTTY, columns: io.columns });
  const common = {
    cache,
    compiler,
    pruner,
    jobs,
    targets,
    ...(values['check-ir'] ? { checkIr: true } : {}),
    ...(progress ? { progress } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
  };
  const shard = values.shard !== undefined ? shardFrom(values.shard, io)! : undefined;
  // A problem set's cap counts usable kernels (back-fill), unless sharded (no prune) or limited.
  const { report, built } =
    set && !shard && limit === undefined
      ? await compileSelections(selections, families, common)
      : {
          report: await compileAll({
            ...common,
            families,
            // A problem set applies --variant / --dtype when selecting; the helpers are kept whole.
            ...(!set && variants.length ? { variants } : {}),
            ...(!set && dtypes.length ? { dtypes } : {}),
            ...(limit !== undefined ? { limit } : {}),
            ...(shard ? { shard } : {}),
            collectEntries: set !== null,
          }),
          built: selections.map((s) => s.variants.flatMap((v) => v.specs)),
        };
  progress?.finish();
  const { entries, ...summary } = report;
  const shapesOf = set ? shapesByEntry(selections, built, compiler.flavor) : new Map<string, string[]>();
  const kept = entries ? keptKernelRows(entries, families, shapesOf) : null;

  if (values.json) {
    printJson(io, {
      cacheDir: cache.root,
      grid,
      families: wanted,
      targets,
      flavor: compiler.flavor,
      ...(set ? { problems: selections.map(selectionJson), kept } : {}),
      ...(input?.note ? { note: input.note } : {}),
      ...summary,
    });
  } else {
    if (kept) {
      // Counted from the marks, so entries pruned by an earlier run (e.g. under --no-prune) add up too.
      io.stdout(`kept kernels: ${kept.length} of ${entries!.length} built (${entries!.length - kept.length} pruned, ${report.failed.length} failed)\n`);
      io.stdout(kept.length ? formatKeptKernels(kept) : '(none)\n');
      io.stdout('\n');
    }
    io.stdout(`compile-all into ${cache.root}\n`);
    io.stdout(formatSummary(report, wanted, targets, compiler.flavor, kept?.length ?? null));
    if (report.failed.length) {
      io.stdout('\nfailures:\n');
      io.stdout(
        formatTable(
          ['target', 'family/variant', 'kernel', 'stage', 'error'],
          report.failed.map((f) => [f.target, `${f.family}/${f.variant ?? '-'}`, f.kernelName ?? '', f.stage, briefError(f.message).slice(0, 160)]),
        ),
      );
    }
  }
  for (const u of uncovered) io.stderr(`rocke compile-all: no valid candidate for ${formatUncovered(u)}\n`);
  const unselected = selections.flatMap((s) => s.variants.filter((v) => v.error).map((v) => `${s.name} on ${s.target}: ${v.variant}: ${v.error}`));
  for (const line of unselected) io.stderr(`rocke compile-all: selection failed for ${line}\n`);
  return report.failed.length || report.aborted || unselected.length ? 1 : uncovered.length ? 2 : 0;
}

/**
 * The selections no candidate serves. When that is every one of a given problem set, compiling
 * would do nothing: a usage error with the family's decisive reason.
 */
function checkCoverage(selections: readonly ShapeSelection[], given: boolean): Uncovered[] {
  const uncovered = uncoveredSelections(selections);
  if (given && selections.length > 0 && uncovered.length === selections.length) {
    throw new UsageError(`no valid candidate for ${formatUncovered(uncovered[0]!)}${uncovered.length > 1 ? ` (and ${uncovered.length - 1} more shape/target pairs)` : ''}`);
  }
  return uncovered;
}

/** Repeated or comma-separated flag values, trimmed, empty ones dropped. */
function list(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

/** The problems given on the command line: one by flags / --miopen, a --suite or a --miopen-file; null when none. */
function problemsFrom(values: Record<string, unknown>, dtypes: readonly string[], io: CliIo): ProblemSetInput | null {
  const fromFile = values['suite'] !== undefined || values['miopen-file'] !== undefined;
  const hasProblemFlags = Object.keys(PROBLEM_OPTIONS).some((k) => k !== 'dtype' && values[k] !== undefined);
  if (fromFile && hasProblemFlags) throw new UsageError('give problems either by --suite / --miopen-file or by flags / --miopen, not both');
  if (fromFile && dtypes.length) throw new UsageError('--dtype does not apply to a --suite or --miopen-file (their problems carry their dtype)');
  if (hasProblemFlags && dtypes.length > 1) throw new UsageError('a problem has one --dtype');
  // The problem flags take one dtype; compile-all's --dtype may repeat (it re-types the built-in set).
  return problemSetFromValues({ ...values, dtype: hasProblemFlags && dtypes.length === 1 ? dtypes[0] : undefined }, io);
}

/**
 * Compiles each selection's specs with back-fill ({@link compileCapped}): a kernel that fails or is
 * pruned is replaced by the next of the shape's ranking. Returns the specs each shape built.
 */
async function compileSelections(selections: readonly ShapeSelection[], families: readonly AnyFamily[], common: Omit<CompileCappedOptions, 'family' | 'lists'>): Promise<{ report: CompileAllReport; built: Spec[][] }> {
  const selected = families.find((f) => f.name === cliOp.family)!;
  const lists = selections.map((s) => ({ target: s.target, cap: s.cap, ranked: [...s.variants.flatMap((v) => v.specs), ...s.backfill.map((b) => b.spec)].map((spec) => ({ variant: spec.variant, spec })) }));
  const r = await compileCapped({ ...common, family: selected, lists, alongside: families.filter((f) => f !== selected) });
  return { report: r.report, built: r.built.map((b) => b.map((c) => c.spec as Spec)) };
}

/** Entry id → names of the shapes that built it (the same identities the family's candidates get). */
function shapesByEntry(selections: readonly ShapeSelection[], built: readonly Spec[][], flavor: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [i, s] of selections.entries()) {
    for (const spec of built[i]!) {
      const id = identityId({ family: cliOp.family, variant: spec.variant, target: s.target, flavor, spec: { ...spec } as JsonValue });
      const names = out.get(id) ?? [];
      if (!names.includes(s.name)) names.push(s.name);
      out.set(id, names);
    }
  }
  return out;
}

function formatSelections(selections: readonly ShapeSelection[]): string {
  const rows: (string | number)[][] = [];
  for (const s of selections) {
    for (const v of s.variants) rows.push([s.name, s.cls ?? '', s.target, cliOp.label(s.problem), v.variant, v.valid, v.spillHeuristic, v.error ? `selection failed: ${v.error}` : v.specs.length]);
    for (const note of s.notes) rows.push([s.name, s.cls ?? '', s.target, cliOp.label(s.problem), '-', '', '', note]);
  }
  return formatTable(['shape', 'class', 'target', 'problem', 'variant', 'valid', 'likely spill', 'selected'], rows, ['left', 'left', 'left', 'left', 'left', 'right', 'right', 'right']);
}

function selectionJson(s: ShapeSelection) {
  return {
    name: s.name,
    cls: s.cls,
    target: s.target,
    problem: s.problem,
    cap: s.cap,
    variants: s.variants.map((v) => ({ variant: v.variant, valid: v.valid, spillHeuristic: v.spillHeuristic, selected: v.specs.length, ...(v.error ? { error: v.error } : {}) })),
    notes: s.notes,
  };
}

function formatSummary(report: CompileAllReport, wanted: readonly string[], targets: readonly string[], flavor: string, kept: number | null): string {
  const pruned = Object.entries(report.prunedByReason);
  const rebuilt = Object.entries(report.rebuiltByCause);
  const rows: [string, number | string, string][] = [
    ['selected', report.total, `${wanted.join(', ')} for ${targets.join(', ')}`],
    ['compiled', report.compiled, 'new entries'],
    ['rebuilt', report.rebuilt, rebuilt.map(([c, n]) => `${c} ${n}`).join(', ')],
    ['cached', report.cached, 'up to date, skipped'],
    ['failed', report.failed.length, report.failed.length ? 'see below' : ''],
    ...(report.aborted ? [['aborted', report.aborted, 'interrupted before they finished; prune step skipped'] as [string, number, string]] : []),
    ['pruned', report.pruned.length, !report.pruneApplied ? (report.shard ? `shard ${report.shard.index}/${report.shard.count}: prune after rocke cache merge` : 'prune step off') : report.aborted ? 'prune step skipped (aborted)' : pruned.map(([r, n]) => `${r} ${n}`).join(', ') || 'nothing to drop'],
    ...(kept === null ? [] : [['kept', kept, 'listed above'] as [string, number, string]]),
    ['time', formatDuration(report.durationMs), `${report.jobs} jobs, ${flavor}`],
  ];
  return formatTable(['', 'count', 'detail'], rows, ['left', 'right', 'left']);
}
