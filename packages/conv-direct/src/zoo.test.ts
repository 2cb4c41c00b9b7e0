/**
 * Coverage of real networks: every conv layer of test-data/zoo-public.json (ResNet-50,
 * MobileNetV3-Large, ConvNeXt-T at 224x224, N = 1 and 32) has at least one valid candidate on
 * gfx950, gfx942 and sm_90, and the first one builds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GridMemo, problemCandidates } from './candidates.js';
import { problemCoverage } from './coverage.js';
import { buildConvKernel } from './kernel/build.js';
import type { Problem } from './problem.js';
import { problem3x3 } from './test-fixtures.js';
import { TARGET_NAMES } from './targets.js';
import { benchVariants } from './selection.js';
import { SpecSchema } from './spec.js';

interface ZooShape {
  readonly name: string;
  readonly N: number;
  readonly C: number;
  readonly H: number;
  readonly W: number;
  readonly K: number;
  readonly R: number;
  readonly S: number;
  readonly stride: number;
  readonly pad: number;
  readonly groups: number;
  readonly dtype: 'bf16' | 'fp16';
}

const zoo = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'test-data', 'zoo-public.json'), 'utf8')) as { shapes: ZooShape[] };
const problemOf = (s: ZooShape): Problem => ({
  N: s.N,
  H: s.H,
  W: s.W,
  C: s.C,
  K: s.K,
  R: s.R,
  S: s.S,
  strideH: s.stride,
  strideW: s.stride,
  padH: s.pad,
  padW: s.pad,
  dilationH: 1,
  dilationW: 1,
  groups: s.groups,
  dtype: s.dtype,
});

describe('zoo-public: every layer has a kernel', () => {
  it('holds the three networks at N = 1 and 32', () => {
    expect(zoo.shapes.length).toBe(150);
    expect(new Set(zoo.shapes.map((s) => s.N))).toEqual(new Set([1, 32]));
  });

  it.each(TARGET_NAMES.map((t) => [t] as const))('%s: at least one valid candidate for every shape', (target) => {
    const uncovered = zoo.shapes.map((s) => ({ name: s.name, ...problemCoverage(problemOf(s), target) })).filter((c) => c.valid === 0);
    expect(uncovered).toEqual([]);
  });

  // problemCandidates marks the grid's specs as schema-checked without reading the schema (they are
  // built field by field here); this holds the grid to that, over every grid each layer reaches.
  it.each(TARGET_NAMES.map((t) => [t] as const))('%s: every spec the grid offers a layer reads back through the strict schema', (target) => {
    // Grids shared between the layers (GridMemo): a spec object they share is read once.
    const grids = new GridMemo();
    const seen = new Set<object>();
    for (const s of zoo.shapes.filter((z) => z.N === 1)) {
      for (const variant of benchVariants(problemOf(s))) {
        const set = problemCandidates(problemOf(s), target, { variant, grids });
        for (const spec of [...set.valid, ...set.rejected.map((r) => r.spec)]) {
          if (seen.has(spec)) continue;
          seen.add(spec);
          const r = SpecSchema.safeParse(spec);
          expect(r.success && r.data, `${s.name} ${variant}`).toEqual(spec);
        }
      }
    }
  });

  it.each(TARGET_NAMES.map((t) => [t] as const))('%s: the first candidate of every N = 1 layer builds', (target) => {
    for (const s of zoo.shapes.filter((z) => z.N === 1)) {
      const spec = problemCandidates(problemOf(s), target).valid[0]!;
      expect(() => buildConvKernel(spec), `${s.name}`).not.toThrow();
    }
  });
});

describe('problemCoverage on the general shapes', () => {
  it('counts valid candidates for tails, stems and dilation, and names the decisive rule past stride 4', () => {
    for (const p of [problem3x3({ C: 40, K: 24 }), problem3x3({ C: 3, R: 7, S: 7, strideH: 2, strideW: 2, padH: 3, padW: 3 }), problem3x3({ dilationH: 2, dilationW: 2, padH: 2, padW: 2 })]) {
      for (const t of TARGET_NAMES) expect(problemCoverage(p, t).valid, `${t} C ${p.C}`).toBeGreaterThan(0);
    }
    const c = problemCoverage(problem3x3({ strideH: 5, strideW: 5, H: 40, W: 40 }), 'sm_90');
    expect(c.valid).toBe(0);
    expect(c.reason).toMatch(/stride 5x5 is not supported \(each stride must be 1 to 4\)/);
  });
});

describe('dilated and stride-4 depthwise-like problems', () => {
  it('go to the grouped kernel, which serves them on every target', () => {
    const dw = problem3x3({ C: 32, K: 32, groups: 32, dilationH: 2, dilationW: 2, padH: 2, padW: 2 });
    const s4 = problem3x3({ C: 32, K: 32, groups: 32, R: 4, S: 4, strideH: 4, strideW: 4, padH: 0, padW: 0 });
    for (const p of [dw, s4]) {
      for (const t of TARGET_NAMES) {
        const c = problemCoverage(p, t);
        expect([c.variant, c.valid > 0], t).toEqual(['grouped', true]);
      }
    }
  });
});
