import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVATIONS, BIAS_KINDS } from '@rocke/ir';
import { z } from 'zod';
import { isSha256Hex } from '../hash.js';

/** File name of the bench manifest inside a kernels directory (`rocke bench --cache-dir DIR`). */
export const BENCH_MANIFEST = 'bench-manifest.json';

const digest = z.string().refine(isSha256Hex, 'not a lower-case SHA-256 hex digest');
const code = z.object({ digest, size: z.number().int().positive(), kind: z.enum(['cubin', 'ptx', 'hsaco']) }).strict();

/** One compiled conv candidate of a shape: the spec (conv-direct JSON), its kernel symbol and code blob. */
export const manifestCandidateSchema = z
  .object({
    kernelName: z.string().min(1),
    variant: z.string().min(1),
    spec: z.record(z.string(), z.unknown()),
    code,
    /** The cost model's predicted time in microseconds that placed it in the bench order (conv-direct's cost-model.ts). */
    score: z.number().nonnegative(),
  })
  .strict();

/** One shape of the suite: its problem, the candidates in bench order, and why some were left out. */
export const manifestShapeSchema = z
  .object({
    name: z.string().min(1),
    cls: z.string().nullable(),
    problem: z.record(z.string(), z.unknown()),
    candidates: z.array(manifestCandidateSchema),
    /** Valid candidates before the cap / spill filter, per variant. */
    available: z.record(z.string(), z.number().int().nonnegative()),
    /** Why variants or candidates are missing (no builder, pruned, failed compiles), one line each. */
    notes: z.array(z.string()),
  })
  .strict();

/** A split-reduce helper kernel (shared by every split_c candidate of its dtype). */
export const manifestHelperSchema = z
  .object({ kernelName: z.string().min(1), spec: z.record(z.string(), z.unknown()), code }).strict();

/** The bench manifest: what `bench-prep` compiled for a suite, and where the code blobs are. */
export const benchManifestSchema = z
  .object({
    format: z.literal(1),
    target: z.string().min(1),
    /** Candidates kept per shape at most (the prep cap). */
    cap: z.number().int().positive(),
    toolchain: z.string(),
    shapes: z.array(manifestShapeSchema),
    helpers: z.array(manifestHelperSchema),
    /** The fused epilogue every candidate (split_c: every helper) was compiled with; absent: bare kernels. */
    epilogue: z.object({ act: z.enum(ACTIVATIONS), bias: z.enum(BIAS_KINDS), residual: z.boolean() }).strict().optional(),
  })
  .strict();

export type BenchManifest = z.infer<typeof benchManifestSchema>;
export type ManifestShape = z.infer<typeof manifestShapeSchema>;
export type ManifestCandidate = z.infer<typeof manifestCandidateSchema>;
export type ManifestHelper = z.infer<typeof manifestHelperSchema>;

/** Parses a manifest; a bad one is a TypeError naming the field. */
export function parseBenchManifest(input: unknown): BenchManifest {
  const r = benchManifestSchema.safeParse(input);
  if (!r.success) throw new TypeError(`bad bench manifest: ${z.prettifyError(r.error)}`);
  return r.data;
}

/** Reads `DIR/bench-manifest.json`, or returns undefined when the directory has none. */
export function readBenchManifest(dir: string): BenchManifest | undefined {
  const path = join(dir, BENCH_MANIFEST);
  if (!existsSync(path)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TypeError(`${path} is not JSON: ${(err as Error).message}`);
  }
  return parseBenchManifest(data);
}
