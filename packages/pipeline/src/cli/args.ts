import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { defaultCacheDir, KernelCache } from '../cache/cache.js';
import { UsageError, type CliIo } from '../io.js';
import { isTargetName, TARGET_NAMES } from '@rocke/ir';
import type { TargetName } from '../compile/llvm-toolchain.js';
import { parseShard, type Shard } from '../compile/shard.js';

/** Options every subcommand takes. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  'cache-dir': { type: 'string' },
} as const;

/** Runs a parseArgs call; its errors become {@link UsageError}s naming the subcommand. */
export function parse<T>(command: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '')}`);
  }
}

/**
 * node:util's parseArgs, strict about repeats: an option not declared `multiple` given twice
 * (`--n 1 --n 2`) is an error instead of silently keeping the last value.
 */
export function parseArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof nodeParseArgs<T>> {
  const result = nodeParseArgs({ ...config, tokens: true });
  const seen = new Map<string, string[]>();
  for (const t of result.tokens ?? []) {
    if (t.kind !== 'option' || config.options?.[t.name]?.multiple) continue;
    const values = seen.get(t.name) ?? [];
    values.push(t.value ?? '');
    seen.set(t.name, values);
    if (values.length > 1) {
      const given = values.every((v) => v === '') ? '' : ` (${values.map((v) => `'${v}'`).join(', ')})`;
      throw new Error(`option '--${t.name}' given more than once${given}; give it once`);
    }
  }
  return result as ReturnType<typeof nodeParseArgs<T>>;
}

/** The cache the flags name (`--cache-dir`), else `$ROCKE_CACHE_DIR`, else `.rocke-cache/` at the repo root. */
export function cacheFrom(values: { 'cache-dir'?: string | undefined }, io: CliIo): KernelCache {
  return new KernelCache(values['cache-dir'] ? defaultCacheDir({ ROCKE_CACHE_DIR: values['cache-dir'] }, io.cwd) : defaultCacheDir(io.env, io.cwd));
}

/** Targets from repeated or comma-separated `--target` values; undefined when none given. */
export function targetsFrom(values: readonly string[] | string | undefined): TargetName[] | undefined {
  if (values === undefined) return undefined;
  const list = (Array.isArray(values) ? values : [values]).flatMap((v: string) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const t of list) if (!isTargetName(t)) throw new UsageError(`unknown target '${t}' (known: ${TARGET_NAMES.join(', ')})`);
  return [...new Set(list)] as TargetName[];
}

/** A positive integer flag value, or the fallback when absent. */
export function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer (got '${value}')`);
  return Number(value);
}

/** Writes JSON (two-space indent, trailing newline) to stdout. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** `--shard` read into a {@link Shard}, or a usage error with the reason. */
export function shardFrom(text: string | undefined, io: CliIo): Shard | undefined {
  if (text === undefined) return undefined;
  try {
    return parseShard(text, io.env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
