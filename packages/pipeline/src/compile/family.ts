import type { Family } from '@rocke/ir';
import type { z } from 'zod';
import type { CodeKind, KernelIdentity } from '../cache/cache.js';

/** A family as compile-all lists it: any spec type (each family's methods take only its own specs). */
export type AnyFamily = Family<unknown>;

/** What the prune step sees about one entry of a compile-all run. */
export interface PruneInput<F> {
  id: string;
  identity: KernelIdentity;
  kernelName: string;
  codeKind: CodeKind;
  codeDigest: string;
  facts: F | null;
  /** The spec's waves_per_eu hint (its family's `wavesPerEu`; null: none). */
  wavesPerEu: number | null;
  /** The identity without that hint: equal for an entry and its twin. */
  twinKey: string;
}

/** One entry the prune step drops, and why. */
export interface PruneDecision {
  id: string;
  reason: string;
  detail: string;
}

/**
 * Reads facts from compiled code and decides which entries of a run to drop (the seam for
 * @rocke/elf-prune: `facts` wraps its `kernelFacts(bytes)`, `prune` its `prune(entries)`).
 */
export interface Pruner<F> {
  /** Strict schema of the facts: facts stored in a cache record are read back through it. */
  readonly factsSchema: z.ZodType<F>;
  /** Facts of one code object (digests and counts, never code bytes); null when the kind has none. */
  facts(code: Uint8Array, kind: CodeKind, kernelName: string): F | null;
  /** Entries to drop among the successful entries of one run. Must not drop what it does not know. */
  prune(entries: readonly PruneInput<F>[]): PruneDecision[];
}

/** A pruner as compile-all takes it: any facts type. */
export type AnyPruner = Pruner<unknown>;
