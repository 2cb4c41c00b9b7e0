/** Kernel builders of @rocke/conv-direct: the LDS-halo direct conv lowered through an @rocke/ir target. */
export {
  ConvKernelError,
  SENTINEL_OFFSET,
  buildConvKernel,
  irAtomName,
  weightSwizzle,
  type BuildMutation,
  type BuildOptions,
  type ConvKernel,
  type FragmentLoad,
  type StagingSchedule,
} from './build.js';
export { chipletRemap, decodeWorkgroup, emitDecodeWorkgroup } from './grid-decode.js';
export { openStoreEpilogue } from './open.js';
export { activationCoord, matrixOrigins, outputCoord, vectorRuns, weightCoord, type OperandCoord, type Run, type StorageCoord } from './fragments.js';
export { interpretConv, type CpuRunOptions, type CpuRunResult } from './cpu-run.js';
export { groupedChannelAlignment, usesAsyncCopy, weightPieceElems } from './schedule.js';
