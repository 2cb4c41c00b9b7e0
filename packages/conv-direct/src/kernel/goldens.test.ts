/**
 * IR goldens: SHA-256 of each golden config's emitted text per LLVM flavor, checked against
 * goldens.json, and the full text of SNAPSHOT_CONFIGS checked against goldens-ll/<flavor>/<name>.ll
 * so a re-bless shows the IR diff (update both with
 * `ROCKE_UPDATE_GOLDENS=1 npx vitest run src/kernel/goldens.test.ts`).
 * Every golden config also compiles with LLVM 22 for its target; where the register heuristic
 * predicts no spill, the code object must report none (warpgroup-MMA configs: never, and ptxas must
 * report no spills; pointwise and tap-folded configs are all predicted spill-free).
 */
import { join } from 'node:path';
import { checkGoldens, checkGoldenSnapshots, compile, printModule, type GoldenCase } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { kernelName } from '../spec.js';
import { spillReason } from '../spill.js';
import { validate } from '../validate.js';
import { wholeMapLayout } from '../whole-map.js';
import { buildConvKernel } from './build.js';
import { amdNotes } from './test-code-object.js';
import { GOLDEN_CONFIGS } from './golden-configs.js';

const goldenFile = join(import.meta.dirname, 'goldens.json');
const snapshotDir = join(import.meta.dirname, 'goldens-ll');

/**
 * Configs whose whole IR is kept as a reviewable snapshot: both AMD targets and both AMD atom
 * families, dense, split_c and grouped, and a warpgroup-MMA sm_90 kernel. The mma.sync sm_90
 * kernels (0.5 to 1.4 MB of fully unrolled IR each) are pinned by digest only.
 */
const SNAPSHOT_CONFIGS = ['gfx950-base-bf16', 'gfx950-1x1-p0', 'gfx950-split-c', 'gfx942-16x16x16-fp16-uneven', 'gfx942-grouped-gm4-fp16', 'sm90a-wgmma-fp16-stride2-t8x16x64-w2x2'];

describe('golden configs', () => {
  it('are valid, distinct kernels covering every atom, target, dtype, stride, filter size and tail', () => {
    const specs = GOLDEN_CONFIGS.map((c) => c.spec);
    for (const s of specs) expect(validate(s)).toEqual({ ok: true });
    expect(new Set(specs.map(kernelName)).size).toBe(specs.length);
    expect(new Set(specs.map((s) => `${s.target}/${s.atom}`))).toEqual(new Set(['gfx950/32x32x16', 'gfx950/16x16x32', 'gfx942/32x32x8', 'gfx942/16x16x16', 'sm_90/m16n8k16', 'sm_90/m64nNk16']));
    const wgmma = specs.filter((s) => s.atom === 'm64nNk16');
    expect([new Set(wgmma.map((s) => s.variant)), new Set(wgmma.map((s) => s.dtype)), new Set(wgmma.map((s) => s.stride_h))]).toEqual([new Set(['dense', 'split_c', 'pointwise']), new Set(['bf16', 'fp16']), new Set([1, 2])]);
    expect(wgmma.some((s) => s.c_tail === 8 && s.k_tail)).toBe(true);
    expect(new Set(wgmma.filter((s) => s.whole_map).map((s) => s.variant))).toEqual(new Set(['dense', 'split_c']));
    expect(new Set(specs.map((s) => s.dtype))).toEqual(new Set(['bf16', 'fp16']));
    expect(new Set(specs.map((s) => s.stride_h))).toEqual(new Set([1, 2, 3, 4]));
    expect(new Set(specs.map((s) => s.R))).toEqual(new Set([1, 2, 3, 4, 5, 7]));
    // The per-tap weight ring in both operand layouts (core-matrix planes, 128B-swizzled rows).
    expect(new Set(wgmma.filter((s) => s.weight_ring).map((s) => s.ck === 64))).toEqual(new Set([true, false]));
    expect(new Set(specs.map((s) => s.c_tail))).toEqual(new Set([0, 1, 8]));
    expect(specs.some((s) => s.k_tail) && specs.some((s) => s.dilation_h === 2)).toBe(true);
    expect(new Set(specs.map((s) => s.double_buffer))).toEqual(new Set([true, false]));
    expect(new Set(specs.map((s) => s.variant))).toEqual(new Set(['dense', 'split_c', 'grouped', 'pointwise']));
    const pointwise = specs.filter((s) => s.variant === 'pointwise');
    expect([new Set(pointwise.map((s) => `${s.target}/${s.atom}`)).size, new Set(pointwise.map((s) => s.stride_h))]).toEqual([5, new Set([1, 2])]);
    for (const s of pointwise) expect(spillReason(s), kernelName(s)).toBeNull();
    // Tap-folded configs: every target, and none predicted to spill (so the compile test below checks the code objects report none).
    const folded = specs.filter((s) => s.fold_s);
    expect(new Set(folded.map((s) => s.target))).toEqual(new Set(['gfx950', 'gfx942', 'sm_90']));
    for (const s of folded) expect(spillReason(s), kernelName(s)).toBeNull();
    // Direct-to-LDS weights: gfx950 dense and pointwise (with tails), none predicted to spill.
    const dma = specs.filter((s) => s.lds_dma);
    expect([new Set(dma.map((s) => s.target)), new Set(dma.map((s) => s.variant)), dma.some((s) => s.c_tail !== 0)]).toEqual([new Set(['gfx950']), new Set(['dense', 'pointwise']), true]);
    for (const s of dma) expect(spillReason(s), kernelName(s)).toBeNull();
    expect(new Set(specs.filter((s) => s.variant === 'grouped').map((s) => s.target))).toEqual(new Set(['gfx950', 'gfx942', 'sm_90']));
    expect(specs.some((s) => s.waves_per_eu === 3) && specs.some((s) => s.iglp === 1) && specs.some((s) => !s.chiplet_swizzle && s.target !== 'sm_90')).toBe(true);
  });

  it('emit IR whose SHA-256 matches goldens.json (llvm22)', () => {
    const cases: GoldenCase[] = GOLDEN_CONFIGS.map((c) => {
      const k = buildConvKernel(c.spec);
      return { name: c.name, flavor: k.target.flavor, text: printModule(k.module) };
    });
    const report = checkGoldens(cases, goldenFile);
    expect(report.added.length + report.removed.length + report.changed.length === 0 || report.updated).toBe(true);
    const snapshots = cases.filter((c) => SNAPSHOT_CONFIGS.includes(c.name));
    expect(snapshots.map((c) => c.name).sort()).toEqual([...SNAPSHOT_CONFIGS].sort());
    checkGoldenSnapshots(snapshots, snapshotDir);
  });

  it('emit the same bytes when built twice', () => {
    const c = GOLDEN_CONFIGS[12]!;
    expect(printModule(buildConvKernel(c.spec).module)).toBe(printModule(buildConvKernel(c.spec).module));
  });

  it.each(GOLDEN_CONFIGS.map((c) => [c.name, c.spec] as const))('%s compiles with LLVM 22, without spills where the heuristic predicts none', async (_, spec) => {
    const k = buildConvKernel(spec);
    const r = await compile(printModule(k.module), k.target);
    const predictedSpill = spillReason(spec);
    if (r.vendor === 'amd') {
      const notes = amdNotes(r.object);
      expect(notes.vgpr_count).toBeGreaterThan(0);
      if (predictedSpill === null) {
        expect(notes.vgpr_spill_count).toBe(0);
        expect(notes.sgpr_spill_count).toBe(0);
        expect(notes.private_segment_fixed_size).toBe(0);
      }
    } else if (k.fragmentLoad === 'descriptor') {
      // sm_90a warpgroup MMA: one m64nNk16 shape (N = tile_k / waves_m; whole-map tiles: each pixel run), operands from shared memory only.
      const dt = spec.dtype === 'bf16' ? 'bf16' : 'f16';
      expect(r.ptx).toContain(`.entry ${k.name}(`);
      expect(r.ptx).toMatch(/^\.target sm_90a\b/m);
      const shapes = spec.whole_map ? wholeMapLayout(spec).runs : [spec.tile_k / spec.waves_m];
      for (const n of shapes) expect(r.ptx).toContain(`wgmma.mma_async.sync.aligned.m64n${n}k16.f32.${dt}.${dt}`);
      for (const op of ['wgmma.fence.sync.aligned;', 'wgmma.commit_group.sync.aligned;', 'fence.proxy.async.shared::cta;']) expect(r.ptx).toContain(op);
      expect(r.ptx).toMatch(/wgmma\.wait_group\.sync\.aligned\s+0;/);
      expect(r.ptx).toMatch(/cp\.async\.cg\.shared\.global/);
      expect(r.ptx).not.toMatch(/mma\.sync|ldmatrix/);
      expect(predictedSpill).toBeNull();
      expect(r.ptxasLog).toMatch(/\b0 bytes spill stores, 0 bytes spill loads/);
      // ptxas warns when it has to serialize the wgmma pipeline (e.g. accumulators it cannot keep in place).
      expect(r.ptxasLog).not.toMatch(/serializ/i);
    } else {
      expect(r.ptx).toContain(`.entry ${k.name}(`);
      expect(r.ptx).toMatch(/mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.(bf16|f16)\.(bf16|f16)\.f32/);
      expect(r.ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
      if (k.schedule === 'async-copy') expect(r.ptx).toMatch(/cp\.async\.cg\.shared\.global/);
      if (r.ptxasLog !== undefined && predictedSpill === null) expect(r.ptxasLog).toMatch(/\b0 bytes spill stores, 0 bytes spill loads/);
    }
  });
});
