// Bundle self-test, for the machine without a GPU (bundled by device/prep.sh next to the CLI):
//   node .device/bundle/dist/rocke-selftest.mjs .device/bundle/kernels
// Runs the GPU bench code of this bundle (manifest → blobs by digest → plan → packed kernargs →
// launches in stream order → event timing → verification against @rocke/reference) over the real
// manifest, on hip-runtime's fake binding whose kernel bodies compute the conv / fold in
// JavaScript from the packed arguments. Each shape is shrunk (N 1, H and W at most 5; dense and
// split_c: C at most 128, K at most 64; grouped keeps its channels) so the JavaScript stays quick.
// Times printed are the fake's, not measurements.
import { parseProblem, parseSpec, type Problem } from '@rocke/conv-direct';
import { openDevice } from '@rocke/hip-runtime';
import { createFakeBinding, type FakeKernel } from '@rocke/hip-runtime/testing';
import { KernelCache } from '../cache/cache.js';
import { benchShape } from '../bench/bench-shape.js';
import { readBenchManifest, type ManifestShape } from '../bench/manifest.js';
import { fakeConvKernel, fakeReduceKernel } from './fake-kernels.js';
import { convPlanner } from '../cli/wiring.js';

const dir = process.argv[2];
const perVariant = Number(process.argv[3] ?? 2);
if (!dir) {
  process.stderr.write('usage: rocke-selftest KERNELS_DIR [candidates per variant = 2]\n');
  process.exit(2);
}
const manifest = readBenchManifest(dir);
if (!manifest) {
  process.stderr.write(`no bench manifest in ${dir}\n`);
  process.exit(2);
}
const kernels: Record<string, FakeKernel> = {};
for (const s of manifest.shapes) {
  for (const c of s.candidates) {
    const sp = parseSpec(c.spec);
    if (!sp.ok) throw new Error(`${c.kernelName}: ${sp.reason}`);
    const { R, S, stride_h, stride_w, pad_h, pad_w, dtype } = sp.spec;
    kernels[c.kernelName] = fakeConvKernel(sp.spec.variant, { R, S, strideH: stride_h, strideW: stride_w, padH: pad_h, padW: pad_w, dtype });
  }
}
for (const h of manifest.helpers) kernels[h.kernelName] = fakeReduceKernel((h.spec as { dtype: 'fp16' | 'bf16' }).dtype);
kernels['rocke_spin'] = () => {}; // the timing spin kernel (the fallback when graphs cannot be captured) only delays the stream
const binding = createFakeBinding({ kernels, devices: [{ name: 'fake sm_90 (self-test)', arch: manifest.target, computeUnits: 132 }] });
const device = openDevice({ binding });
const blobs = new KernelCache(dir);
let failures = 0;
for (const shape of manifest.shapes) {
  const r = parseProblem(shape.problem);
  if (!r.ok) throw new Error(`${shape.name}: ${r.reason}`);
  const p = r.problem;
  const grouped = p.groups > 1;
  const small: Problem = { ...p, N: 1, H: Math.min(p.H, 5), W: Math.min(p.W, 5), C: grouped ? p.C : Math.min(p.C, 128), K: grouped ? p.K : Math.min(p.K, 64) };
  const seen = new Map<string, number>();
  const candidates = shape.candidates.filter((c) => {
    const n = seen.get(c.variant) ?? 0;
    seen.set(c.variant, n + 1);
    return n < perVariant;
  });
  const reduced: ManifestShape = { ...shape, problem: { ...small }, candidates };
  const { result } = await benchShape(convPlanner(), device, reduced, manifest.helpers, blobs, { verify: true, warmup: 0, iters: 1, targetRepMs: 0.001, maxInner: 1, verifySample: 0 });
  const bad = result.candidates.filter((c) => c.error || (c.verify && !c.verify.pass));
  const verified = result.candidates.filter((c) => c.verify?.pass).length;
  if (result.status !== 'ok' || bad.length) failures++;
  const detail = bad.map((c) => `${c.kernelName}: ${c.error ?? 'verify FAIL'}`).join('; ');
  process.stdout.write(
    `${result.status === 'ok' && !bad.length ? 'PASS' : 'FAIL'} ${shape.name} (shrunk to N${small.N} ${small.H}x${small.W} C${small.C} K${small.K} g${small.groups}): ` +
      `${candidates.length} candidate(s), ${verified} verified (${result.reference ?? 'no reference'})` +
      `${result.best?.splits ? `, split_c best uses ${result.best.splits} splits` : ''}${result.reason ? `, ${result.reason}` : ''}${detail ? `, ${detail}` : ''}\n`,
  );
}
const count = (p: (name: string) => boolean) => binding.launches.filter((l) => p(l.name)).length;
const spins = count((n) => n === 'rocke_spin');
const reduces = count((n) => n.startsWith('rocke_split_reduce'));
const graphLaunches = binding.calls.filter((c) => c === 'launchGraph').length;
process.stdout.write(`${failures ? 'FAIL' : 'PASS'}: ${manifest.shapes.length} shapes, fake launches: ${binding.launches.length - spins - reduces} conv, ${reduces} split-reduce, ${spins} timing spin, ${graphLaunches} timing graph launches\n`);
device.close();
process.exitCode = failures ? 1 : 0;
