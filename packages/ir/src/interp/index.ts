/**
 * CPU interpreter of @rocke/ir kernels with gfx950 / gfx942 / sm_90 semantics: global buffers,
 * per-workgroup LDS, barriers, wave-collective MMA, raw-buffer range checking.
 */
export { interpret } from './run.js';
export type { ArgValue, BufferRef, Dim3, InterpretOptions, InterpretResult } from './run.js';
export { InterpretError } from './errors.js';
export { roundHalf, roundBfloat, halfToBits, bfloatToBits, bfloatFromBits } from './numeric.js';
