import type { z } from 'zod';
import type { TargetName } from './targets/target.js';

/** One kernel a family can build for a target: its variant and its typed spec. */
export interface KernelCandidate<S> {
  variant: string;
  spec: S;
}

/** What {@link Family.build} returns: LLVM IR text and the kernel symbol it defines. */
export interface BuiltKernel {
  kernelName: string;
  ir: string;
}

/**
 * A kernel family: the kernels one package builds, as a compiler or a cache sees them. The spec
 * type `S` is the package's own; `schema` reads it back from JSON (a cache record, a bench
 * manifest) strictly, so a consumer parses a stored spec once and hands the typed spec to the
 * family's other methods. Every method that takes a spec is a method (not a property), so a
 * `Family<Spec>` is usable where a `Family<unknown>` is listed.
 */
export interface Family<S> {
  /** Stable name; part of every cache identity (e.g. `direct_fwd`, `direct_fwd_helper`). */
  readonly name: string;
  /** Targets this family has kernels for. */
  readonly targets: readonly TargetName[];
  /**
   * Names the code that emits this family's IR (e.g. the emitting packages' versions). A cache
   * stores it with each entry and rebuilds an entry emitted by a different emitter. Default ''.
   */
  readonly emitter?: string;
  /** Strict schema of the spec: the only way a stored spec becomes an `S`. */
  readonly schema: z.ZodType<S>;
  /** Every candidate for a target (no GPU, no problem shape). Specs are JSON data. */
  candidates(target: TargetName): readonly KernelCandidate<S>[];
  /** Emits IR text for one candidate. Deterministic: same input, same bytes. */
  build(candidate: KernelCandidate<S>, target: TargetName, flavor: string): BuiltKernel;
  /** A short summary of a spec's key fields for tables (e.g. tile, channel chunk, waves). */
  describe?(spec: S): string;
  /**
   * Dynamic LDS / shared bytes a launch of this spec allocates (the code object declares only its
   * static part, so occupancy read from the binary alone would miss it). Default 0.
   */
  launchLdsBytes?(spec: S): number;
  /**
   * The spec's AMD `amdgpu-waves-per-eu` hint (null: none) and the spec without it. Two entries
   * whose specs differ only in the hint are twins: a pruner keeps one when their code is equal.
   * Absent: the family's specs carry no such hint.
   */
  wavesPerEu?(spec: S): { wavesPerEu: number | null; rest: unknown };
}

/** Reads a stored spec with the family's schema: the typed spec, or the one-line reason it is not one. */
export function parseFamilySpec<S>(family: Family<S>, spec: unknown): { ok: true; spec: S } | { ok: false; reason: string } {
  const r = family.schema.safeParse(spec);
  if (r.success) return { ok: true, spec: r.data };
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, reason: `not a ${family.name} spec: ${where}${issue?.message ?? 'invalid'}` };
}
