/**
 * Which staging schedule a spec's kernel uses, as a pure function of the spec (no IR): shared by
 * the kernel builder and the host's register estimate, so the two cannot disagree.
 */
import { TARGETS } from '@rocke/ir';
import type { Spec } from '../spec.js';


function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * What every runtime cpg of a grouped spec is a multiple of: validation needs gm*cpg % ck == 0,
 * so cpg is a multiple of ck / gcd(ck, gm). Weight pieces of gcd(slot, this) channels never
 * straddle two groups.
 */
export function groupedChannelAlignment(spec: Spec): number {
  return spec.ck / gcd(spec.ck, spec.group_merge);
}

/**
 * Channels per weight staging load: the whole slot (`slotElems`), or less for grouped specs whose
 * slots may straddle groups, and for channel tails runs of at most c_tail channels (validation
 * makes C, or cpg, a multiple of c_tail, so a run never straddles a row or a group).
 */
export function weightPieceElems(spec: Spec, slotElems: number): number {
  if (spec.c_tail !== 0) return gcd(slotElems, spec.c_tail);
  return spec.variant === 'grouped' ? gcd(slotElems, groupedChannelAlignment(spec)) : slotElems;
}

/**
 * True when the kernel stages with cp.async into two LDS stages: sm_90 (the target with
 * asynchronous copies and ldmatrix-friendly weight rows), double-buffered, and activations and
 * weights that move in whole 16-byte chunks (no channel runs below 8). Everything else carries the
 * next chunk's loads in registers.
 */
export function usesAsyncCopy(spec: Spec): boolean {
  const wholeRuns = spec.c_tail === 0 || spec.c_tail === 8;
  return TARGETS[spec.target].vendor === 'nvidia' && spec.double_buffer && wholeRuns && weightPieceElems(spec, 8) === 8;
}
