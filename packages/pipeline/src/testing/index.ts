/**
 * @rocke/pipeline/testing: what tests of code built on the pipeline use — the hand-written `axpy`
 * smoke family (real IR for every target, tiny and quick to compile) and an in-process CLI harness
 * with captured output and a private cache.
 */
export { axpyFamily, type AxpyFamilyOptions, type AxpySpec } from '../compile/axpy-family.js';
export { cliHarness, type CliRun } from './cli-harness.js';
