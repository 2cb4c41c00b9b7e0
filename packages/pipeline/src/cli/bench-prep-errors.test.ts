import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { cliHarness } from '../testing/cli-harness.js';
import type { KernelCompiler } from '../compile/llvm-toolchain.js';
import { readBenchManifest } from '../bench/manifest.js';

// The selection of the shape named `bad` throws in its chooser (as a PlanError did for a channel-tail
// split_c shape of the zoo): bench-prep must record it, prepare the other shapes, then exit 1 naming it.
vi.mock('@rocke/conv-direct', async (importOriginal) => {
  const real = await importOriginal<typeof import('@rocke/conv-direct')>();
  return {
    ...real,
    selectProblemSpecs: ((problems, target, options) =>
      real.selectProblemSpecs(problems, target, options).map((s) =>
        s.name === 'bad' ? { ...s, backfill: [], variants: s.variants.map((v) => ({ ...v, specs: [], predictedUs: [], error: 'PlanError: no split count is feasible for C 72, ck 16' })) } : s,
      )) satisfies typeof real.selectProblemSpecs,
  };
});

const compiler: KernelCompiler = {
  flavor: 'llvm22',
  fingerprint: async () => 'fake toolchain 1',
  compile: async (ir: string) => ({ kind: 'cubin', bytes: new TextEncoder().encode(`cubin ${ir.length} ${/define [^@]*@(\w+)/.exec(ir)?.[1]}`) }),
};

const shape = (name: string, C: number) => ({ name, N: 1, C, H: 8, W: 8, K: 64, R: 3, S: 3, stride: 1, pad: 1, groups: 1, dtype: 'bf16', cls: 'dense' });

describe('rocke bench-prep over a suite with a shape whose selection throws', () => {
  it('records the reason, prepares the other shapes, then exits 1 naming the failed shape', async () => {
    const { dir, run } = cliHarness();
    writeFileSync(join(dir, 'suite.json'), JSON.stringify({ shapes: [shape('first', 64), shape('bad', 72), shape('last', 128)] }));
    const r = await run(['bench-prep', '--suite', 'suite.json', '--out', 'kernels', '--cap', '2', '--quiet'], { compiler: () => compiler, pruner: () => null });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('rocke bench-prep: bad: dense: PlanError: no split count is feasible for C 72, ck 16');
    expect(r.stderr).toContain('selection failed for 1 shape(s): bad (the other shapes were prepared)');
    const manifest = readBenchManifest(join(dir, 'kernels'))!;
    expect(manifest.shapes.map((s) => [s.name, s.candidates.length > 0])).toEqual([['first', true], ['bad', false], ['last', true]]);
    expect(manifest.shapes[1]!.notes.some((n) => n.includes('selection failed: PlanError'))).toBe(true);
  });
});
