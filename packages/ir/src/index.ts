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
