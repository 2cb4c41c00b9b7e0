import type { BenchRequest } from '../bench/requests.js';
import { inShard } from '../compile/shard.js';
import { canonicalJson } from '../hash.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../io.js';
import { formatTable } from '../table.js';
import { cacheFrom, COMMON_OPTIONS, parse, parseArgs, positiveInt, printJson, shardFrom, targetsFrom } from './args.js';
import type { CliDeps } from './deps.js';
import { PROBLEM_OPTIONS, PROBLEM_SET_OPTIONS, PROBLEM_SET_USAGE, PROBLEM_USAGE, problemSetFromValues } from './problem-input.js';

export const TUNE_USAGE = `rocke tune (<problem> | --suite F | --miopen-file F) [--shard i/n|auto/n|auto] [--target T]
           [--warmup 3] [--iters 20] [--cache-dir DIR] [--json]
  Times the compiled candidates of each problem on a GPU (as rocke bench --verify: every winner
  verified against @rocke/reference first) and records the winner per (device arch, problem) in
  DIR/records/: spec, split count, time, runner-up times, device, driver, toolchain, date. An
  existing record is replaced only by a faster one. rocke plan / run / openConv then choose by it
  with no timing. --shard takes every n-th problem (0-based i; auto reads JOB_COMPLETION_INDEX or
  SLURM_ARRAY_TASK_ID); rocke cache merge folds the shards' directories.
  ${PROBLEM_USAGE}
  ${PROBLEM_SET_USAGE}`;

/** `rocke tune`. */
export async function tuneCommand(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const { values } = parse('tune', () =>
    parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...PROBLEM_OPTIONS, ...PROBLEM_SET_OPTIONS, target: { type: 'string' }, shard: { type: 'string' }, warmup: { type: 'string' }, iters: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }),
  );
  if (values.help) {
    io.stdout(`${TUNE_USAGE}\n`);
    return 0;
  }
  const shard = shardFrom(values.shard, io);
  const input = problemSetFromValues(values, io);
  if (!input) throw new UsageError(`tune needs a problem, a --suite or a --miopen-file\n${PROBLEM_USAGE}`);
  if (input.note) io.stderr(`${input.note}\n`);
  const all = input.problems;
  const problems = inShard(all, (p) => canonicalJson(p.problem), shard);
  const request: BenchRequest = {
    problems,
    target: targetsFrom(values.target)?.[0] ?? null,
    verify: true,
    vsCudnn: false,
    warmup: positiveInt('warmup', values.warmup, 3),
    iters: positiveInt('iters', values.iters, 20),
    cacheDir: cacheFrom(values, io).root,
  };
  if (shard) io.stderr(`rocke tune: shard ${shard.index}/${shard.count}: ${problems.length} of ${all.length} problems\n`);
  if (!deps.tune) {
    io.stderr(`rocke tune: no GPU runtime is wired into this build; ${problems.length} problem(s) parsed, nothing timed\n`);
    return 1;
  }
  if (problems.length === 0) {
    if (values.json) printJson(io, { lines: [], failures: 0 });
    return 0;
  }
  const result = await deps.tune(request, io);
  if (values.json) printJson(io, result);
  else {
    const us = (ms: number | undefined) => (ms === undefined ? '-' : (ms * 1000).toFixed(1));
    io.stdout(
      formatTable(
        ['shape', 'record', 'kernel', 'splits', 'us', 'runner-up us', 'note'],
        result.lines.map((l) => [l.name, l.status, l.record?.choice.kernelName.replace(/^rocke_direct_/, '') ?? '-', String(l.record?.choice.launch['splits'] ?? ''), us(l.record?.timeMs), us(l.record?.runnersUp[0]?.timeMs), l.reason ?? '']),
      ),
    );
    io.stdout(`${result.lines.length - result.failures} of ${result.lines.length} shapes have a tuning record in ${request.cacheDir}/records\n`);
  }
  return result.failures ? 1 : 0;
}
