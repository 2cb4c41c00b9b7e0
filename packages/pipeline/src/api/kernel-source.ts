import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readBenchManifest } from '../bench/manifest.js';
import { KernelCache, type BlobRef, type CodeKind } from '../cache/cache.js';
import { recordKey, RecordStore, tuningRecordSchema, type TuningRecord } from '../cache/records.js';
import { canonicalJson, isSha256Hex, type JsonValue } from '../hash.js';


/** A compiled code object by content address. */
export type CodeRef = BlobRef & { kind: CodeKind };

/** A compiled kernel: its symbol, its family's spec, its code. */
export interface SourceKernel {
  kernelName: string;
  spec: JsonValue;
  code: CodeRef;
  /** Fingerprint of the tools that produced the code. */
  toolchain: string;
}

/**
 * Where a runtime finds compiled kernels and tuning records: a kernel cache (with or without a
 * bench manifest) or an AOT catalog. Nothing here compiles or times.
 */
export interface KernelSource {
  readonly root: string;
  /** Targets whose code this source holds. */
  readonly targets: readonly string[];
  /** The family's kernels compiled for `target`, by kernel name (binaries serve any problem they validate for). */
  kernels(target: string): ReadonlyMap<string, SourceKernel>;
  /** The family's helper kernels for `target`. */
  helpers(target: string): readonly SourceKernel[];
  /** The code object's bytes, checked against its digest. */
  readCode(ref: BlobRef): Uint8Array;
  /** The tuning record for the problem on a device of `arch`, if any. */
  record(arch: string, problem: JsonValue): TuningRecord | undefined;
}

/** Cache family names of a source's kernels and of their helper kernels (records are keyed by the first). */
export interface SourceFamilies {
  kernels: string;
  helpers: string;
}

/** The catalog manifest's file name inside a catalog directory. */
export const CATALOG_MANIFEST = 'catalog.json';

const digest = z.string().refine(isSha256Hex, 'not a lower-case SHA-256 hex digest');
const codeRef = z.object({ digest, size: z.number().int().positive(), kind: z.enum(['hsaco', 'cubin', 'ptx']) }).strict();
const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);
const kernelSchema = z.object({ kernelName: z.string().min(1), spec: jsonValue, code: codeRef }).strict();

/** The AOT catalog: kept code objects (blobs/ beside it, content-addressed), plans and tuning records. */
export const catalogSchema = z
  .object({
    format: z.literal(1),
    target: z.string().min(1),
    toolchain: z.string(),
    kernels: z.array(kernelSchema),
    helpers: z.array(kernelSchema),
    /** Per problem of the suite it was built for: the plan chosen (record or ranker) and why. */
    plans: z.array(
      z
        .object({
          name: z.string(),
          problem: jsonValue,
          kernelName: z.string().min(1),
          launch: z.record(z.string(), jsonValue),
          chosenBy: z.enum(['record', 'ranker']),
          explain: z.array(z.string()),
        })
        .strict(),
    ),
    records: z.array(tuningRecordSchema),
  })
  .strict();

export type Catalog = z.infer<typeof catalogSchema>;

/** Reads a catalog directory's manifest; a missing or bad one is an Error with a one-line reason. */
export function readCatalog(dir: string): Catalog {
  const path = join(dir, CATALOG_MANIFEST);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read catalog ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const r = catalogSchema.safeParse(raw);
  if (!r.success) throw new Error(`bad catalog ${path}: ${z.prettifyError(r.error).replace(/\n/g, '; ')}`);
  return r.data;
}

/** A catalog directory as a kernel source: its kernels, helpers and records, nothing else. */
export function catalogSource(dir: string, families: SourceFamilies): KernelSource {
  const catalog = readCatalog(dir);
  const blobs = new KernelCache(dir);
  const withTools = (k: Catalog['kernels'][number]): SourceKernel => ({ ...k, toolchain: catalog.toolchain });
  const kernels = new Map(catalog.kernels.map((k) => [k.kernelName, withTools(k)]));
  const helpers = catalog.helpers.map(withTools);
  const records = new Map(catalog.records.map((r) => [r.key, r]));
  return {
    root: dir,
    targets: [catalog.target],
    kernels: (target) => (target === catalog.target ? kernels : new Map()),
    helpers: (target) => (target === catalog.target ? helpers : []),
    readCode: (ref) => blobs.readBlob(ref),
    record: (arch, problem) => records.get(recordKey(families.kernels, arch, problem)),
  };
}

/**
 * A kernel cache directory as a kernel source: the candidates of its bench manifest (bench-prep)
 * and its index entries that are compiled and not pruned, and the tuning records beside them.
 */
export function cacheSource(dir: string, families: SourceFamilies): KernelSource {
  const cache = new KernelCache(dir);
  const store = new RecordStore(dir);
  // A fused manifest's kernels carry the epilogue in their names (split_c: in its helpers'), so
  // an open picks them only for a run with that epilogue.
  const manifest = readBenchManifest(dir);
  const entries = existsSync(cache.indexDir) ? cache.listEntries().entries.filter((e) => !e.pruned) : [];
  const kernels = (target: string) => {
    const out = new Map<string, SourceKernel>();
    if (manifest?.target === target) {
      for (const s of manifest.shapes) for (const c of s.candidates) out.set(c.kernelName, { kernelName: c.kernelName, spec: c.spec as JsonValue, code: c.code, toolchain: manifest.toolchain });
    }
    for (const e of entries) if (e.identity.family === families.kernels && e.identity.target === target) out.set(e.kernelName, { kernelName: e.kernelName, spec: e.identity.spec, code: e.code, toolchain: e.toolchain });
    return out;
  };
  const helpers = (target: string) => {
    const out = new Map<string, SourceKernel>();
    if (manifest?.target === target) for (const h of manifest.helpers) out.set(h.kernelName, { kernelName: h.kernelName, spec: h.spec as JsonValue, code: h.code, toolchain: manifest.toolchain });
    for (const e of entries) if (e.identity.family === families.helpers && e.identity.target === target) out.set(e.kernelName, { kernelName: e.kernelName, spec: e.identity.spec, code: e.code, toolchain: e.toolchain });
    return [...out.values()];
  };
  const targets = [...new Set([...(manifest ? [manifest.target] : []), ...entries.map((e) => e.identity.target)])].sort();
  return { root: dir, targets, kernels, helpers, readCode: (ref) => cache.readBlob(ref), record: (arch, problem) => store.lookup(families.kernels, arch, problem) };
}

/** A catalog when `dir` holds one, else a kernel cache. */
export function openKernelSource(dir: string, families: SourceFamilies): KernelSource {
  return existsSync(join(dir, CATALOG_MANIFEST)) ? catalogSource(dir, families) : cacheSource(dir, families);
}

/** Canonical problem JSON, the form records are keyed by. */
export function problemJson(problem: object): JsonValue {
  return JSON.parse(canonicalJson(problem)) as JsonValue;
}
