import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelCache } from '../cache/cache.js';
import { gcCache, listCache, pruneCache, verifyCache, type RemoveFailure } from '../cache/cache-maintenance.js';
import { recordMismatch } from '../compile/record-check.js';
import { resolve } from 'node:path';
import { mergeCaches } from '../cache/merge.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import type { CliDeps } from './deps.js';
import { formatBytes, formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, printJson } from './args.js';

export const CACHE_USAGE = `rocke cache ls     [--family F] [--target T] [--variant V] [--cache-dir DIR] [--json]
rocke cache verify [--repair] [--cache-dir DIR] [--json]      exit 1 when problems were found
                   blobs re-hashed; each record's kernel name and facts checked against its code
rocke cache prune  [--broken] [--all] [--family F] [--target T] [--variant V] [--dry-run] [--cache-dir DIR] [--json]
                   default: remove entries compile-all's prune step marked
rocke cache gc     [--grace-hours H] [--dry-run] [--cache-dir DIR] [--json]
                   delete unreferenced blobs and dead temp files older than H hours (default 1)
rocke cache merge  DIR... [--cache-dir OUT] [--json]
                   fold the kernel caches and tuning records of DIR... into OUT (e.g. shards of
                   compile-all / tune): for one record key the faster verified record wins; the
                   result does not depend on the order; exit 1 when something could not be read
  The cache must exist (a directory with index/): a mistyped --cache-dir is an error, not an empty cache.
  prune and gc exit 1 when a file could not be deleted (it is listed, not counted as removed).`;

const FILTER = { family: { type: 'string' }, target: { type: 'string' }, variant: { type: 'string' } } as const;

/** The cache the flags name, which must already exist: maintenance of a mistyped path is an error. */
function existingCache(values: { 'cache-dir'?: string | undefined }, io: CliIo): KernelCache {
  const cache = cacheFrom(values, io);
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  if (!isDir(cache.root)) throw new UsageError(`no cache at ${cache.root}${values['cache-dir'] ? ' (--cache-dir)' : ''}`);
  if (!isDir(join(cache.root, 'index'))) throw new UsageError(`${cache.root} is not a rocke cache (no index/ directory)`);
  return cache;
}

/** Prints files maintenance could not delete; exit status 1 when there are any. */
function reportFailures(io: CliIo, failed: readonly RemoveFailure[]): number {
  for (const f of failed) io.stderr(`rocke cache: could not delete ${f.path}: ${f.error}\n`);
  return failed.length ? 1 : 0;
}

/** `rocke cache ls|verify|prune|gc`. */
export function cacheCommand(argv: readonly string[], io: CliIo, deps: Pick<CliDeps, 'pruner'>): number {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'ls': {
      const { values } = parse('cache ls', () => parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, ...FILTER }, strict: true, allowPositionals: false }));
      if (values.help) return help(io);
      const cache = existingCache(values, io);
      const { rows, corrupt } = listCache(cache, values);
      if (values.json) printJson(io, { cacheDir: cache.root, entries: rows, corrupt });
      else {
        io.stdout(
          formatTable(
            ['id', 'family', 'target', 'variant', 'kernel', 'code', 'size', 'pruned'],
            rows.map((r) => [r.id.slice(0, 12), r.family, r.target, r.variant, r.kernelName, r.codeKind, formatBytes(r.codeBytes), r.pruned ?? '']),
          ),
        );
        io.stdout(`${rows.length} entries in ${cache.root}${corrupt.length ? `; ${corrupt.length} unreadable records (run cache verify)` : ''}\n`);
      }
      return 0;
    }
    case 'verify': {
      const { values } = parse('cache verify', () => parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, repair: { type: 'boolean' } }, strict: true, allowPositionals: false }));
      if (values.help) return help(io);
      const cache = existingCache(values, io);
      const pruner = deps.pruner();
      const report = verifyCache(cache, { repair: values.repair ?? false, ...(pruner ? { checkRecord: (entry, code) => recordMismatch(entry, code, pruner) } : {}) });
      if (values.json) printJson(io, { cacheDir: cache.root, ...report });
      else {
        if (report.problems.length) {
          io.stdout(formatTable(['problem', 'entry', 'action', 'detail'], report.problems.map((p) => [p.kind, p.id?.slice(0, 12) ?? p.path, p.action, p.detail])));
        }
        io.stdout(`${report.entries} entries, ${report.blobsChecked} blobs checked: ${report.problems.length ? `${report.problems.length} problems` : 'all good'}\n`);
        if (report.problems.length) io.stdout('run `rocke compile-all` to rebuild entries with missing or removed blobs\n');
      }
      if (!report.problems.length) return 0;
      io.stderr(`rocke cache verify: ${report.problems.length} problems in ${cache.root}${values.repair ? '' : ' (--repair removes what compile-all rebuilds)'}\n`);
      return 1;
    }
    case 'prune': {
      const { values } = parse('cache prune', () => parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, ...FILTER, broken: { type: 'boolean' }, all: { type: 'boolean' }, 'dry-run': { type: 'boolean' } }, strict: true, allowPositionals: false }));
      if (values.help) return help(io);
      if (values.all && !values.family && !values.target && !values.variant) {
        throw new UsageError('cache prune --all needs a --family, --target or --variant filter (delete the directory to drop everything)');
      }
      const cache = existingCache(values, io);
      const report = pruneCache(cache, { ...values, dryRun: values['dry-run'] ?? false });
      if (values.json) printJson(io, { cacheDir: cache.root, dryRun: values['dry-run'] ?? false, ...report });
      else {
        for (const r of report.removed) io.stdout(`${values['dry-run'] ? 'would remove' : 'removed'} ${r.id.slice(0, 12)}  ${r.why}\n`);
        io.stdout(`${report.removed.length} removed, ${report.kept} kept (blobs stay until cache gc)\n`);
      }
      return reportFailures(io, report.failed);
    }
    case 'gc': {
      const { values } = parse('cache gc', () => parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, 'grace-hours': { type: 'string' }, 'dry-run': { type: 'boolean' } }, strict: true, allowPositionals: false }));
      if (values.help) return help(io);
      const grace = values['grace-hours'] === undefined ? 1 : Number(values['grace-hours']);
      if (!Number.isFinite(grace) || grace < 0) throw new UsageError(`--grace-hours must be a number >= 0 (got '${values['grace-hours']}')`);
      const cache = existingCache(values, io);
      const report = gcCache(cache, { graceMs: grace * 3_600_000, dryRun: values['dry-run'] ?? false });
      if (values.json) printJson(io, { cacheDir: cache.root, ...report });
      else io.stdout(`${report.removedBlobs.length} blobs (${formatBytes(report.freedBytes)}) and ${report.removedTemps.length} temp files ${values['dry-run'] ? 'would be ' : ''}removed; ${report.keptBlobs} blobs kept${report.failed.length ? `; ${report.failed.length} could not be deleted` : ''}\n`);
      return reportFailures(io, report.failed);
    }
    case 'merge':
      return mergeCommand(rest, io);
    case undefined:
    case '--help':
    case 'help':
      if (sub === undefined) throw new UsageError(`cache needs a subcommand: ls, verify, prune, gc or merge`);
      return help(io);
    default:
      throw new UsageError(`unknown cache subcommand '${sub}' (ls, verify, prune, gc, merge)`);
  }
}

/** `rocke cache merge DIR...`. */
function mergeCommand(argv: readonly string[], io: CliIo): number {
  const { values, positionals } = parse('cache merge', () => parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS }, strict: true, allowPositionals: true }));
  if (values.help) return help(io);
  if (!positionals.length) throw new UsageError('cache merge needs the directories to merge: rocke cache merge DIR... --cache-dir OUT');
  const into = cacheFrom(values, io).root;
  const sources = positionals.map((p) => resolve(io.cwd, p));
  if (sources.includes(into)) throw new UsageError(`cache merge: ${into} is both a source and the destination`);
  const report = mergeCaches(into, sources);
  if (values.json) printJson(io, { cacheDir: into, sources, ...report });
  else {
    for (const p of report.problems) io.stderr(`rocke cache merge: ${p.source}: ${p.detail}\n`);
    const e = report.entries;
    const r = report.records;
    io.stdout(`merged ${sources.length} directories into ${into}: entries ${e.added} added, ${e.replaced} replaced, ${e.unchanged} unchanged (${report.blobs} blobs copied); records ${r.added} added, ${r.replaced} replaced by faster ones, ${r.unchanged} unchanged\n`);
  }
  return report.problems.length ? 1 : 0;
}

function help(io: CliIo): number {
  io.stdout(`${CACHE_USAGE}\n`);
  return 0;
}
