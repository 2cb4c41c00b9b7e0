/**
 * Shards: one deterministic slice of a job list per machine, so a CI matrix, a Kubernetes indexed
 * Job or a Slurm array splits compile-all or tune, and the merged results equal one unsharded run.
 */

/** Shard `index` of `count` (0-based: 0 <= index < count). */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Environment variables that carry a batch engine's task index, in the order they are read. */
export const SHARD_INDEX_ENV = ['JOB_COMPLETION_INDEX', 'SLURM_ARRAY_TASK_ID'] as const;

function nonNegative(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new RangeError(`${what} must be a non-negative integer (got '${text}')`);
  return Number(text);
}

/** The index from the environment: a Kubernetes indexed Job's, else a Slurm array task's (made 0-based by SLURM_ARRAY_TASK_MIN). */
function indexFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const job = env['JOB_COMPLETION_INDEX'];
  if (job !== undefined && job !== '') return nonNegative(job, 'JOB_COMPLETION_INDEX');
  const task = env['SLURM_ARRAY_TASK_ID'];
  if (task !== undefined && task !== '') return nonNegative(task, 'SLURM_ARRAY_TASK_ID') - nonNegative(env['SLURM_ARRAY_TASK_MIN'] ?? '0', 'SLURM_ARRAY_TASK_MIN');
  throw new RangeError(`--shard auto needs ${SHARD_INDEX_ENV.join(' or ')} in the environment`);
}

/**
 * Reads `--shard`: `i/n` (0-based), `auto/n` (the index from {@link SHARD_INDEX_ENV}), or `auto`
 * (also the count, from SLURM_ARRAY_TASK_COUNT). Throws a RangeError with a one-line reason.
 */
export function parseShard(text: string, env: Readonly<Record<string, string | undefined>> = {}): Shard {
  const m = /^(auto|\d+)(?:\/(\d+))?$/.exec(text.trim());
  if (!m) throw new RangeError(`--shard must be i/n (0-based), auto/n or auto (got '${text}')`);
  let count: number;
  if (m[2] !== undefined) count = nonNegative(m[2], 'the shard count');
  else if (m[1] === 'auto' && env['SLURM_ARRAY_TASK_COUNT']) count = nonNegative(env['SLURM_ARRAY_TASK_COUNT'], 'SLURM_ARRAY_TASK_COUNT');
  else throw new RangeError(`--shard ${text}: give the shard count as i/n or auto/n`);
  const index = m[1] === 'auto' ? indexFromEnv(env) : Number(m[1]);
  if (count < 1) throw new RangeError('the shard count must be at least 1');
  if (index >= count) throw new RangeError(`shard index ${index} is not below the shard count ${count}`);
  return { index, count };
}

/**
 * The items of one shard: sorted by key, every count-th from position index. Every machine
 * computes the same sorted list, so the shards are disjoint, cover it, and differ in size by at
 * most one. Items with equal keys stay together (the same job).
 */
export function inShard<T>(items: readonly T[], keyOf: (item: T) => string, shard: Shard | undefined): T[] {
  if (!shard || shard.count === 1) return [...items];
  const keys = [...new Set(items.map(keyOf))].sort();
  const mine = new Set(keys.filter((_, i) => i % shard.count === shard.index));
  return items.filter((item) => mine.has(keyOf(item)));
}
