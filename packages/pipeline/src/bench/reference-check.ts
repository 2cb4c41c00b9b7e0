/** Problems up to this many multiply-adds are checked in full; larger ones at sampled points. */
export const FULL_CHECK_MAX_MACS = 3e8;

/** Output points a sampled check compares. */
export const SAMPLE_POINTS = 2000;

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
