// Test helper: a kernels directory (bench manifest + blobs) of a small conv problem with fake
// kernel bodies for hip-runtime's fake binding, and the tuning record a tune would write for it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kernelName, problemCandidates, withEpilogue, type Problem, type Spec } from '@rocke/conv-direct';
import type { Epilogue } from '@rocke/ir';
import type { FakeKernel } from '@rocke/hip-runtime/testing';
import { helperSpecs, kernelName as reduceName } from '@rocke/split-reduce';
import { problemJson } from '../api/kernel-source.js';
import { fakeConvKernel, fakeReduceKernel } from './fake-kernels.js';
import { BENCH_MANIFEST, parseBenchManifest, type BenchManifest } from '../bench/manifest.js';
import { KernelCache } from '../cache/cache.js';
import { recordKey, RECORD_SCHEMA_VERSION, type TuningRecord } from '../cache/records.js';

export const PROBLEM: Problem = { N: 2, H: 6, W: 6, C: 32, K: 16, R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dilationH: 1, dilationW: 1, groups: 1, dtype: 'bf16' };
export const BAKED = { R: 3, S: 3, strideH: 1, strideW: 1, padH: 1, padW: 1, dtype: 'bf16' as const };

/**
 * Fake bodies (hip-runtime's fake binding) of the kernels of {@link kernelsDir}: the dense ones (the
 * one named `broken` writes wrong values; fused with `epilogue`, forgetting the bias with
 * `dropBias`), the split_c one, the helpers (fused with `epilogue`), and the bench's timing spin
 * kernel (no body: it only delays the stream).
 */
export function fakeKernels(dense: readonly Spec[], split: Spec, broken?: string, epilogue?: Epilogue, dropBias = false): Record<string, FakeKernel | null> {
  const kernels: Record<string, FakeKernel | null> = { rocke_spin: null };
  for (const s of dense) kernels[kernelName(s)] = fakeConvKernel('dense', BAKED, kernelName(s) === broken ? 8 : 0, epilogue, dropBias);
  kernels[kernelName(split)] = fakeConvKernel('split_c', BAKED);
  for (const h of helperSpecs('sm_90')) kernels[reduceName(epilogue ? { ...h, epilogue } : h)] = fakeReduceKernel(h.dtype, epilogue);
  return kernels;
}

/**
 * A kernels directory (bench manifest + blobs) with two dense and one split_c candidate, plus the
 * helpers; with `epilogue`, compiled fused as bench-prep --epilogue does (dense at the store, split_c
 * bare with fused helpers), and `dropBias` makes the fused kernels forget the bias.
 */
export function kernelsDir(broken?: string, epilogue?: Epilogue, dropBias = false): { dir: string; dense: [Spec, Spec]; split: Spec; manifest: BenchManifest; kernels: Record<string, FakeKernel | null> } {
  const dir = mkdtempSync(join(tmpdir(), 'rocke-open-conv-'));
  const blobs = new KernelCache(dir).ensure();
  const dense = problemCandidates(PROBLEM, 'sm_90').valid.slice(0, 2).map((s) => withEpilogue(s, epilogue)) as [Spec, Spec];
  const split = problemCandidates(PROBLEM, 'sm_90', { variant: 'split_c' }).valid[0]!;
  const code = (text: string) => ({ ...blobs.putBlob(text), kind: 'cubin' as const });
  const candidates = [...dense, split].map((spec) => ({ kernelName: kernelName(spec), variant: spec.variant, spec: { ...spec }, code: code(`cubin of ${kernelName(spec)}`), score: 1 }));
  const helperList = helperSpecs('sm_90').map((h) => (epilogue ? { ...h, epilogue } : h));
  const helpers = helperList.map((spec) => ({ kernelName: reduceName(spec), spec: { ...spec }, code: code(`cubin of ${reduceName(spec)}`) }));
  const manifest = parseBenchManifest({
    format: 1, target: 'sm_90', cap: 40, toolchain: 'test',
    shapes: [{ name: 'small', cls: 'small-map', problem: { ...PROBLEM }, candidates, available: { dense: 2, split_c: 1 }, notes: [] }],
    helpers,
    ...(epilogue ? { epilogue } : {}),
  });
  writeFileSync(join(dir, BENCH_MANIFEST), JSON.stringify(manifest));
  return { dir, dense, split, manifest, kernels: fakeKernels(dense, split, broken, epilogue, dropBias) };
}

/** The record a tune would write for PROBLEM choosing `spec`. */
export function recordFor(spec: Spec, splits?: number): TuningRecord {
  const problem = problemJson(PROBLEM);
  return {
    schema: RECORD_SCHEMA_VERSION,
    key: recordKey('direct_fwd', 'sm_90', problem),
    family: 'direct_fwd',
    arch: 'sm_90',
    problem,
    choice: { kernelName: kernelName(spec), spec: { ...spec }, launch: splits === undefined ? {} : { splits }, code: null },
    timeMs: 0.01,
    runnersUp: [],
    verified: { mode: 'full' },
    device: { name: 'fake device', driver: '13000' },
    toolchain: 'test',
    date: '2026-12-03T00:00:00.000Z',
  };
}

