import type { Epilogue } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { aotCandidates, problemCandidates } from '../candidates.js';
import type { Problem } from '../problem.js';
import { kernelName, VARIANTS, withEpilogue, type Spec } from '../spec.js';
import { TARGET_NAMES } from '../targets.js';
import { GOLDEN_CONFIGS } from '../kernel/golden-configs.js';
import { specFromKernelName } from './spec-from-name.js';

/** Every activation, bias kind and residual at least once (underscored activations too). */
const EPILOGUES: readonly Epilogue[] = [
  { act: 'silu', bias: 'fp32', residual: true },
  { act: 'leaky_relu', bias: 'none', residual: false },
  { act: 'hard_swish', bias: 'dtype', residual: true },
  { act: 'none', bias: 'fp32', residual: false },
  { act: 'relu', bias: 'none', residual: true },
  { act: 'relu6', bias: 'dtype', residual: false },
  { act: 'gelu', bias: 'fp32', residual: false },
  { act: 'sigmoid', bias: 'none', residual: false },
  { act: 'clamp', bias: 'dtype', residual: true },
];

function expectRoundTrip(spec: Spec): void {
  const r = specFromKernelName(kernelName(spec));
  if (!r.ok || JSON.stringify(r.spec) !== JSON.stringify(spec)) expect(r.ok && r.spec, kernelName(spec)).toEqual(spec);
}

describe('specFromKernelName over every name conv-direct builds', () => {
  it('reads back every spec of the AOT grid of every target, bare and with a fused epilogue (each epilogue on a share of the grid)', () => {
    // One dtype: the other only changes the dtype tag (the problem grid below is fp16).
    let fused = 0;
    let n = 0;
    for (const target of TARGET_NAMES) {
      for (const variant of VARIANTS) {
        for (const spec of aotCandidates(target, 'bf16', variant).valid) {
          expectRoundTrip(spec);
          const withEp = withEpilogue(spec, EPILOGUES[n++ % EPILOGUES.length]);
          if (withEp.epilogue) fused++;
          expectRoundTrip(withEp);
        }
      }
    }
    expect(n).toBeGreaterThan(10_000);
    expect(fused).toBeGreaterThan(5_000);
  }, 120_000);

  it("reads back the problem grid's own fields (dilation, tails, whole-map tiles, tile_n, depthwise, pointwise)", () => {
    const base: Problem = { N: 4, H: 7, W: 7, C: 72, K: 40, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'fp16' };
    const problems: Problem[] = [base, { ...base, dilationH: 2, dilationW: 2, padH: 2, padW: 2 }, { ...base, C: 64, K: 64, groups: 64 }, { ...base, R: 1, S: 1, padH: 0, padW: 0, C: 64, K: 128 }, { ...base, N: 32, H: 4, W: 4 }];
    const seen = new Set<string>();
    for (const problem of problems) {
      for (const variant of VARIANTS) {
        for (const spec of problemCandidates(problem, 'sm_90', { variant }).valid) {
          seen.add(spec.variant);
          expectRoundTrip(spec);
          expectRoundTrip(withEpilogue(spec, EPILOGUES[0]));
        }
      }
    }
    expect([...seen].sort()).toEqual([...VARIANTS].sort());
  });

  it('reads back tap-folded and direct-to-LDS specs (gfx950 problem grids)', () => {
    const stem: Problem = { N: 2, H: 16, W: 16, C: 3, K: 32, R: 7, S: 7, strideH: 2, strideW: 2, padH: 3, padW: 3, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
    const pw: Problem = { ...stem, C: 64, K: 64, R: 1, S: 1, strideH: 1, strideW: 1, padH: 0, padW: 0 };
    const specs = [...problemCandidates(stem, 'gfx950').valid, ...problemCandidates(pw, 'gfx950').valid].filter((s) => s.fold_s || s.lds_dma);
    expect([specs.some((s) => s.fold_s), specs.some((s) => s.lds_dma)]).toEqual([true, true]);
    for (const spec of specs) expectRoundTrip(spec);
  });

  it('reads back streaming pointwise specs (st tag), bare and fused', () => {
    for (const c of GOLDEN_CONFIGS.filter((g) => g.spec.stream)) {
      expect(specFromKernelName(kernelName(c.spec))).toEqual({ ok: true, spec: c.spec });
      const { epilogue: _, ...bare } = c.spec;
      expect(specFromKernelName(kernelName(bare))).toEqual({ ok: true, spec: bare });
    }
  });

  it('refuses a bare epilogue written out and an unknown activation', () => {
    const spec = aotCandidates('sm_90', 'bf16', 'dense').valid[0]!;
    expect(specFromKernelName(`${kernelName(spec)}_epnone`).ok).toBe(false);
    expect(specFromKernelName(`${kernelName(spec)}_epswish`).ok).toBe(false);
  });
});
