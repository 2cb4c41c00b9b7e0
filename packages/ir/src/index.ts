declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/ir. */
export const VERSION: string = __PACKAGE_VERSION__;

export * from './types.js';
export * from './ir.js';
export * from './constants.js';
export { encodeFloat16, decodeFloat16, roundToFloat, floatHex } from './float.js';
export { Module, sigToString } from './module.js';
export type { ParamSpec, FunctionOptions, GlobalOptions } from './module.js';
export { Builder } from './builder.js';
export type { Operand, ForLoopOptions } from './builder.js';
export { printModule, constantToString, escapeLlvmString } from './printer.js';
export { mangleType } from './intrinsics.js';
export type {
  Target, TargetName, RegisterFile, Vendor, Axis, Flavor, MmaDtype, MmaAtom, MatrixCoord, KernelParam, KernelOptions,
  GlobalBuffer, GlobalAccessOptions, AsyncCopy, LdsDma, WarpgroupMma, WgmmaDescriptorOptions, GridDependency,
} from './targets/target.js';
export { TargetError, FLAVORS, isTargetName } from './targets/target.js';
export { getTarget, gfx950, gfx942, sm_90, TARGETS, TARGET_NAMES, atomForIntrinsic } from './targets/index.js';
export type { TargetOptions } from './targets/index.js';
export { AMDGPU_DATA_LAYOUT, CDNA_BUFFER_FLAGS } from './targets/amd.js';
export { NVPTX64_DATA_LAYOUT } from './targets/nvidia.js';
export { isWgmmaN, wgmmaAsmText, wgmmaAccAt, wgmmaConstraints, swizzle128, swizzle128Offset, WGMMA_SWIZZLE_128B } from './targets/wgmma.js';
export { findToolchain, verify, compile, disassemble, toolchainFingerprint, ToolError, ToolchainError, TOOLCHAIN_TEMP_PREFIX } from './toolchain.js';
export { sweepStaleTempDirs } from './temp-dirs.js';
export type { Toolchain, CompileOptions, CompileResult, AmdCompileResult, NvidiaCompileResult } from './toolchain.js';
export {
  checkGoldens, checkGoldenSnapshots, sha256Hex, goldenUpdateRequested, describeGoldenReport, formatGoldenFile, GoldenMismatchError,
} from './goldens.js';
export type { GoldenCase, GoldenFile, GoldenReport, GoldenChange } from './goldens.js';
export * from './interp/index.js';
export { validateModule } from './validate.js';
export { KERNARG_IR_TYPES, kernargArgs, kernargIrType, kernargLayout, kernargParams, readKernarg, writeKernarg } from './kernarg.js';
export { ACTIVATIONS, BIAS_KINDS, NO_EPILOGUE, epilogueKernargs, epilogueTag, isBareEpilogue, openEpilogue, PREFETCH_REGISTERS } from './epilogue.js';
export type { Activation, BiasKind, Epilogue, EpilogueKernarg, EpiloguePosition, EpilogueStore, StoreEpilogue } from './epilogue.js';
export type { KernargArgs, KernargEntry, KernargLayout, KernargSlot, KernargType } from './kernarg.js';
export type { BufferView, LaunchKernarg, SequencedLaunch } from './launch.js';
export { parseFamilySpec } from './family.js';
export type { BuiltKernel, Family, KernelCandidate } from './family.js';
