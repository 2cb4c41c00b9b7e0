/**
 * Depthwise IR goldens: SHA-256 of each depthwise golden config's emitted text, checked against
 * depthwise-goldens.json (update with `ROCKE_UPDATE_GOLDENS=1 npx vitest run src/kernel/depthwise-goldens.test.ts`).
 * Every config compiles with LLVM 22 for its target with no spills (AMD: the code object's
 * metadata; sm_90: ptxas), as f32 FMAs with no MMA (packed v_pk_fma_f32 on AMD; cp.async halo staging on sm_90).
 */
import { join } from 'node:path';
import { checkGoldens, compile, disassemble, printModule } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { kernelName } from '../spec.js';
import { spillReason } from '../spill.js';
import { validate } from '../validate.js';
import { buildConvKernel } from './build.js';
import { DEPTHWISE_GOLDEN_CONFIGS } from './golden-configs.js';
import { amdNotes } from './test-code-object.js';

const goldenFile = join(import.meta.dirname, 'depthwise-goldens.json');

describe('depthwise golden configs', () => {
  it('are valid, distinct and cover every target, filter size, both strides, every multiplier and both dtypes', () => {
    const specs = DEPTHWISE_GOLDEN_CONFIGS.map((c) => c.spec);
    for (const s of specs) expect(validate(s)).toEqual({ ok: true });
    expect(new Set(specs.map(kernelName)).size).toBe(specs.length);
    expect(new Set(specs.map((s) => s.target))).toEqual(new Set(['gfx950', 'gfx942', 'sm_90']));
    expect(new Set(specs.map((s) => s.R))).toEqual(new Set([3, 5, 7]));
    expect(new Set(specs.map((s) => s.stride_h))).toEqual(new Set([1, 2]));
    expect(new Set(specs.map((s) => s.ck))).toEqual(new Set([8, 4, 2]));
    expect(new Set(specs.map((s) => s.dtype))).toEqual(new Set(['bf16', 'fp16']));
  });

  it('emit IR whose SHA-256 matches depthwise-goldens.json (llvm22)', () => {
    const cases = DEPTHWISE_GOLDEN_CONFIGS.map((c) => {
      const k = buildConvKernel(c.spec);
      return { name: c.name, flavor: k.target.flavor, text: printModule(k.module) };
    });
    const report = checkGoldens(cases, goldenFile);
    expect(report.added.length + report.removed.length + report.changed.length === 0 || report.updated).toBe(true);
  });

  it.each(DEPTHWISE_GOLDEN_CONFIGS.map((c) => [c.name, c.spec] as const))('%s compiles with LLVM 22 as FMAs, without spills', async (_, spec) => {
    expect(spillReason(spec)).toBeNull();
    const k = buildConvKernel(spec);
    const text = printModule(k.module);
    expect(text).toMatch(/@llvm\.fma\.v2f32/);
    expect(text).not.toMatch(/mfma|wmma|mma\.sync|wgmma/);
    const r = await compile(text, k.target);
    if (r.vendor === 'amd') {
      const notes = amdNotes(r.object);
      expect(notes.vgpr_count).toBeGreaterThan(0);
      expect(notes.vgpr_spill_count).toBe(0);
      expect(notes.sgpr_spill_count).toBe(0);
      expect(notes.private_segment_fixed_size).toBe(0);
      expect(await disassemble(r.object, k.target)).toMatch(/v_pk_fma_f32/);
    } else {
      expect(r.ptx).toContain(`.entry ${k.name}(`);
      expect(r.ptx).toMatch(/fma\.rn\.f32/);
      expect(r.ptx).not.toMatch(/mma|ldmatrix/);
      // The halo is staged by 16-byte async copies (whole channel vectors), all in flight at once.
      expect(r.ptx).toMatch(/cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16, %r\w+;/);
      if (r.ptxasLog !== undefined) expect(r.ptxasLog).toMatch(/\b0 bytes spill stores, 0 bytes spill loads/);
    }
  });
});
