// Type tests of the public API (vitest typecheck): what a program built on @rocke/pipeline relies on.
import { describe, expectTypeOf, it } from 'vitest';
import * as api from './index.js';
import type { AnyFamily, CacheEntry, CliDeps, CliIo, CompileAllOptions, CompileAllReport, KernelCompiler, NpyArray, TargetName } from './index.js';
import { axpyFamily, cliHarness } from './testing/index.js';
import { convDirectFamily, type LaunchSequence, type SequencedLaunch as ConvLaunch, type Spec } from '@rocke/conv-direct';
import type { Family, SequencedLaunch } from '@rocke/ir';
import { splitReduceFamily } from '@rocke/split-reduce';

describe('@rocke/pipeline public types', () => {
  it('runs the CLI in-process: argv, optional io and deps, an exit status', () => {
    expectTypeOf(api.main).parameters.toEqualTypeOf<[argv: readonly string[], io?: CliIo, deps?: Partial<CliDeps>]>();
    expectTypeOf(api.main).returns.resolves.toEqualTypeOf<number>();
    expectTypeOf(api.defaultDeps).returns.toEqualTypeOf<CliDeps>();
  });

  it('compiles families into a cache and reports per job', () => {
    expectTypeOf(api.compileAll).parameter(0).toEqualTypeOf<CompileAllOptions>();
    expectTypeOf(api.compileAll).returns.resolves.toEqualTypeOf<CompileAllReport>();
    expectTypeOf<CompileAllOptions['families']>().toEqualTypeOf<readonly AnyFamily[]>();
    expectTypeOf(api.LlvmToolchain).instance.toMatchTypeOf<KernelCompiler>();
    expectTypeOf<TargetName>().toEqualTypeOf<'gfx950' | 'gfx942' | 'sm_90'>();
    expectTypeOf<CompileAllReport['entries']>().toEqualTypeOf<CacheEntry[] | undefined>();
  });

  it('takes the typed family of each kernel package, and the axpy smoke family (from ./testing), as a family compile-all lists', () => {
    expectTypeOf(convDirectFamily()).toEqualTypeOf<Family<Spec>>();
    expectTypeOf(convDirectFamily()).toMatchTypeOf<AnyFamily>();
    expectTypeOf(splitReduceFamily()).toMatchTypeOf<AnyFamily>();
    expectTypeOf(axpyFamily()).toMatchTypeOf<AnyFamily>();
  });

  it("plans launches in @rocke/ir's one launch shape, which conv-direct's plans fill", () => {
    expectTypeOf<api.PlannedLaunch>().toEqualTypeOf<SequencedLaunch<'conv' | 'reduce'>>();
    expectTypeOf<ConvLaunch>().toMatchTypeOf<api.PlannedLaunch>();
    expectTypeOf<LaunchSequence['launches']>().toMatchTypeOf<api.PlannedSequence['launches']>();
  });

  it('reads and writes .npy arrays', () => {
    expectTypeOf(api.readNpy).returns.toEqualTypeOf<NpyArray>();
    expectTypeOf(api.writeNpy).parameter(0).toEqualTypeOf<NpyArray>();
  });

  it('keeps internals out of the main entry', () => {
    // @ts-expect-error formatTable is an internal of the CLI's tables
    void api.formatTable;
    // @ts-expect-error runPool is an internal of compile-all
    void api.runPool;
    // @ts-expect-error the smoke family lives in ./testing
    void api.axpyFamily;
    expectTypeOf(cliHarness).returns.toHaveProperty('run');
  });
});
