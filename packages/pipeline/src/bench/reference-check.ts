import { problemGeometry, type Problem } from '@rocke/conv-direct';
import { applyEpilogue, compare, convForwardParallel, convSample, gather, type CompareReport, type EpilogueValues } from '@rocke/reference';

/** Problems up to this many multiply-adds are checked in full; larger ones at sampled points. */
export const FULL_CHECK_MAX_MACS = 3e8;

/** Output points a sampled check compares. */
export const SAMPLE_POINTS = 2000;

/** How one shape's outputs are checked against @rocke/reference. */
export interface ReferenceCheck {
  /** `full` (every output) or `sampled N` (N seeded random outputs, exact fp64 sums). */
  readonly mode: string;
  check(y: Uint16Array): CompareReport;
}


/**
 * Builds the reference for one shape's inputs: the whole output for problems up to
 * {@link FULL_CHECK_MAX_MACS} (multi-threaded), else {@link SAMPLE_POINTS} seeded points.
 * Comparison uses @rocke/reference's per-dtype tolerance (fp32 accumulation + one rounding); with
 * a fused `epilogue`, the reference applies it in fp64 and the tolerance takes its `sumRms`.
 */
export async function referenceCheck(problem: Problem, x: Uint16Array, w: Uint16Array, seed: number, fullMaxMacs = FULL_CHECK_MAX_MACS, epilogue?: EpilogueValues): Promise<ReferenceCheck> {
  if (problemGeometry(problem).flops / 2 <= fullMaxMacs) {
    const ref = await convForwardParallel(problem, x, w);
    if (epilogue) {
      const e = applyEpilogue(ref.geometry, ref.y32, epilogue);
      return { mode: 'full', check: (y) => compare(y, e.y, problem.dtype, { ...ref.geometry, sumRms: e.sumRms }) };
    }
    return { mode: 'full', check: (y) => compare(y, ref.y, problem.dtype, ref.geometry) };
  }
  const s = convSample(problem, x, w, { count: SAMPLE_POINTS, seed });
  if (epilogue) {
    const e = applyEpilogue(s.geometry, s.y32, epilogue, s.indices);
    return { mode: `sampled ${s.indices.length}`, check: (y) => compare(gather(y, s.indices), e.y, problem.dtype, { ...s, sumRms: e.sumRms }) };
  }
  return { mode: `sampled ${s.indices.length}`, check: (y) => compare(gather(y, s.indices), s.y, problem.dtype, s) };
}

/**
 * Which timed candidates to verify, as indices into the ranking (fastest first): the first
 * `top` (the bench keeps verifying down the ranking until `top` have passed), plus `sample` more
 * evenly spaced over the rest of the ranking (first and last included). Deterministic.
 */
export function evenlySpaced(count: number, sample: number): number[] {
  if (count <= 0 || sample <= 0) return [];
  if (sample >= count) return Array.from({ length: count }, (_, i) => i);
  if (sample === 1) return [0];
  const out = new Set<number>();
  for (let i = 0; i < sample; i++) out.add(Math.round((i * (count - 1)) / (sample - 1)));
  return [...out].sort((a, b) => a - b);
}
