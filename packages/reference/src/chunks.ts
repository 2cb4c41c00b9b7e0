// Batch chunking under a byte budget: the reference holds each chunk's x and y as fp32, and neither
// may pass the budget. One image that does not fit is an error, never a silent clamp.

import { ConvReferenceError, type ConvGeometry } from './problem.js';

/** Default budget: 2^31 bytes for each fp32 operand (x chunk, y chunk). */
export const DEFAULT_BUDGET_BYTES = 2 ** 31;

/** One batch slice: images [n0, n0 + count). */
export interface BatchChunk {
  n0: number;
  count: number;
}

/** Bytes one image occupies as fp32, per operand. */
export function fp32ImageBytes(geometry: ConvGeometry): { x: number; y: number } {
  return { x: geometry.xImageElements * 4, y: geometry.yImageElements * 4 };
}

/**
 * Split the batch into balanced chunks whose fp32 x and fp32 y each stay within `budgetBytes`.
 * The first `N mod chunks` chunks get one image more than the rest. Throws (code 'over-budget')
 * naming the sizes when one image does not fit. The weights are not chunked (every image needs
 * all of them) and are not counted against the budget.
 */
export function planChunks(geometry: ConvGeometry, budgetBytes: number = DEFAULT_BUDGET_BYTES): BatchChunk[] {
  if (typeof budgetBytes !== 'number' || !Number.isSafeInteger(budgetBytes) || budgetBytes < 1) {
    throw new ConvReferenceError('invalid-argument', `budgetBytes must be a positive integer, got ${String(budgetBytes)}`);
  }
  const p = geometry.problem;
  const image = fp32ImageBytes(geometry);
  const perImage = Math.max(image.x, image.y);
  if (perImage > budgetBytes) {
    throw new ConvReferenceError(
      'over-budget',
      `one image does not fit the reference budget of ${budgetBytes} bytes per fp32 operand: ` +
        `x needs H*W*C*4 = ${p.H}*${p.W}*${p.C}*4 = ${image.x} bytes, ` +
        `y needs Ho*Wo*K*4 = ${geometry.Ho}*${geometry.Wo}*${p.K}*4 = ${image.y} bytes; ` +
        `raise budgetBytes or use sampled mode (convSample)`,
    );
  }
  const maxImages = Math.floor(budgetBytes / perImage);
  const chunks = Math.ceil(geometry.N / maxImages);
  const base = Math.floor(geometry.N / chunks);
  const extra = geometry.N % chunks;
  const plan: BatchChunk[] = [];
  let n0 = 0;
  for (let i = 0; i < chunks; i++) {
    const count = base + (i < extra ? 1 : 0);
    plan.push({ n0, count });
    n0 += count;
  }
  return plan;
}
