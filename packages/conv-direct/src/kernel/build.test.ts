import { printModule, sm_90 } from '@rocke/ir';
import { describe, expect, it } from 'vitest';
import { kernargTable } from '../abi.js';
import { aotCandidates } from '../candidates.js';
import { plan } from '../plan.js';
import { kernelName, specGeometry } from '../spec.js';
import { residency } from '../residency.js';
import { registerEstimate } from '../spill.js';
import { gfx950Spec, problem3x3, sm90Spec, wgmmaSpec } from '../test-fixtures.js';
import { buildConvKernel, ConvKernelError, irAtomName, SENTINEL_OFFSET, weightSwizzle } from './build.js';

/** Instructions of the blocks whose name starts with `prefix` (the channel loop body and its guarded tails). */
function blockText(text: string, prefix: string): string {
  const out: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (/^\S.*:$/.test(line)) inside = line.startsWith(prefix);
    else if (line.startsWith('}')) inside = false;
    else if (inside) out.push(line);
  }
  return out.join('\n');
}

describe('buildConvKernel', () => {
  it('names the kernel after the spec and takes the ABI table as parameters', () => {
    for (const spec of [gfx950Spec(), sm90Spec({ double_buffer: true }), gfx950Spec({ variant: 'split_c' }), gfx950Spec({ variant: 'grouped', group_merge: 2 })]) {
      const k = buildConvKernel(spec);
      expect(k.name).toBe(kernelName(spec));
      const fn = k.module.getFunction(k.name)!;
      expect(fn.args.map((a) => a.name)).toEqual(kernargTable(spec.variant).map((e) => e.name));
      expect(fn.args.map((a) => (a.type.kind === 'ptr' ? 'ptr' : 'i32'))).toEqual(kernargTable(spec.variant).map((e) => e.type));
      expect(k.abi).toBe(kernargTable(spec.variant));
    }
  });

  it('agrees with plan() on block size and dynamic shared memory', () => {
    for (const spec of [gfx950Spec(), sm90Spec({ double_buffer: true, tile_w: 16 })]) {
      const k = buildConvKernel(spec);
      const l = plan(spec, problem3x3(), spec.target).launches[0]!;
      expect(l.block).toEqual([k.threads, 1, 1]);
      expect(l.sharedBytes).toBe(k.dynamicSharedBytes);
      expect(k.dynamicSharedBytes).toBe(specGeometry(spec).ldsBytes);
      expect(l.kernelName).toBe(k.name);
      // Dynamic LDS only: nothing static that would add to the launch's dynamic bytes.
      expect(printModule(k.module)).toMatch(/@lds = external addrspace\(3\) global \[0 x i8\], align 16/);
    }
  });

  it('lowers per target: MFMA + buffer loads on AMD, mma.sync + ldmatrix + cp.async on sm_90', () => {
    const amd = buildConvKernel(gfx950Spec());
    expect([amd.schedule, amd.fragmentLoad, amd.weightLayout]).toEqual(['register-prefetch', 'vector', 'fragment']);
    const amdText = printModule(amd.module);
    expect(amdText).toContain('@llvm.amdgcn.mfma.f32.32x32x16.bf16');
    expect(amdText).toContain('@llvm.amdgcn.raw.ptr.buffer.load.v8bf16');
    expect(amdText).toContain('call void @llvm.amdgcn.iglp.opt(i32 0)');
    expect(amdText).toContain('"amdgpu-flat-work-group-size"="256,256"');
    const nv = buildConvKernel(sm90Spec({ double_buffer: true }));
    expect([nv.schedule, nv.fragmentLoad, nv.weightLayout]).toEqual(['async-copy', 'ldmatrix', 'swizzled-rows']);
    const nvText = printModule(nv.module);
    expect(nvText).toContain('@llvm.nvvm.mma.m16n8k16.row.col.bf16');
    expect(nvText).toContain('@llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3');
    expect(nvText).toContain('@llvm.nvvm.cp.async.cg.shared.global.16.s');
    expect(nvText).not.toContain('amdgcn');
    expect(buildConvKernel(sm90Spec()).schedule).toBe('register-prefetch');
    expect(printModule(buildConvKernel(gfx950Spec({ waves_per_eu: 3, iglp: null })).module)).toMatch(/"amdgpu-waves-per-eu"="3"/);
  });

  it('keeps compares and selects out of the AMD channel loop (sentinel offsets are hoisted)', () => {
    // Even staging passes: the loop body is one straight-line block of loads, LDS stores, barriers and MFMAs.
    const spec = gfx950Spec({ R: 1, S: 1, pad_h: 0, pad_w: 0 });
    const g = specGeometry(spec);
    expect([g.xVectors % g.threads, g.wSlots % g.threads]).toEqual([0, 0]);
    const body = blockText(printModule(buildConvKernel(spec).module), 'chunk.body');
    expect(body).toContain('mfma');
    expect(body).not.toMatch(/ = (icmp|select) /);
    expect(printModule(buildConvKernel(spec).module)).toContain(`i32 ${SENTINEL_OFFSET}`);
  });

  it('emits one MMA per atom tile, tap and k-atom of each wave per chunk', () => {
    for (const spec of [gfx950Spec(), gfx950Spec({ R: 5, S: 5, pad_h: 2, pad_w: 2, atom: '16x16x32', tile_w: 16 }), sm90Spec({ double_buffer: true })]) {
      const g = specGeometry(spec);
      const per = g.mTilesPerWave * g.nTilesPerWave * spec.R * spec.S * g.kAtoms;
      // MMAs appear only in the channel loop, once per chunk (cp.async: the last chunk is peeled, see below).
      const k = buildConvKernel(spec);
      const calls = printModule(k.module).match(/call [^@]*@llvm\.(amdgcn\.mfma|nvvm\.mma)\./g) ?? [];
      expect(calls.length).toBe(k.schedule === 'async-copy' ? 2 * per : per);
    }
  });

  it('sm_90 cp.async: the last chunk is peeled, so no copy is issued past the last channel chunk', () => {
    const spec = sm90Spec({ double_buffer: true });
    const g = specGeometry(spec);
    const per = g.mTilesPerWave * g.nTilesPerWave * spec.R * spec.S * g.kAtoms;
    const text = printModule(buildConvKernel(spec).module);
    const copies = (t: string) => (t.match(/call void @llvm\.nvvm\.cp\.async\.cg\.shared\.global\.16\.s\(/g) ?? []).length;
    const mmas = (t: string) => (t.match(/call [^@]*@llvm\.nvvm\.mma\./g) ?? []).length;
    // The loop (copy chunk i+1 while multiplying chunk i) runs trips-1 times...
    expect(text).toMatch(/%chunk\.last = sub i32 %chunks, 1/);
    expect(text).toMatch(/%chunk\.cond = icmp slt i32 %chunk\.iv, %chunk\.last/);
    expect(mmas(text)).toBe(2 * per);
    // ...and its exit multiplies the last chunk behind a wait and a barrier, with no copy at all.
    const tail = blockText(text, 'chunk.exit');
    expect(mmas(tail)).toBe(per);
    expect(copies(tail)).toBe(0);
    expect(tail).toContain('barrier');
    expect(tail.indexOf('cp.async.wait.group')).toBeLessThan(tail.indexOf('nvvm.mma'));
  });

  it('sm_90: tells ptxas one block per SM (.minnctapersm 1) exactly when shared memory admits only one', () => {
    const big = sm90Spec({ double_buffer: true, tile_h: 16, tile_w: 16, tile_k: 64, ck: 32, waves_m: 2, waves_n: 4 });
    const small = sm90Spec({ double_buffer: true, tile_h: 16, tile_w: 16, tile_k: 64, ck: 16, waves_m: 2, waves_n: 4 });
    expect(residency(big).limits.shared).toBe(1);
    expect(residency(small).limits.shared).toBeGreaterThan(1);
    expect(printModule(buildConvKernel(big).module)).toContain('"nvvm.minctasm"="1"');
    expect(printModule(buildConvKernel(small).module)).not.toContain('nvvm.minctasm');
    const amd = gfx950Spec({ tile_k: 128 });
    expect(residency(amd).limits.shared).toBe(1);
    expect(printModule(buildConvKernel(amd).module)).not.toContain('nvvm.minctasm');
  });

  it('sm_90a warpgroup MMA: descriptors into core-matrix LDS, cp.async, the staged store, sized as plan() launches it', () => {
    const spec = wgmmaSpec({ tile_h: 16, tile_k: 128, ck: 32, waves_n: 2 });
    const k = buildConvKernel(spec);
    expect([k.schedule, k.fragmentLoad, k.weightLayout, k.epilogue]).toEqual(['async-copy', 'descriptor', 'core-matrix', 'lds-staged']);
    const l = plan(spec, problem3x3({ C: 64, K: 128 }), 'sm_90').launches[0]!;
    expect([l.block, l.sharedBytes, l.kernelName]).toEqual([[k.threads, 1, 1], k.dynamicSharedBytes, k.name]);
    expect([k.threads, k.dynamicSharedBytes]).toEqual([256, specGeometry(spec).ldsBytes]);
    const text = printModule(k.module);
    // wgmma descriptors need the shared window 16-byte aligned; the kernel asks for 128.
    expect(text).toMatch(/@lds = external addrspace\(3\) global \[0 x i8\], align 128/);
    expect(text).not.toMatch(/nvvm\.mma\.|ldmatrix|amdgcn/);
    // One loop body (no peeled chunk: copies past the end zero-fill from the sentinel): one m64n128k16
    // per m-block of the warpgroup (1), tap (9) and 16 channels (2).
    const mmas = text.match(/wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16/g) ?? [];
    expect(mmas.length).toBe(1 * 9 * 2);
    expect(text).not.toMatch(/wgmma\.mma_async\.sync\.aligned\.m64n(?!128k16)/);
    for (const op of ['@llvm.nvvm.wgmma.fence.sync.aligned', '@llvm.nvvm.wgmma.commit_group.sync.aligned', '@llvm.nvvm.wgmma.wait_group.sync.aligned', '@llvm.nvvm.fence.proxy.async.shared_cta', '@llvm.nvvm.cp.async.cg.shared.global.16.s']) {
      expect(text).toContain(op);
    }
    // N per warpgroup follows waves_m: 64 channels over 2 warpgroups is m64n32k16, fp16.
    expect(printModule(buildConvKernel(wgmmaSpec({ dtype: 'fp16', waves_m: 2 })).module)).toContain('wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16');
  });

  it('sm_90: every conv waits for the grid ahead before its first global access, then lets the next grid launch; AMD has neither', () => {
    for (const spec of [sm90Spec({ double_buffer: true }), sm90Spec({ variant: 'split_c' }), sm90Spec({ variant: 'grouped', group_merge: 2 }), wgmmaSpec(), wgmmaSpec({ variant: 'split_c' })]) {
      const printed = printModule(buildConvKernel(spec).module);
      const text = printed.slice(printed.indexOf('define ')); // the kernel body, not the declarations
      const wait = text.indexOf('call void @llvm.nvvm.griddepcontrol.wait()');
      expect(wait, kernelName(spec)).toBeGreaterThan(0);
      expect(wait).toBeLessThan(text.indexOf('call void @llvm.nvvm.griddepcontrol.launch.dependents()'));
      expect(wait).toBeLessThan(text.search(/call void @llvm\.nvvm\.cp\.async\.cg|= load |\bstore /));
    }
    expect(printModule(buildConvKernel(gfx950Spec({ variant: 'split_c' })).module)).not.toContain('griddepcontrol');
  });

  it('refuses a warpgroup-MMA spec on a target object without warpgroup MMA', () => {
    expect(() => buildConvKernel(wgmmaSpec(), { target: { ...sm_90, warpgroupMma: undefined } })).toThrow(/sm_90 has no warpgroup MMA with cp\.async staging; m64nNk16 needs sm_90a/);
    expect(() => buildConvKernel(wgmmaSpec({ lds_pad: 8 }))).toThrow(/take no pad/);
  });

  it('refuses invalid specs with the validation reason', () => {
    expect(() => buildConvKernel(gfx950Spec({ tile_w: 48 }))).toThrow(ConvKernelError);
    expect(() => buildConvKernel(gfx950Spec({ tile_w: 48 }))).toThrow(/tile_w 48 is not a multiple of the atom's N 32/);
    expect(() => buildConvKernel(gfx950Spec({ ck: 0 }))).toThrow(/ck must be >= 1/);
    expect(() => buildConvKernel(gfx950Spec(), { target: sm_90 })).toThrow(/spec targets gfx950 but the target object is sm_90/);
  });

  it('maps host atom names to @rocke/ir atoms', () => {
    expect(irAtomName(gfx950Spec())).toBe('32x32x16.bf16');
    expect(irAtomName(gfx950Spec({ target: 'gfx942', atom: '16x16x16', dtype: 'fp16' }))).toBe('16x16x16.f16');
    expect(irAtomName(sm90Spec())).toBe('16x8x16.bf16');
  });

  it('weight swizzle: 8 consecutive rows read the same logical chunk from 8 distinct 16-byte bank groups', () => {
    for (const chunksPerRow of [2, 4, 8]) {
      for (let base = 0; base < 64; base += 8) {
        for (let c = 0; c < chunksPerRow; c++) {
          const groups = new Set(Array.from({ length: 8 }, (_, r) => ((base + r) * chunksPerRow + (c ^ weightSwizzle(base + r, chunksPerRow))) % 8));
          expect(groups.size).toBe(8);
        }
      }
    }
  });

  it('the register estimate carries no prefetch registers under cp.async double buffering', () => {
    expect(registerEstimate(sm90Spec({ double_buffer: true })).prefetch).toBe(0);
    expect(registerEstimate(sm90Spec()).prefetch).toBeGreaterThan(0);
    expect(registerEstimate(gfx950Spec({ double_buffer: true })).prefetch).toBeGreaterThan(0);
  });
});

describe('AOT grids', () => {
  it.each(['gfx950', 'gfx942', 'sm_90'] as const)('%s: a spread of every variant\'s AOT candidates builds, with the ABI of its variant', (target) => {
    for (const variant of ['dense', 'split_c', 'grouped'] as const) {
      const specs = aotCandidates(target, 'bf16', variant).valid;
      const step = variant === 'grouped' ? 13 : 5;
      for (let i = 0; i < specs.length; i += step) {
        const k = buildConvKernel(specs[i]!);
        expect(k.module.getFunction(k.name)!.args).toHaveLength(kernargTable(variant).length);
      }
    }
  });
});
