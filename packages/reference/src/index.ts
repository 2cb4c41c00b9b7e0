declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/reference. */
export const VERSION: string = __PACKAGE_VERSION__;

export {
  DTYPES,
  bf16BitsToFp32Bits,
  decodeDtype,
  dtypeBitsToFp32Bits,
  dtypeValueTable,
  encodeDtype,
  fp16BitsToFp32Bits,
  fp32Bits,
  fp32BitsToBf16Bits,
  fp32BitsToDtypeBits,
  fp32BitsToFp16Bits,
  fp32FromBits,
  fromDtypeBits,
  maxFinite,
  minSubnormal,
  precisionBits,
  roundArrayToDtype,
  roundToDtype,
  toDtypeBits,
} from './dtype.js';
export type { Dtype, NumericArray } from './dtype.js';
export { createRng, randomTensor } from './random.js';
export type { Rng } from './random.js';
export { ConvReferenceError, convGeometry, makeProblem, problemName, validateProblem } from './problem.js';
export type { ConvGeometry, ConvProblem, ConvProblemInit, ConvReferenceErrorCode, ProblemCheck } from './problem.js';
export { DEFAULT_BUDGET_BYTES, fp32ImageBytes, planChunks } from './chunks.js';
export type { BatchChunk } from './chunks.js';
export { convForward, convForwardChunks } from './conv.js';
export type { ConvChunkOutput, ConvOptions, ConvOutput, Operand } from './conv.js';
export { AUTO_THREADS_MIN_MACS, convForwardChunksParallel, convForwardParallel, resolveThreads, splitRows, stopReferenceWorkers } from './parallel.js';
export type { ParallelConvOptions } from './parallel.js';
export { convSample, flatOutputIndex, gather, outputPointOf, samplePoints } from './sample.js';
export type { OutputIndex, OutputShape, SampleOutput, SampleSpec } from './sample.js';
export { compare, toleranceFor } from './compare.js';
export { ACTIVATIONS, activate, activationGain, applyEpilogue } from './epilogue.js';
export type { Activation, EpilogueOutput, EpilogueValues } from './epilogue.js';
export type { BadElement, CompareLayout, CompareReport, CompareValues, Tolerance } from './compare.js';
