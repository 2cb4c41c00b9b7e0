import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isTempName, writeFileAtomic } from '../atomic-file.js';
import { canonicalJson, isSha256Hex, sha256Hex, type JsonValue } from '../hash.js';

/** The record format this build reads and writes; a record of another version is reported, never guessed at. */
export const RECORD_SCHEMA_VERSION = 1;

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);
const digest = z.string().refine(isSha256Hex, 'not a lower-case SHA-256 hex digest');
const timeMs = z.number().positive().finite();

/** The choice a record keeps: a kernel of a family, its spec and how it is launched (e.g. split count). */
const choiceSchema = z
  .object({
    kernelName: z.string().min(1),
    spec: jsonValue,
    /** Family-specific launch choices ({} when none). */
    launch: z.record(z.string(), jsonValue),
    /** The code object that was timed, when known. */
    code: z.object({ digest, size: z.number().int().nonnegative(), kind: z.enum(['hsaco', 'cubin', 'ptx']) }).strict().nullable(),
  })
  .strict();

/** One tuning record: the verified winner for (family, device arch, problem) and what it beat. */
export const tuningRecordSchema = z
  .object({
    schema: z.literal(RECORD_SCHEMA_VERSION),
    key: digest,
    family: z.string().min(1),
    arch: z.string().min(1),
    problem: jsonValue,
    choice: choiceSchema,
    /** Median time of the winner's timed repetitions. */
    timeMs,
    /** The next fastest verified candidates, fastest first. */
    runnersUp: z.array(z.object({ kernelName: z.string().min(1), launch: z.record(z.string(), jsonValue), timeMs }).strict()),
    /** How the winner was checked against the reference (a record is only written for a pass). */
    verified: z.object({ mode: z.string().min(1) }).strict(),
    device: z.object({ name: z.string(), driver: z.string() }).strict(),
    toolchain: z.string(),
    date: z.string().datetime(),
  })
  .strict();

export type TuningRecord = z.infer<typeof tuningRecordSchema>;

/** The record key: SHA-256 of the canonical JSON of (family, arch, problem). */
export function recordKey(family: string, arch: string, problem: JsonValue): string {
  return sha256Hex(canonicalJson({ family, arch, problem }));
}

/** A record file that is unreadable, fails the schema, has another schema version, or is filed under the wrong key. */
export class RecordIntegrityError extends Error {
  override readonly name = 'RecordIntegrityError';
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`corrupt tuning record ${path}: ${detail}`);
  }
}

/**
 * Which of two records for one key wins: the faster one; on equal times the one whose canonical
 * JSON sorts first, so any order of merging gives the same result.
 */
export function betterRecord(a: TuningRecord, b: TuningRecord): TuningRecord {
  if (a.timeMs !== b.timeMs) return a.timeMs < b.timeMs ? a : b;
  return canonicalJson(a) <= canonicalJson(b) ? a : b;
}

/** Parses a record file's text, checking schema version, schema and that its key is its content's. */
export function parseRecord(text: string, path: string, expectKey?: string): TuningRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RecordIntegrityError(path, `not JSON (${(err as Error).message})`);
  }
  const version = (raw as { schema?: unknown } | null)?.schema;
  if (version !== RECORD_SCHEMA_VERSION) {
    throw new RecordIntegrityError(path, `schema version ${JSON.stringify(version ?? null)}, this build reads version ${RECORD_SCHEMA_VERSION}`);
  }
  const parsed = tuningRecordSchema.safeParse(raw);
  if (!parsed.success) throw new RecordIntegrityError(path, z.prettifyError(parsed.error).replace(/\n/g, '; '));
  const r = parsed.data;
  const key = recordKey(r.family, r.arch, r.problem);
  if (r.key !== key) throw new RecordIntegrityError(path, `its family, arch and problem hash to ${key}, not ${r.key}`);
  if (expectKey !== undefined && key !== expectKey) throw new RecordIntegrityError(path, `filed as ${expectKey} but holds ${key}`);
  return r;
}

/** How long a per-key lock may stand before a writer treats it as left by a dead process. */
const STALE_LOCK_MS = 30_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Tuning records beside a kernel cache: `<cacheRoot>/records/<key>.json`, one file per (family,
 * arch, problem). Files are written atomically; writers of one key take a short per-key lock
 * (`.<key>.lock`, created exclusively) around read-compare-write, so of two concurrent tuners the
 * better record survives and nothing else is touched. A lock older than {@link STALE_LOCK_MS} is
 * broken (its writer died).
 */
export class RecordStore {
  readonly dir: string;

  constructor(cacheRoot: string) {
    this.dir = join(cacheRoot, 'records');
  }

  path(key: string): string {
    if (!isSha256Hex(key)) throw new TypeError(`not a record key: ${JSON.stringify(key)}`);
    return join(this.dir, `${key}.json`);
  }

  /** The record for a key; undefined when there is none; throws {@link RecordIntegrityError} for a bad file. */
  get(key: string): TuningRecord | undefined {
    const path = this.path(key);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new RecordIntegrityError(path, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
    }
    return parseRecord(text, path, key);
  }

  /** The record for (family, arch, problem), if any. */
  lookup(family: string, arch: string, problem: JsonValue): TuningRecord | undefined {
    return this.get(recordKey(family, arch, problem));
  }

  /**
   * Stores `record` unless the stored one for its key is better ({@link betterRecord}); a corrupt
   * stored record is replaced. Returns the record the key holds afterwards and whether it is `record`.
   */
  put(record: TuningRecord): { kept: TuningRecord; replaced: boolean } {
    const r = parseRecord(JSON.stringify(record), '(new record)');
    mkdirSync(this.dir, { recursive: true });
    return this.#locked(r.key, () => {
      let old: TuningRecord | undefined;
      try {
        old = this.get(r.key);
      } catch (err) {
        if (!(err instanceof RecordIntegrityError)) throw err;
      }
      const kept = old ? betterRecord(old, r) : r;
      if (kept === old) return { kept, replaced: false };
      writeFileAtomic(this.path(r.key), `${JSON.stringify(JSON.parse(canonicalJson(r)), null, 1)}\n`);
      return { kept, replaced: true };
    });
  }

  /** Every readable record (sorted by key) and the files that could not be read. */
  list(): { records: TuningRecord[]; corrupt: RecordIntegrityError[] } {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], corrupt: [] };
      throw err;
    }
    const records: TuningRecord[] = [];
    const corrupt: RecordIntegrityError[] = [];
    for (const name of names.sort()) {
      if (isTempName(name) || name.endsWith('.lock') || !name.endsWith('.json')) continue;
      const key = name.slice(0, -'.json'.length);
      try {
        if (!isSha256Hex(key)) throw new RecordIntegrityError(join(this.dir, name), 'the file name is not a record key');
        const r = this.get(key);
        if (r) records.push(r);
      } catch (err) {
        if (err instanceof RecordIntegrityError) corrupt.push(err);
        else throw err;
      }
    }
    return { records, corrupt };
  }

  #locked<T>(key: string, body: () => T): T {
    const lock = join(this.dir, `.${key}.lock`);
    for (let attempt = 0; ; attempt++) {
      try {
        closeSync(openSync(lock, 'wx', 0o644));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        try {
          if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock);
        } catch {
          // released meanwhile
        }
        Atomics.wait(sleeper, 0, 0, Math.min(50, 1 + attempt));
      }
    }
    try {
      return body();
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // already broken by a writer that took it for stale
      }
    }
  }
}
