import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { isTempName, writeFileAtomic } from '../atomic-file.js';
import { canonicalJson, isSha256Hex, sha256Hex, type JsonValue } from '../hash.js';

/**
 * What a cached kernel is: the family that built it, its variant, the target it was compiled for,
 * the LLVM flavor of the IR text, and the family's spec. Its SHA-256 over canonical JSON is the id.
 */
export interface KernelIdentity {
  family: string;
  variant: string;
  target: string;
  flavor: string;
  spec: JsonValue;
}

/** Kind of code object a blob holds. */
export type CodeKind = 'hsaco' | 'cubin' | 'ptx';

/** A content-addressed blob: SHA-256 of its bytes and its length. */
export interface BlobRef {
  digest: string;
  size: number;
}

/** Why compile-all's prune step dropped an entry; the record stays so incremental runs skip it. */
export interface PruneMark {
  reason: string;
  detail: string;
}

/** One cache entry, stored as `index/<id>.json`. */
export interface CacheEntry {
  format: 1;
  id: string;
  identity: KernelIdentity;
  kernelName: string;
  ir: BlobRef;
  code: BlobRef & { kind: CodeKind };
  /** Versions of the tools that produced the code; a different toolchain makes the entry stale. */
  toolchain: string;
  /** The family's emitter label when built (see `Family.emitter`); a different one makes the entry stale. */
  emitter: string;
  /** Facts read from the code object (digests and counts, never code bytes), or null. */
  facts: JsonValue | null;
  pruned: PruneMark | null;
}

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);
const digest = z.string().refine(isSha256Hex, 'not a lower-case SHA-256 hex digest');
const blobRef = z.object({ digest, size: z.number().int().nonnegative() }).strict();
const entrySchema = z
  .object({
    format: z.literal(1),
    id: digest,
    identity: z
      .object({ family: z.string(), variant: z.string(), target: z.string(), flavor: z.string(), spec: jsonValue })
      .strict(),
    kernelName: z.string().min(1),
    ir: blobRef,
    code: blobRef.extend({ kind: z.enum(['hsaco', 'cubin', 'ptx']) }).strict(),
    toolchain: z.string(),
    emitter: z.string(),
    facts: jsonValue.nullable(),
    pruned: z.object({ reason: z.string().min(1), detail: z.string() }).strict().nullable(),
  })
  .strict();

/** The cache id of an identity: SHA-256 of its canonical JSON (sorted keys, no whitespace). */
export function identityId(identity: KernelIdentity): string {
  const { family, variant, target, flavor, spec } = identity;
  return sha256Hex(canonicalJson({ family, variant, target, flavor, spec }));
}

/** What went wrong reading the cache. */
export type IntegrityKind = 'missing-blob' | 'corrupt-blob' | 'corrupt-entry';

/** A blob or entry that is missing or does not match its digest / schema. */
export class CacheIntegrityError extends Error {
  override readonly name = 'CacheIntegrityError';
  constructor(
    readonly kind: IntegrityKind,
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${kind}: ${path}: ${detail}`);
  }
}

/** Result of checking one blob without throwing. */
export type BlobStatus = { ok: true } | { ok: false; kind: 'missing-blob' | 'corrupt-blob'; detail: string };

/**
 * Where the cache lives when nobody says: `$ROCKE_CACHE_DIR`, else `.rocke-cache/` in the nearest
 * ancestor of `cwd` that is a repository root (has `.git` or an npm-workspaces package.json),
 * else `.rocke-cache/` in `cwd`.
 */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>> = process.env, cwd: string = process.cwd()): string {
  const fromEnv = env['ROCKE_CACHE_DIR'];
  if (fromEnv) return resolve(cwd, fromEnv);
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git')) || hasWorkspaces(join(dir, 'package.json'))) return join(dir, '.rocke-cache');
    if (dirname(dir) === dir) break;
  }
  return join(resolve(cwd), '.rocke-cache');
}

function hasWorkspaces(pkgPath: string): boolean {
  try {
    return 'workspaces' in (JSON.parse(readFileSync(pkgPath, 'utf8')) as object);
  } catch {
    return false;
  }
}

/**
 * The kernel cache on disk.
 *
 * Layout:
 *   <root>/blobs/<d0d1>/<sha256>   content-addressed bytes (IR text and code objects)
 *   <root>/index/<id>.json         one record per entry (see {@link CacheEntry})
 *
 * Concurrency: every file is written with {@link writeFileAtomic} and never modified in place.
 * Blobs are immutable and named by their digest, so two writers of one blob write the same bytes
 * and either rename wins. Each entry is its own file, so writers of different entries never touch
 * the same path and no shared index can lose an update; writers of the same entry each write a
 * complete record and the last rename wins. A blob is written before any entry that references it.
 * No lock is needed, so there is no stale lock to recover from a crashed process. `gc` only deletes
 * unreferenced blobs older than a grace period, and re-using an existing blob refreshes its mtime,
 * so a blob written for an entry that is still being recorded is never collected.
 */
export class KernelCache {
  readonly root: string;
  readonly blobDir: string;
  readonly indexDir: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.blobDir = join(this.root, 'blobs');
    this.indexDir = join(this.root, 'index');
  }

  /** Creates the directories if needed. */
  ensure(): this {
    mkdirSync(this.blobDir, { recursive: true });
    mkdirSync(this.indexDir, { recursive: true });
    return this;
  }

  /** Path of a blob by digest. */
  blobPath(digestHex: string): string {
    if (!isSha256Hex(digestHex)) throw new TypeError(`not a SHA-256 hex digest: ${JSON.stringify(digestHex)}`);
    return join(this.blobDir, digestHex.slice(0, 2), digestHex);
  }

  /** Path of an entry record by id. */
  entryPath(id: string): string {
    if (!isSha256Hex(id)) throw new TypeError(`not a cache id: ${JSON.stringify(id)}`);
    return join(this.indexDir, `${id}.json`);
  }

  /**
   * Stores bytes (or UTF-8 text) and returns their reference. An existing blob with the right
   * digest is kept (its mtime refreshed for gc); a missing or corrupt one is (re)written.
   */
  putBlob(data: string | Uint8Array): BlobRef {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const ref = { digest: sha256Hex(bytes), size: bytes.length };
    const path = this.blobPath(ref.digest);
    if (this.checkBlob(ref).ok) {
      const now = new Date();
      try {
        utimesSync(path, now, now);
      } catch {
        // removed between check and touch: fall through and write it
      }
      if (existsSync(path)) return ref;
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomic(path, bytes);
    return ref;
  }

  /** Reads a blob and checks its size and digest; throws {@link CacheIntegrityError} otherwise. */
  readBlob(ref: BlobRef): Uint8Array {
    const path = this.blobPath(ref.digest);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CacheIntegrityError('missing-blob', path, 'no such blob');
      throw err;
    }
    if (bytes.length !== ref.size) {
      throw new CacheIntegrityError('corrupt-blob', path, `size ${bytes.length}, expected ${ref.size}`);
    }
    const actual = sha256Hex(bytes);
    if (actual !== ref.digest) throw new CacheIntegrityError('corrupt-blob', path, `digest ${actual}, expected ${ref.digest}`);
    return bytes;
  }

  /** Reads a text blob (IR) with the same checks as {@link readBlob}. */
  readText(ref: BlobRef): string {
    return Buffer.from(this.readBlob(ref)).toString('utf8');
  }

  /** Checks a blob without throwing for integrity problems. */
  checkBlob(ref: BlobRef): BlobStatus {
    try {
      this.readBlob(ref);
      return { ok: true };
    } catch (err) {
      if (err instanceof CacheIntegrityError && err.kind !== 'corrupt-entry') return { ok: false, kind: err.kind, detail: err.detail };
      throw err;
    }
  }

  /** Deletes a blob file (used to drop a corrupt blob so it gets rebuilt). */
  removeBlob(digestHex: string): boolean {
    return removeIfPresent(this.blobPath(digestHex));
  }

  /** Writes an entry record atomically after checking its schema and that its id matches its identity. */
  putEntry(entry: CacheEntry): void {
    const parsed = entrySchema.safeParse(entry);
    if (!parsed.success) throw new TypeError(`invalid cache entry: ${z.prettifyError(parsed.error)}`);
    const expected = identityId(entry.identity);
    if (entry.id !== expected) throw new TypeError(`cache entry id ${entry.id} does not match its identity (${expected})`);
    mkdirSync(this.indexDir, { recursive: true });
    writeFileAtomic(this.entryPath(entry.id), `${JSON.stringify(sortKeysDeep(entry), null, 2)}\n`);
  }

  /**
   * Reads one entry; undefined when absent. A record that is not valid JSON, fails the schema, or
   * whose id does not match its identity throws {@link CacheIntegrityError} ('corrupt-entry').
   */
  getEntry(id: string): CacheEntry | undefined {
    const path = this.entryPath(id);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return parseEntry(text, path, id);
  }

  /** Removes an entry record (its blobs stay until `gc`). */
  removeEntry(id: string): boolean {
    return removeIfPresent(this.entryPath(id));
  }

  /** Ids of every entry record, sorted; temp files of in-flight writes are never listed. */
  listIds(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.indexDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return names
      .filter((n) => !isTempName(n) && n.endsWith('.json') && isSha256Hex(n.slice(0, -5)))
      .map((n) => n.slice(0, -5))
      .sort();
  }

  /** Every readable entry (sorted by id) plus the records that could not be read. */
  listEntries(): { entries: CacheEntry[]; corrupt: CacheIntegrityError[] } {
    const entries: CacheEntry[] = [];
    const corrupt: CacheIntegrityError[] = [];
    for (const id of this.listIds()) {
      try {
        const entry = this.getEntry(id);
        if (entry) entries.push(entry); // else: removed by someone else since the listing
      } catch (err) {
        if (err instanceof CacheIntegrityError) corrupt.push(err);
        else throw err;
      }
    }
    return { entries, corrupt };
  }

  /** Digests of every blob file on disk (sorted), skipping temp files. */
  listBlobDigests(): string[] {
    const out: string[] = [];
    let shards: string[];
    try {
      shards = readdirSync(this.blobDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    for (const shard of shards) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const name of readdirSync(join(this.blobDir, shard))) {
        if (isSha256Hex(name) && name.startsWith(shard)) out.push(name);
      }
    }
    return out.sort();
  }

  /** Size in bytes and mtime (ms) of a blob file, or undefined when absent. */
  blobStat(digestHex: string): { size: number; mtimeMs: number } | undefined {
    try {
      const st = statSync(this.blobPath(digestHex));
      return { size: st.size, mtimeMs: st.mtimeMs };
    } catch {
      return undefined;
    }
  }
}

function parseEntry(text: string, path: string, id: string): CacheEntry {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CacheIntegrityError('corrupt-entry', path, `not valid JSON (${(err as Error).message})`);
  }
  const parsed = entrySchema.safeParse(raw);
  if (!parsed.success) throw new CacheIntegrityError('corrupt-entry', path, z.prettifyError(parsed.error).replace(/\n/g, '; '));
  const entry = parsed.data as CacheEntry;
  if (entry.id !== id) throw new CacheIntegrityError('corrupt-entry', path, `record id ${entry.id} differs from its file name`);
  const expected = identityId(entry.identity);
  if (expected !== id) throw new CacheIntegrityError('corrupt-entry', path, `identity hashes to ${expected}, not ${id}`);
  return entry;
}

function removeIfPresent(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Same value with object keys sorted, so records on disk are byte-stable for equal content. */
function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeysDeep((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
