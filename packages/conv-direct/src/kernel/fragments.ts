/**
 * How a kernel reads MMA operand fragments out of LDS, derived from the atom's lane layout
 * functions (never from hard-coded lanes). An operand element `(lane, i)` is first mapped to its
 * storage coordinates in the LDS array that holds it — `strided` (pixel, or output-channel row)
 * and `contig` (the input channel, contiguous in memory) — and then:
 * - {@link vectorRuns}: consecutive elements with one strided coordinate and consecutive contig
 *   coordinates become one vector load per lane (AMD: `ds_read_b128` of 8 channels);
 * - {@link matrixOrigins}: when every 2-element register of the fragment is an 8x8 tile in the
 *   `ldmatrix` lane order, the fragment is loaded by `ldmatrix` with per-lane row addresses (sm_90).
 */
import type { MmaAtom } from '@rocke/ir';

/** Storage coordinates of one operand element. */
export interface StorageCoord {
  readonly strided: number;
  readonly contig: number;
}

/** Maps `(lane, element)` of an operand to its storage coordinates. */
export type OperandCoord = (lane: number, i: number) => StorageCoord;

/** Operand A (weights, m x k): strided = output channel (row), contig = input channel (col). */
export const weightCoord = (atom: MmaAtom): OperandCoord => (lane, i) => {
  const c = atom.a(lane, i);
  return { strided: c.row, contig: c.col };
};

/** Operand B (activations, k x n): strided = output pixel (col), contig = input channel (row). */
export const activationCoord = (atom: MmaAtom): OperandCoord => (lane, i) => {
  const c = atom.b(lane, i);
  return { strided: c.col, contig: c.row };
};

/** Accumulator C/D (m x n) in NHWK: strided = pixel (col), contig = output channel (row). */
export const outputCoord = (atom: MmaAtom): OperandCoord => (lane, i) => {
  const c = atom.c(lane, i);
  return { strided: c.col, contig: c.row };
};

/** A run of `length` fragment elements starting at element `start`, contiguous in storage. */
export interface Run {
  readonly start: number;
  readonly length: number;
}

/**
 * Splits a fragment of `count` elements into runs that are contiguous in storage for every lane
 * (same strided coordinate, contig coordinate increasing by one), at most `maxLength` long and
 * aligned: each run's first contig coordinate is a multiple of its length on every lane, so a
 * vector access of the run is naturally aligned when the storage row stride is too.
 */
export function vectorRuns(coord: OperandCoord, lanes: number, count: number, maxLength: number): Run[] {
  const runs: Run[] = [];
  let i = 0;
  while (i < count) {
    let len = 1;
    while (i + len < count && len < maxLength && everyLane(lanes, (l) => follows(coord(l, i + len - 1), coord(l, i + len)))) len++;
    // Shrink to a power of two that keeps every lane's run aligned.
    let pow = 1;
    while (pow * 2 <= len) pow *= 2;
    while (pow > 1 && !everyLane(lanes, (l) => coord(l, i).contig % pow === 0)) pow /= 2;
    runs.push({ start: i, length: pow });
    i += pow;
  }
  return runs;
}

function follows(a: StorageCoord, b: StorageCoord): boolean {
  return a.strided === b.strided && b.contig === a.contig + 1;
}

function everyLane(lanes: number, f: (lane: number) => boolean): boolean {
  for (let l = 0; l < lanes; l++) if (!f(l)) return false;
  return true;
}

/**
 * The `ldmatrix` view of a fragment whose elements pair into 32-bit registers (element `2q + h`
 * is half `h` of register `q`): for each register, the origin of the 8x8 tile such that lane `l`
 * holds `origin + (l >> 2, 2*(l & 3) + h)`. Null when the operand is not laid out that way (AMD
 * MFMA operands, or a wave that is not 32 lanes).
 */
export function matrixOrigins(coord: OperandCoord, lanes: number, count: number): StorageCoord[] | null {
  if (lanes !== 32 || count % 2 !== 0) return null;
  const origins: StorageCoord[] = [];
  for (let q = 0; q < count / 2; q++) {
    const o = coord(0, 2 * q);
    const fits = everyLane(lanes, (l) => [0, 1].every((h) => {
      const c = coord(l, 2 * q + h);
      return c.strided === o.strided + (l >> 2) && c.contig === o.contig + 2 * (l & 3) + h;
    }));
    if (!fits || o.contig % 8 !== 0) return null;
    origins.push(o);
  }
  return origins;
}

/** True when each lane's fragment is one contiguous, aligned storage run (MFMA operands). */
export function isLaneContiguous(coord: OperandCoord, lanes: number, count: number): boolean {
  const runs = vectorRuns(coord, lanes, count, count);
  return runs.length === 1;
}
