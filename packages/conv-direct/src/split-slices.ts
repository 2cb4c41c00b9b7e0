/**
 * How split_c divides the input channels among its slices. The channels come in runs of `unit`
 * (ck, or c_tail for a spec with channel tails); slice s of `splits` reduces runs
 * [⌊s·runs/splits⌋, ⌊(s+1)·runs/splits⌋), so any count up to the number of runs is feasible and
 * the slices differ by at most one run. Uneven counts let the grid fill the machine where the even
 * divisors of C jump past it (20 runs: 3 slices of 7, 7 and 6 where only 2 or 4 divided evenly).
 * The kernels (kernel/open.ts `emitChannelSlice`) compute the same bounds in IR.
 */

/** The channel run a slice is made of: whole ck chunks, or c_tail runs when the spec has a tail. */
export function splitUnit(spec: { readonly ck: number; readonly c_tail: number }): number {
  return spec.c_tail === 0 ? spec.ck : spec.c_tail;
}

/** Channels [c0, c1) of slice `s` of `splits` over `channels` channels in runs of `unit` (`channels` a multiple of `unit`). */
export function splitSlice(channels: number, unit: number, splits: number, s: number): { c0: number; c1: number } {
  const runs = channels / unit;
  return { c0: Math.floor((s * runs) / splits) * unit, c1: Math.floor(((s + 1) * runs) / splits) * unit };
}

/** Channels of the longest slice: the channel loop every workgroup of the launch waits for. */
export function longestSlice(channels: number, unit: number, splits: number): number {
  return Math.ceil(channels / unit / splits) * unit;
}
