/**
 * How many workgroups of a spec fit on one CU / SM at once, from its threads, shared memory and
 * estimated registers. The planners use it to decide whether a grid fills the machine.
 */
import { TARGETS } from '@rocke/ir';
import { keptFacts, specGeometry, withEpilogue, type Spec } from './spec.js';
import { registerEstimate } from './spill.js';


/** Residency of one spec on its target. */
export interface Residency {
  /** Workgroups resident per CU / SM: the smallest of the limits, at least 1. */
  readonly perUnit: number;
  /** perUnit x CUs / SMs: workgroups that run at once (one "wave" of the grid). */
  readonly slots: number;
  /** Each limit on its own. */
  readonly limits: { readonly threads: number; readonly shared: number; readonly registers: number; readonly blocks: number | null };
  /** The binding limit's name. */
  readonly limitedBy: 'threads' | 'shared' | 'registers' | 'blocks';
  /** Registers per lane assumed (the spill heuristic's live count, rounded up to 8). */
  readonly registersPerLane: number;
}

/**
 * Residency model. Threads: resident threads per unit / threads per workgroup. Shared: shared
 * memory per unit / (LDS bytes + the runtime's per-block reservation). Registers: AMD, a workgroup
 * puts ceil(waves/4) waves on each SIMD, each needing the estimated registers out of 512 per lane;
 * sm_90, threads x registers out of 65536 per SM. Blocks: the sm_90 cap of 32 per SM.
 * `extraRegisters` per lane are added to the estimate (what holding them would cost).
 */
export function residency(spec: Spec, extraRegisters = 0): Residency {
  if (extraRegisters !== 0) return residencyOf(spec, extraRegisters);
  const kept = keptFacts(spec);
  return kept ? (kept.residency ??= residencyOf(spec, 0)) : residencyOf(spec, 0);
}

declare module './spec.js' {
  interface SpecFacts {
    /** residency.ts: {@link residency} (without extra registers). */
    residency?: Residency;
  }
}

/** {@link residency}, computed. */
function residencyOf(spec: Spec, extraRegisters: number): Residency {
  const t = TARGETS[spec.target];
  const g = specGeometry(spec);
  const regs = Math.ceil((registerEstimate(spec).live + extraRegisters) / 8) * 8;
  const threads = Math.floor(t.maxThreadsPerUnit / g.threads);
  const shared = Math.floor(t.sharedBytesPerUnit / (g.ldsBytes + t.sharedReservedPerBlock));
  let registers: number;
  if (t.registers.kind === 'simd') {
    const wavesPerSimd = Math.ceil(Math.ceil(g.threads / g.waveSize) / t.registers.simdsPerUnit);
    const wavesByRegs = Math.min(t.registers.maxWavesPerSimd, Math.floor(t.registers.perLane / Math.max(regs, 1)));
    registers = Math.floor(wavesByRegs / wavesPerSimd);
  } else {
    const perThread = Math.min(regs, t.registers.maxPerThread);
    registers = Math.floor(t.registers.perUnit / (g.threads * Math.max(perThread, 1)));
  }
  const blocks = t.maxBlocksPerUnit;
  const entries: [Residency['limitedBy'], number][] = [
    ['threads', threads],
    ['shared', shared],
    ['registers', registers],
  ];
  if (blocks !== null) entries.push(['blocks', blocks]);
  let [limitedBy, perUnit] = entries[0] as [Residency['limitedBy'], number];
  for (const [name, n] of entries) {
    if (n < perUnit) [limitedBy, perUnit] = [name, n];
  }
  // A spec that passed validation always runs (registers spill rather than refuse a launch).
  perUnit = Math.max(1, perUnit);
  return { perUnit, slots: perUnit * t.computeUnits, limits: { threads, shared, registers, blocks }, limitedBy, registersPerLane: regs };
}

/**
 * Whether a kernel may hold `extraRegisters` more per lane (a fused epilogue's reads issued ahead of
 * its stores) without losing a resident workgroup: the residency of its bare form (no epilogue)
 * with them is the residency without them.
 */
export function registersToSpare(spec: Spec, extraRegisters: number): boolean {
  const bare = withEpilogue(spec, undefined);
  return residency(bare, extraRegisters).perUnit >= residency(bare).perUnit;
}
