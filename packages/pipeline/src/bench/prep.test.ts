import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  benchVariants,
  chooseSplits,
  fragmentLoadsPerMma,
  kernelName,
  MAX_SPLIT_TRIALS,
  orderCandidates,
  problemCandidates,
  scoreCandidate,
  selectProblemSpecs,
  spillFilter,
  SPLIT_TRIAL_WINDOW,
  splitOptions,
  splitTrials,
  type Problem,
} from '@rocke/conv-direct';
import { z } from 'zod';
import { KernelCache } from '../cache/cache.js';
import type { Pruner } from '../compile/family.js';
import type { KernelCompiler } from '../compile/llvm-toolchain.js';
import { sha256Hex } from '../hash.js';
import { SPIN_PTX } from './execute.js';
import { manifestFromCache } from './gpu-bench.js';
import { readBenchManifest } from './manifest.js';
import { benchPrep } from './prep.js';
import { convPlanner } from '../cli/wiring.js';

const planner = convPlanner();

const SMALL_MAP: Problem = { N: 1, H: 7, W: 7, C: 512, K: 512, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
const BIG_MAP: Problem = { ...SMALL_MAP, H: 56, W: 56, C: 64, K: 64 };

/** A compiler that returns a fake cubin per kernel (or one shared blob for every kernel when `same`). */
function fakeCompiler(same = false): KernelCompiler & { compiled: number } {
  const c = {
    flavor: 'llvm22',
    compiled: 0,
    fingerprint: async () => 'fake toolchain 1',
    compile: async (ir: string) => {
      c.compiled++;
      const name = /define [^@]*@(\w+)/.exec(ir)?.[1] ?? 'none';
      return { kind: 'cubin' as const, bytes: new TextEncoder().encode(same ? 'one cubin' : `cubin ${name} ${sha256Hex(ir)}`) };
    },
  };
  return c;
}

describe('bench-prep', () => {
  it('picks variants by map size and groups', () => {
    expect(benchVariants(SMALL_MAP)).toEqual(['dense', 'split_c']);
    expect(benchVariants(BIG_MAP)).toEqual(['dense']);
    expect(benchVariants({ ...BIG_MAP, groups: 8 })).toEqual(['grouped']);
    // Depthwise (groups = C, K/C in 1, 2, 4): both kernels are timed, the GPU decides.
    expect(benchVariants({ ...BIG_MAP, groups: BIG_MAP.C })).toEqual(['grouped', 'depthwise']);
    expect(benchVariants({ ...BIG_MAP, groups: BIG_MAP.C, K: 2 * BIG_MAP.C })).toEqual(['grouped', 'depthwise']);
    expect(benchVariants({ ...BIG_MAP, groups: BIG_MAP.C, K: 3 * BIG_MAP.C })).toEqual(['grouped']);
  });

  it('orders depthwise candidates (no measured rows) by the roofline cost model and keeps them whole', () => {
    const dw = { ...BIG_MAP, groups: BIG_MAP.C, K: BIG_MAP.C };
    const valid = problemCandidates(dw, 'sm_90', { variant: 'depthwise' }).valid;
    expect(valid.length).toBeGreaterThan(0);
    const ordered = orderCandidates(valid, dw);
    expect(ordered).toHaveLength(valid.length);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i - 1]!.score.predictedUs).toBeLessThanOrEqual(ordered[i]!.score.predictedUs);
    expect(ordered[0]!.score.cost.facts.atomClass).toBe('fma');
  });

  it('orders candidates deterministically by predicted time, caps them, and drops likely spillers', () => {
    const valid = problemCandidates(SMALL_MAP, 'sm_90').valid;
    const all = orderCandidates(valid, SMALL_MAP);
    expect(all.length).toBe(spillFilter(valid).kept.length);
    for (let i = 1; i < all.length; i++) {
      const a = all[i - 1]!.score;
      const b = all[i]!.score;
      expect(a.predictedUs < b.predictedUs || (a.predictedUs === b.predictedUs && a.kernelName < b.kernelName)).toBe(true);
    }
    const capped = orderCandidates([...valid].reverse(), SMALL_MAP, { cap: 16 });
    expect(capped.map((c) => c.score.kernelName)).toEqual(all.slice(0, 16).map((c) => c.score.kernelName));
    // Each position carries its reasons: the cost's terms.
    expect(capped[0]!.score.reason).toMatch(/^[\d.]+ us predicted \(mma [\d.]+, stage [\d.]+, loads [\d.]+, lds [\d.]+, store [\d.]+, dram [\d.]+, latency [\d.]+, launch [\d.]+ us; \d+ workgroups/);
  });

  it('counts LDS fragment loads per MMA: a one-row wave band re-reads R input rows per output row', () => {
    const base = problemCandidates(BIG_MAP, 'sm_90').valid[0]!;
    // 16x16x64, waves 2x4: 4 rows per wave, 2 column blocks, 2 m tiles: (6*2 + 3*2) / (3*2*4*2).
    const tall = { ...base, tile_h: 16, tile_w: 16, tile_k: 64, waves_m: 2, waves_n: 4 };
    expect(fragmentLoadsPerMma(tall)).toBeCloseTo(18 / 48, 12);
    // Same tile, waves 1x8: 2 rows per wave, 4 m tiles: (4*2 + 3*4) / (3*4*2*2).
    const wide = { ...tall, waves_m: 1, waves_n: 8 };
    expect(fragmentLoadsPerMma(wide)).toBeCloseTo(20 / 48, 12);
    // Fewer fragment loads, fewer LDS bytes read: a lower LDS term.
    expect(scoreCandidate(tall, BIG_MAP).cost.terms.lds).toBeLessThan(scoreCandidate(wide, BIG_MAP).cost.terms.lds);
  });

  it('scores tile waste and grid fill: a 7x7 map wastes most of a 16x16 tile', () => {
    const valid = problemCandidates(SMALL_MAP, 'sm_90').valid;
    const t16 = valid.find((s) => s.tile_h === 16 && s.tile_w === 16)!;
    const t8 = valid.find((s) => s.tile_h === 8 && s.tile_w === 16 && s.tile_k === t16.tile_k && s.ck === t16.ck)!;
    // Useful FLOPs over FLOPs computed: the spatial padding (channels are whole here).
    expect(scoreCandidate(t16, SMALL_MAP).cost.facts.tileUtilization).toBeCloseTo(49 / 256, 12);
    expect(scoreCandidate(t8, SMALL_MAP).cost.facts.tileUtilization).toBeCloseTo(49 / 128, 12);
    const split = problemCandidates(SMALL_MAP, 'sm_90', { variant: 'split_c' }).valid[0]!;
    expect(scoreCandidate(split, SMALL_MAP).splits).toBeGreaterThan(1);
  });

  it('puts 128B-swizzled wgmma specs (ck 64) ahead of the same tile unswizzled: the atom class carries its own fitted MMA rate', () => {
    const dense = { ...SMALL_MAP, N: 4, H: 64, W: 64, C: 640, K: 640 };
    const valid = problemCandidates(dense, 'sm_90').valid;
    const wg = (ck: number) => valid.find((s) => s.atom === 'm64nNk16' && s.tile_h === 16 && s.tile_w === 16 && s.tile_k === 64 && s.waves_m === 1 && s.waves_n === 1 && s.ck === ck)!;
    expect(scoreCandidate(wg(64), dense).cost.facts.atomClass).toBe('wgmma');
    expect(scoreCandidate(wg(32), dense).cost.facts.atomClass).toBe('wgmma-unswizzled');
    expect(scoreCandidate(wg(64), dense).cost.terms.mma).toBeLessThan(scoreCandidate(wg(32), dense).cost.terms.mma);
    const order = orderCandidates(valid.filter((s) => s.atom === 'm64nNk16'), dense).map((o) => o.spec.ck);
    expect(order[0]).toBe(64);
  });

  it('builds a manifest from a cache holding more than the cap with the selection\'s order', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-prep-'));
    const cache = new KernelCache(join(root, 'cache'));
    const problems = [{ name: 'sm', problem: SMALL_MAP, cls: 'small-map' }];
    await benchPrep({ planner, problems, target: 'sm_90', outDir: join(root, 'kernels'), cache, compiler: fakeCompiler(), pruner: null, cap: 12, jobs: 2 });
    const fromCache = manifestFromCache(planner, cache, problems, 'sm_90', 4);
    const [selected] = selectProblemSpecs(problems, 'sm_90', { cap: 4 });
    const names = selected!.variants.flatMap((v) => v.specs.map(kernelName));
    // The same 4 kernels bench-prep picks, in predicted order.
    expect(fromCache.shapes[0]!.candidates.map((c) => c.kernelName).sort()).toEqual([...names].sort());
    const times = fromCache.shapes[0]!.candidates.map((c) => c.score);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('with --epilogue: the same selection compiled fused (split_c bare, its helpers fused), recorded in the manifest', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-prep-'));
    const problems = [{ name: 'sm', problem: SMALL_MAP, cls: 'small-map' }];
    const epilogue = { act: 'silu', bias: 'fp32', residual: true } as const;
    const bare = await benchPrep({ planner, problems, target: 'sm_90', outDir: join(root, 'bare'), cache: new KernelCache(join(root, 'cache')), compiler: fakeCompiler(), pruner: null, cap: 4, jobs: 2 });
    const fused = await benchPrep({ planner, problems, target: 'sm_90', outDir: join(root, 'fused'), cache: new KernelCache(join(root, 'cache')), compiler: fakeCompiler(), pruner: null, cap: 4, jobs: 2, epilogue });
    expect(fused.manifest.epilogue).toEqual(epilogue);
    expect(bare.manifest.epilogue).toBeUndefined();
    const strip = (spec: Record<string, unknown>) => kernelName({ ...spec, epilogue: undefined } as never);
    // Same tiles in the same order; dense fused at its store, split_c bare (its reduce fuses).
    expect(fused.manifest.shapes[0]!.candidates.map((c) => strip(c.spec))).toEqual(bare.manifest.shapes[0]!.candidates.map((c) => c.kernelName));
    for (const c of fused.manifest.shapes[0]!.candidates) expect((c.spec as { epilogue?: unknown }).epilogue).toEqual(c.variant === 'split_c' ? undefined : epilogue);
    expect(fused.manifest.helpers.map((h) => h.kernelName).every((n) => n.endsWith('_epsilu_b32_res'))).toBe(true);
    expect(fused.manifest.helpers).toHaveLength(4);
  });

  it('back-fills the cap: a capped kernel pruned for spills is replaced by the next of the ranking', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-prep-'));
    const problems = [{ name: 'sm', problem: SMALL_MAP, cls: 'small-map' }];
    const [sel] = selectProblemSpecs(problems, 'sm_90', { cap: 4 });
    const selected = sel!.variants.flatMap((v) => v.specs.map(kernelName));
    const spills = selected.slice(0, 2);
    const pruner: Pruner<null> = {
      factsSchema: z.null(),
      facts: () => null,
      prune: (entries) => entries.filter((e) => spills.includes(e.kernelName)).map((e) => ({ id: e.id, reason: 'spills', detail: 'scratch' })),
    };
    const r = await benchPrep({ planner, problems, target: 'sm_90', outDir: join(root, 'kernels'), cache: new KernelCache(join(root, 'cache')), compiler: fakeCompiler(), pruner, cap: 4, jobs: 2 });
    const shape = r.manifest.shapes[0]!;
    // Four usable kernels: the two selected ones that do not spill, then the next two of the ranking.
    const next = sel!.backfill.slice(0, 2).map((b) => kernelName(b.spec));
    expect(shape.candidates.map((c) => c.kernelName)).toEqual([...selected.slice(2), ...next]);
    expect(shape.notes).toContain('2 candidate(s) after the cap of 4 back-filled for kernels that failed to compile or were pruned (4 usable)');
    for (const name of spills) expect(shape.notes).toContain(`${name}: pruned: spills`);
    expect(r.compile.pruned).toHaveLength(2);
  });

  it('keeps only the variants asked for, with the whole cap', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-prep-'));
    const dw = { ...BIG_MAP, groups: BIG_MAP.C };
    const r = await benchPrep({ planner, problems: [{ name: 'dw', problem: dw, cls: 'depthwise' }], target: 'sm_90', outDir: join(root, 'kernels'), cache: new KernelCache(join(root, 'cache')), compiler: fakeCompiler(), pruner: null, cap: 3, variants: ['depthwise'], jobs: 2 });
    expect(r.manifest.shapes[0]!.candidates.map((c) => c.variant)).toEqual(['depthwise', 'depthwise', 'depthwise']);
  });

  it('compiles each shape\'s capped candidates through the cache and exports deduplicated blobs with a manifest', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rocke-prep-'));
    const cache = new KernelCache(join(root, 'cache'));
    const outDir = join(root, 'kernels');
    const problems = [
      { name: 'sm', problem: SMALL_MAP, cls: 'small-map' },
      { name: 'g', problem: { ...BIG_MAP, H: 8, W: 8, groups: 8 }, cls: 'grouped' },
    ];
    const compiler = fakeCompiler();
    const r = await benchPrep({ planner, problems, target: 'sm_90', outDir, cache, compiler, pruner: null, cap: 4, jobs: 2 });
    const m = readBenchManifest(outDir)!;
    expect(m).toEqual(r.manifest);
    const sm = m.shapes[0]!;
    // Cap 4 over 2 variants: each keeps its first by predicted time, the rest go to the lowest predictions of either.
    expect(new Set(sm.candidates.map((c) => c.variant))).toEqual(new Set(['dense', 'split_c']));
    const [sel] = selectProblemSpecs([problems[0]!], 'sm_90', { cap: 4 });
    expect(sm.candidates.map((c) => c.kernelName)).toEqual(sel!.variants.flatMap((v) => v.specs.map(kernelName)));
    for (const c of sm.candidates) expect(c.kernelName).toBe(kernelName(c.spec as never));
    // conv-direct builds grouped kernels, so the grouped shape gets its own capped candidates.
    expect(m.shapes[1]!.candidates.map((c) => c.variant)).toEqual(['grouped', 'grouped', 'grouped', 'grouped']);
    expect(m.helpers.map((h) => (h.spec as { dtype: string }).dtype).sort()).toEqual(['bf16', 'bf16', 'fp16', 'fp16']);
    // Every referenced blob is in the kernels directory and reads back by digest.
    const blobs = new KernelCache(outDir);
    for (const c of [...m.shapes.flatMap((s) => s.candidates), ...m.helpers]) expect(new TextDecoder().decode(blobs.readBlob(c.code))).toMatch(/^cubin /);
    expect(r.blobs).toBe(new Set([...m.shapes.flatMap((s) => s.candidates), ...m.helpers].map((c) => c.code.digest)).size);
    // Without a manifest, bench builds one from the compile cache: the same compiled candidates.
    const fromCache = manifestFromCache(planner, cache, problems, 'sm_90', 4);
    expect(fromCache.shapes[0]!.candidates.map((c) => c.kernelName).sort()).toEqual(sm.candidates.map((c) => c.kernelName).sort());
    expect(fromCache.shapes[0]!.candidates.map((c) => c.code.digest).sort()).toEqual(sm.candidates.map((c) => c.code.digest).sort());
    expect(fromCache.helpers).toHaveLength(4);
    // A second run compiles nothing (the cache is up to date).
    const again = fakeCompiler();
    await benchPrep({ planner, problems, target: 'sm_90', outDir, cache, compiler: again, pruner: null, cap: 4, jobs: 2 });
    expect(again.compiled).toBe(0);
    // A kernel-builder edit keeps the emitter label (the packages' version): the IR check still
    // rebuilds the entry whose IR changed, so the bench never times a stale cubin.
    const stale = cache.listEntries().entries.find((e) => e.kernelName === sm.candidates[0]!.kernelName)!;
    cache.putEntry({ ...stale, ir: cache.putBlob('; IR of an older kernel builder') });
    const rebuilt = fakeCompiler();
    await benchPrep({ planner, problems, target: 'sm_90', outDir, cache, compiler: rebuilt, pruner: null, cap: 4, jobs: 2 });
    expect(rebuilt.compiled).toBe(1);
    // Identical code objects are stored once, and blobs no longer referenced are removed.
    const same = fakeCompiler(true);
    const r3 = await benchPrep({ planner, problems: problems.slice(0, 1), target: 'sm_90', outDir, cache: new KernelCache(join(root, 'cache2')), compiler: same, pruner: null, cap: 2, jobs: 2 });
    expect(r3.blobs).toBe(1);
    expect(readdirSync(join(outDir, 'blobs')).flatMap((d) => readdirSync(join(outDir, 'blobs', d)))).toHaveLength(1);
  }, 120_000);
});

describe('timing spin kernel', () => {
  const ptxas = spawnSync('ptxas', ['--version']).status === 0;
  it.skipIf(!ptxas)('its PTX assembles for sm_90 with ptxas (the driver JIT compiles the same text on the device)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rocke-spin-'));
    writeFileSync(join(dir, 'spin.ptx'), SPIN_PTX);
    const r = spawnSync('ptxas', ['-arch=sm_90', '-v', join(dir, 'spin.ptx'), '-o', join(dir, 'spin.cubin')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("Compiling entry function 'rocke_spin' for 'sm_90'");
  });
});

describe('splitTrials', () => {
  const WIDE: Problem = { ...SMALL_MAP, N: 4, H: 8, W: 8, C: 1280, K: 1280 };
  it("times the planner's split count (the cost model's) first, then the feasible counts from a quarter to eight times it, nearest ratio first", () => {
    const specs = problemCandidates(WIDE, 'sm_90', { variant: 'split_c' }).valid;
    const spec = specs.find((s) => s.ck === 64 && s.tile_k === 32)!;
    expect(spec).toBeDefined();
    const feasible = splitOptions(spec, WIDE).map((o) => o.splits);
    // C/ck = 20 chunks; uneven slices too, the smallest count per longest slice (3: 7 + 7 + 6 chunks; 6 would leave 4 as 5 does).
    expect(feasible).toEqual([1, 2, 3, 4, 5, 7, 10, 20]);
    const chosen = chooseSplits(spec, WIDE).splits;
    const trials = splitTrials(spec, WIDE);
    expect(trials[0]).toBe(chosen);
    const distance = (s: number) => Math.abs(Math.log(s / chosen));
    const rest = feasible.filter((s) => s !== chosen && s * 4 >= chosen && s <= chosen * 8).sort((a, b) => distance(a) - distance(b) || a - b);
    expect(trials.slice(1)).toEqual(rest.slice(0, MAX_SPLIT_TRIALS - 1));
    // ck 16 on a 7x7 map: 32 slices would leave one 16-channel chunk per workgroup.
    const deep = problemCandidates(SMALL_MAP, 'sm_90', { variant: 'split_c' }).valid.find((s) => s.ck === 16)!;
    expect(splitOptions(deep, SMALL_MAP).map((o) => o.splits)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32]);
    expect(splitTrials(deep, SMALL_MAP)[0]).toBe(chooseSplits(deep, SMALL_MAP).splits);
  });
  it('stays within the feasible counts, without duplicates, for every split_c candidate', () => {
    for (const p of [WIDE, SMALL_MAP]) {
      for (const spec of problemCandidates(p, 'sm_90', { variant: 'split_c' }).valid.slice(0, 30)) {
        const t = splitTrials(spec, p);
        const feasible = splitOptions(spec, p).map((o) => o.splits);
        expect(t[0]).toBe(chooseSplits(spec, p).splits);
        expect(new Set(t).size).toBe(t.length);
        expect(t.length).toBeLessThanOrEqual(MAX_SPLIT_TRIALS);
        for (const s of t) expect(feasible).toContain(s);
        for (const s of t.slice(1)) expect(s * SPLIT_TRIAL_WINDOW.below >= t[0]! && s <= t[0]! * SPLIT_TRIAL_WINDOW.above).toBe(true);
      }
    }
  });
});
