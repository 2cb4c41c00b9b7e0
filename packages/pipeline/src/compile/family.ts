import type { CacheEntry, CodeKind, KernelIdentity } from '../cache/cache.js';
import type { JsonValue } from '../hash.js';
import type { TargetName } from './llvm-toolchain.js';

/** One kernel a family can build for a target: its variant and its (JSON) spec. */
export interface KernelCandidate {
  variant: string;
  spec: JsonValue;
}

/** The output of {@link Family.build}: LLVM IR text and the kernel symbol it defines. */
export interface BuiltKernel {
  kernelName: string;
  ir: string;
}

/**
 * A kernel family that compile-all can enumerate and build. conv-direct and split-reduce plug in
 * through small adapters implementing this; nothing here knows their spec types.
 */
export interface Family {
  /** Stable name; part of every cache identity (e.g. `direct_fwd`, `direct_fwd_helper`). */
  readonly name: string;
  /** Targets this family has kernels for. */
  readonly targets: readonly TargetName[];
  /**
   * Names the code that emits this family's IR (e.g. the emitting packages' versions). Stored in
   * each entry; an entry built by a different emitter is rebuilt. Edits that keep the label are
   * caught by compile-all's `checkIr` (re-emit and compare IR digests). Default ''.
   */
  readonly emitter?: string;
  /** Every candidate for a target (no GPU, no problem shape). Specs must be JSON data. */
  candidates(target: TargetName): readonly KernelCandidate[];
  /** Emits IR text for one candidate. Must be deterministic: same input, same bytes. */
  build(candidate: KernelCandidate, target: TargetName, flavor: string): BuiltKernel;
  /** A short summary of a spec's key fields for tables (e.g. tile, channel chunk, waves). */
  describe?(spec: JsonValue): string;
  /**
   * Dynamic LDS / shared bytes a launch of this spec allocates (the code object declares only its
   * static part, so occupancy read from the binary alone would miss it). Default 0.
   */
  launchLdsBytes?(spec: JsonValue): number;
}

/** What the prune step sees about one entry of a compile-all run. */
export interface PruneInput {
  id: string;
  identity: KernelIdentity;
  kernelName: string;
  codeKind: CodeKind;
  codeDigest: string;
  facts: JsonValue | null;
}

/** One entry the prune step drops, and why. */
export interface PruneDecision {
  id: string;
  reason: string;
  detail: string;
}

/**
 * Reads facts from compiled code and decides which entries of a run to drop (the seam for
 * @rocke/elf-prune: `facts` wraps its `codeFacts(bytes)`, `prune` its `prune(entries)`).
 */
export interface Pruner {
  /** Facts of one code object (digests and counts, never code bytes); null when the kind has none. */
  facts(code: Uint8Array, kind: CodeKind, kernelName: string): JsonValue | null;
  /** Entries to drop among the successful entries of one run. Must not drop what it does not know. */
  prune(entries: readonly PruneInput[]): PruneDecision[];
}

/** Builds the {@link PruneInput} of a cache entry. */
export function pruneInputOf(entry: CacheEntry): PruneInput {
  return {
    id: entry.id,
    identity: entry.identity,
    kernelName: entry.kernelName,
    codeKind: entry.code.kind,
    codeDigest: entry.code.digest,
    facts: entry.facts,
  };
}
