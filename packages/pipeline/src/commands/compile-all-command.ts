import { availableParallelism } from 'node:os';
import type { CliDeps, CliIo } from '../cli-io.js';
import { UsageError } from '../cli-io.js';
import { compileAll } from '../compile-all.js';
import { compileProgress } from '../progress.js';
import { briefError, formatDuration, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, targetsFrom } from './args.js';

export const COMPILE_ALL_USAGE = `rocke compile-all [--target gfx950|gfx942|sm_90 ...] [--family NAME ...] [--variant V ...] [--dtype fp16|bf16]
                  [--limit N] [--jobs N] [--check-ir] [--no-prune] [--quiet] [--cache-dir DIR] [--json]
  Compiles every candidate of the chosen families (default: the built-in set) for the targets
  (default: every target of each family) into the cache; up-to-date entries (same toolchain and
  emitter, code blob intact) are skipped; --check-ir also re-emits their IR and rebuilds those whose
  IR changed (after editing a kernel builder). Then prunes spilling and waves_per_eu-twin
  grouped/split_c entries. Exit 1 if any job failed.`;

/** `rocke compile-all`. */
export async function compileAllCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('compile-all', () => parseArgs({ args: [...argv], options: {
    ...COMMON_OPTIONS,
    target: { type: 'string', multiple: true },
    family: { type: 'string', multiple: true },
    variant: { type: 'string', multiple: true },
    dtype: { type: 'string', multiple: true },
    limit: { type: 'string' },
    jobs: { type: 'string' },
    'no-prune': { type: 'boolean' },
    'check-ir': { type: 'boolean' },
    quiet: { type: 'boolean' },
  }, strict: true, allowPositionals: false }));
  if (values.help) {
    io.stdout(`${COMPILE_ALL_USAGE}\n`);
    return 0;
  }
  const known = deps.families();
  const byName = new Map(known.map((f) => [f.name, f]));
  const names = (values.family ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const wanted = names.length ? [...new Set(names)] : [...deps.defaultFamilyNames];
  if (wanted.length === 0) {
    throw new UsageError(`no default kernel families are wired into this build; choose one with --family (known: ${[...byName.keys()].join(', ') || 'none'})`);
  }
  const families = wanted.map((n) => {
    const f = byName.get(n);
    if (!f) throw new UsageError(`unknown family '${n}' (known: ${[...byName.keys()].join(', ')})`);
    return f;
  });
  const targets = targetsFrom(values.target);
  if (targets) {
    const covered = targets.filter((t) => families.some((f) => f.targets.includes(t)));
    if (covered.length === 0) throw new UsageError(`none of the families ${wanted.join(', ')} has kernels for ${targets.join(', ')}`);
  }
  const jobs = positiveInt('jobs', values.jobs, availableParallelism());
  const limit = values.limit === undefined ? undefined : positiveInt('limit', values.limit, 1);
  const variants = values.variant?.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const dtypes = values.dtype?.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const d of dtypes ?? []) if (d !== 'fp16' && d !== 'bf16') throw new UsageError(`unknown dtype '${d}' (fp16, bf16)`);
  const cache = cacheFrom(values, io);
  const compiler = deps.compiler();
  const pruner = values['no-prune'] ? null : deps.pruner();
  const progress = values.quiet ? undefined : compileProgress({ write: io.stderr, isTTY: io.stderrIsTTY, columns: io.columns });
  const report = await compileAll({
    cache,
    families,
    compiler,
    pruner,
    jobs,
    ...(targets ? { targets } : {}),
    ...(variants?.length ? { variants } : {}),
    ...(dtypes?.length ? { dtypes } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(values['check-ir'] ? { checkIr: true } : {}),
    ...(progress ? { progress } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
  });
  progress?.finish();

  if (values.json) {
    printJson(io, { cacheDir: cache.root, families: wanted, targets: targets ?? null, flavor: compiler.flavor, ...report });
  } else {
    const pruned = Object.entries(report.prunedByReason);
    const rebuilt = Object.entries(report.rebuiltByCause);
    const rows: [string, number | string, string][] = [
      ['selected', report.total, `${wanted.join(', ')} for ${targets?.join(', ') ?? 'all targets'}`],
      ['compiled', report.compiled, 'new entries'],
      ['rebuilt', report.rebuilt, rebuilt.map(([c, n]) => `${c} ${n}`).join(', ')],
      ['cached', report.cached, 'up to date, skipped'],
      ['failed', report.failed.length, report.failed.length ? 'see below' : ''],
      ...(report.aborted ? [['aborted', report.aborted, 'interrupted before they finished; prune step skipped'] as [string, number, string]] : []),
      ['pruned', report.pruned.length, !report.pruneApplied ? 'prune step off' : report.aborted ? 'prune step skipped (aborted)' : pruned.map(([r, n]) => `${r} ${n}`).join(', ') || 'nothing to drop'],
      ['time', formatDuration(report.durationMs), `${report.jobs} jobs, ${compiler.flavor}`],
    ];
    io.stdout(`compile-all into ${cache.root}\n`);
    io.stdout(formatTable(['', 'count', 'detail'], rows, ['left', 'right', 'left']));
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
  return report.failed.length || report.aborted ? 1 : 0;
}
