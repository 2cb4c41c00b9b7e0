/**
 * Register-pressure estimate and the spill heuristic. Not a validity rule:
 * it only prunes candidate grids of tiles whose builds would spill (and take longest to compile).
 */
import { TARGETS } from '@rocke/ir';
import { DEPTHWISE_PAIR, depthwiseGeometry } from './depthwise-geometry.js';
import { haloExtent, keptFacts, specGeometry, stagedSpec, X_VECTOR_ELEMS, type Spec } from './spec.js';
import { MAX_ACCUMULATORS_PER_LANE } from './validate.js';
import { usesAsyncCopy, weightPieceElems } from './kernel/schedule.js';

/** Live 32-bit registers per lane in the channel loop, by role. */
export interface RegisterEstimate {
  /** f32 accumulators. */
  readonly acc: number;
  /** Loop-carried loads of the next chunk: X vectors (4 dwords) and W fragments (fragA/2 dwords); 0 with sm_90 cp.async double buffering. */
  readonly prefetch: number;
  /** Activation fragments live across one filter column: ((rows-1)*stride + R) input rows per band (one per image a wave's rows span) x column blocks. */
  readonly bFrags: number;
  /** Weight fragments: one per atom row of the wave. */
  readonly aFrags: number;
  /** Channel tails: the hoisted bounds, one per X staging pass (three when tap-folded) and two (offset, channel) per weight piece. */
  readonly tails: number;
  /**
   * Weight-ring kernels (sm_90a): the hoisted cp.async slots, a global and an LDS offset each, of
   * the halo and one tap's weights. The ring exists for halos that fill the LDS, so a one-warpgroup
   * tile can hold dozens of halo slots (33x17 pixels at ck 64: 36 per thread); 0 elsewhere.
   */
  readonly slots: number;
  /** acc + prefetch + bFrags + aFrags + tails + slots. */
  readonly live: number;
  /** Registers per lane the heuristic allows before predicting a spill. */
  readonly budget: number;
}

/** Share of the register budget past which builds started to spill on the gfx950 AOT grid. */
export const SPILL_BUDGET_FRACTION = 0.8;

/**
 * Estimates live registers per lane. AMD budget: 0.8 x 512 / ceil(waves/4) (a workgroup's waves
 * share 4 SIMDs of 512 registers per lane). sm_90 budget: 0.8 x 255 registers per thread; the same
 * live count, not calibrated on compiled sm_90 builds. Call on validated specs.
 */
export function registerEstimate(kernelSpec: Spec): RegisterEstimate {
  // Pointwise: the staged (halo-free) tile is what the fragments read.
  const spec = stagedSpec(kernelSpec);
  // The kernel spec's geometry is its staged spec's (and kept when the spec is frozen).
  const g = specGeometry(kernelSpec);
  const target = TARGETS[spec.target];
  if (spec.variant === 'depthwise') {
    // No fragments: accumulators, the pair's R x S weights ("A") and one window row of inputs ("B"), in f32;
    // a fused epilogue reads after the tap loop, so it holds nothing through it.
    const d = depthwiseGeometry(spec);
    const budget = registerBudget(spec, Math.ceil(d.threads / d.waveSize));
    return { acc: d.accPerLane, prefetch: 0, bFrags: DEPTHWISE_PAIR * d.columnsRead, aFrags: d.weightRegisters, tails: 0, slots: 0, live: d.liveRegisters, budget };
  }
  const dwordsA = g.atom.fragA / 2;
  const dwordsB = g.atom.fragB / 2;
  const acc = g.accPerLane;
  // sm_90 double buffering copies with cp.async straight into LDS: no loads are carried in registers;
  // AMD direct-to-LDS weights (lds_dma) carry only the activations'.
  const prefetch = usesAsyncCopy(spec) ? 0 : g.xPasses * 4 + (spec.lds_dma ? 0 : g.wPasses * dwordsA);
  const bFrags = g.waveImages * haloExtent(g.bandRows, spec.stride_h, spec.R, spec.dilation_h) * g.colBlocks * dwordsB;
  const aFrags = g.mTilesPerWave * dwordsA;
  const wSlotElems = TARGETS[spec.target].vendor === 'amd' ? g.atom.fragA : 8;
  // Tap-folded X staging hoists three values per pass (element base, tap-0 column, folded offset; kernel/tap-fold.ts).
  const xTails = spec.fold_s ? 3 * g.xPasses : g.xPasses;
  // Tap-folded weight slots hoist their first piece only; the others are addressed from it in the loop.
  const wPieces = spec.fold_s ? 1 : wSlotElems / weightPieceElems(spec, wSlotElems);
  const tails = spec.c_tail === 0 ? 0 : xTails + 2 * g.wPasses * wPieces;
  const slots = spec.weight_ring ? 2 * (g.xPasses + Math.ceil((spec.tile_k * spec.ck) / X_VECTOR_ELEMS / g.threads)) : 0;
  const budget = registerBudget(spec, spec.waves_m * spec.waves_n);
  return { acc, prefetch, bFrags, aFrags, tails, slots, live: acc + prefetch + bFrags + aFrags + tails + slots, budget };
}

/** Registers per lane a workgroup of `waves` waves may use before the heuristic predicts a spill. */
function registerBudget(spec: Spec, waves: number): number {
  const target = TARGETS[spec.target];
  return target.registers.kind === 'simd'
    ? (SPILL_BUDGET_FRACTION * target.registers.perLane) / Math.ceil(waves / target.registers.simdsPerUnit)
    : SPILL_BUDGET_FRACTION * target.registers.maxPerThread;
}

/** Why a spec is predicted to spill, or null. */
export function spillReason(spec: Spec): string | null {
  const kept = keptFacts(spec);
  if (!kept) return spillReasonOf(spec);
  if (kept.spill === undefined) kept.spill = spillReasonOf(spec);
  return kept.spill;
}

declare module './spec.js' {
  interface SpecFacts {
    /** spill.ts: {@link spillReason}. */
    spill?: string | null;
  }
}

/** {@link spillReason}, computed. */
function spillReasonOf(spec: Spec): string | null {
  const r = registerEstimate(spec);
  if (TARGETS[spec.target].vendor === 'amd' && r.acc >= MAX_ACCUMULATORS_PER_LANE) {
    return `${r.acc} accumulators fill the ${MAX_ACCUMULATORS_PER_LANE}-register accumulator file`;
  }
  if (r.live > r.budget) {
    const tails = r.tails > 0 ? ` + tails ${r.tails}` : '';
    const slots = r.slots > 0 ? ` + slots ${r.slots}` : '';
    return `about ${r.live} live registers per lane (acc ${r.acc} + prefetch ${r.prefetch} + B ${r.bFrags} + A ${r.aFrags}${tails}${slots}) exceed the budget ${r.budget.toFixed(1)}`;
  }
  return null;
}

/** Splits specs into those the heuristic keeps and those it drops, with reasons; order is kept. */
export function spillFilter(specs: readonly Spec[]): { kept: Spec[]; dropped: { spec: Spec; reason: string }[] } {
  const kept: Spec[] = [];
  const dropped: { spec: Spec; reason: string }[] = [];
  for (const spec of specs) {
    const reason = spillReason(spec);
    if (reason) dropped.push({ spec, reason });
    else kept.push(spec);
  }
  return { kept, dropped };
}
