/**
 * The H200 benchmark (device/bench.py) runs without LLVM or node: it loads PTX and launch plans
 * written here. This test keeps them in step with the kernel: the manifest must be exactly what
 * the current code plans, and each PTX file must come from IR with the current digest.
 * `npm run goldens:update` (ROCKE_UPDATE_GOLDENS=1) regenerates both with LLVM 22.
 */
import { compile, getTarget, goldenUpdateRequested, sha256Hex } from '@rocke/ir';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KERNARG_TABLE, defaultSpec, emitSplitReduce, helperSpecs, planReduce } from './index.js';

const DEVICE_DIR = join(import.meta.dirname, '..', 'device');
const MANIFEST = join(DEVICE_DIR, 'manifest.json');

/** Benchmark problems: the small-map class of ../shared/suites/public.json, two bandwidth-bound outputs, and tails. */
const CASES = [
  { label: 'sm_7x7_512', count: 1 * 7 * 7 * 512, splits: 8 },
  { label: 'sm_14x14_1024', count: 1 * 14 * 14 * 1024, splits: 8 },
  { label: 'sm_8x8_1280', count: 4 * 8 * 8 * 1280, splits: 4 },
  { label: 'sm_16x16_640', count: 1 * 16 * 16 * 640, splits: 8 },
  { label: 'n32_14x14_1024', count: 32 * 14 * 14 * 1024, splits: 4 },
  { label: 'n128_28x28_256', count: 128 * 28 * 28 * 256, splits: 2 },
  { label: 'tail_1001', count: 1001, splits: 3 },
  { label: 'tail_3', count: 3, splits: 7 },
] as const;

function manifest() {
  const kernels = helperSpecs('sm_90').map((spec) => {
    const { kernelName, ir } = emitSplitReduce(spec);
    return { name: kernelName, spec, irSha256: sha256Hex(ir), ptx: `ptx/${kernelName}.ptx` };
  });
  const cases = CASES.flatMap((c) =>
    (['bf16', 'fp16'] as const).flatMap((dtype) =>
      ([4, 8] as const).map((vectorWidth) => {
        const plan = planReduce({ count: c.count, splits: c.splits, dtype, target: 'sm_90', spec: defaultSpec('sm_90', dtype, vectorWidth) });
        return {
          label: c.label, count: c.count, splits: c.splits, dtype, vectorWidth, kernel: plan.kernelName,
          launches: plan.launches.map((l) => ({ grid: l.grid, block: l.block, kernargs: l.kernargs })),
        };
      })));
  return { abi: KERNARG_TABLE.map((e) => ({ name: e.name, type: e.type })), kernels, cases };
}

describe('device benchmark artifacts', () => {
  it('manifest and PTX match the current kernel and planner', async () => {
    const want = manifest();
    const text = `${JSON.stringify(want, null, 2)}\n`;
    if (goldenUpdateRequested()) {
      mkdirSync(join(DEVICE_DIR, 'ptx'), { recursive: true });
      for (const k of want.kernels) {
        const r = await compile(emitSplitReduce(k.spec).ir, getTarget('sm_90'));
        if (r.vendor !== 'nvidia') throw new Error('sm_90 compiles to PTX');
        writeFileSync(join(DEVICE_DIR, k.ptx), r.ptx);
      }
      writeFileSync(MANIFEST, text);
    }
    expect(readFileSync(MANIFEST, 'utf8')).toBe(text);
    for (const k of want.kernels) {
      const file = join(DEVICE_DIR, k.ptx);
      expect(existsSync(file)).toBe(true);
      expect(readFileSync(file, 'utf8')).toContain(`.entry ${k.name}(`);
    }
  });
});
