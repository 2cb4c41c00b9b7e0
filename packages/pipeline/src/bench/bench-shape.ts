import { kernargTable, parseProblem, parseSpec, plan as planConv, problemGeometry, type Problem, type Spec } from '@rocke/conv-direct';
import { GpuRuntimeError, type Device, type DeviceBuffer, type KernelFunction, type Module } from '@rocke/hip-runtime';
import { randomTensor } from '@rocke/reference';
import { KERNARG_TABLE as REDUCE_KERNARGS, SplitReduceSpecSchema, type SplitReduceSpec } from '@rocke/split-reduce';
import type { KernelCache } from '../cache/cache.js';
import { executePlan, loadSpinKernel, preparePlan, timePlan, type PlanBuffers, type TimingOptions } from './execute.js';
import type { ManifestHelper, ManifestShape } from './manifest.js';
import { evenlySpaced, referenceCheck } from './reference-check.js';
import { splitTrials } from '../select/select.js';

/** Verification outcome of one candidate. */
export interface VerifyResult {
  pass: boolean;
  mode: string;
  count: number;
  mismatches: number;
  maxAbs: number;
  maxRel: number;
  worstRatio: number;
}

/** One candidate's outcome on one shape. */
export interface CandidateResult {
  kernelName: string;
  variant: string;
  splits?: number;
  /** split_c: every split count timed (the binary is the same; `splits` is the fastest of them). */
  splitTimes?: { splits: number; medianMs: number }[];
  merge?: number;
  /** Launches per execution of the plan (conv + reduce). */
  launches?: number;
  /** Best candidate of a multi-launch plan: each role's launches timed alone (their sum minus medianMs is what back-to-back launches overlap or lose). */
  roleMs?: { role: 'conv' | 'reduce'; medianMs: number }[];
  medianMs?: number;
  minMs?: number;
  inner?: number;
  /** How the repetitions were timed (see timePlan): `graph` as cudnn_baseline.py times cuDNN. */
  timing?: 'graph' | 'spin' | 'plain';
  /** Set when planning, loading or running failed; such a candidate is never ranked. */
  error?: string;
  /** Set when the bench's time or count cap stopped before this candidate. */
  skipped?: string;
  verify?: VerifyResult;
}

/** One shape's outcome: every candidate, the ranking, the best verified one. */
export interface ShapeResult {
  name: string;
  cls: string | null;
  problem: Problem;
  /** `ok` when a best candidate exists (verified when verification was asked). */
  status: 'ok' | 'failed';
  reason?: string;
  reference?: string;
  candidates: CandidateResult[];
  /** kernelNames of the ranked (timed, error-free, not failed verification) candidates, fastest first. */
  ranking: string[];
  best?: CandidateResult;
  /** The candidate after whose error the GPU context was unusable (the rest of the shape was skipped). */
  contextLostBy?: string;
  notes: string[];
  wallMs: number;
}

/** Options of {@link benchShape}. */
export interface ShapeBenchOptions extends TimingOptions {
  verify: boolean;
  /** Stop timing new candidates after this many (default 40). */
  maxCandidates?: number;
  /** Stop timing new candidates after this much wall time on the shape (default 20 s). */
  budgetMs?: number;
  /** Candidates verified from the top of the ranking until this many pass (default 3). */
  verifyTop?: number;
  /** Further candidates verified, evenly spaced over the rest of the ranking (default 4). */
  verifySample?: number;
  /** Data seed (x uses seed, w seed + 1; default 1). */
  seed?: number;
  /** Run this x and w instead of random data (rocke run). */
  inputs?: { x: Uint16Array; w: Uint16Array };
  /** Read back y of the best candidate (rocke run). */
  keepOutput?: boolean;
  /** false: time without the spin kernel (see timePlan; with graphs it is only the fallback). */
  spinKernel?: boolean;
  /** false: plain launches instead of programmatic dependent ones on sm_90 (see preparePlan). */
  programmatic?: boolean;
  /** Candidates not to run, with the reason (e.g. they killed the GPU context in an earlier process). */
  exclude?: ReadonlyMap<string, string>;
  /** Progress lines (one per candidate). */
  log?: (line: string) => void;
  now?: () => number;
  /** Problems up to this many MACs are checked in full (tests lower it). */
  fullCheckMaxMacs?: number;
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 300);
}

/** Order of the ranking: median time, then kernel name (deterministic ties). */
export function rankCandidates(results: readonly CandidateResult[]): CandidateResult[] {
  return results
    .filter((r) => r.medianMs !== undefined && r.error === undefined && r.verify?.pass !== false)
    .sort((a, b) => a.medianMs! - b.medianMs! || (a.kernelName < b.kernelName ? -1 : a.kernelName > b.kernelName ? 1 : 0));
}

/**
 * Benchmarks one shape on an open device: seeded random x and w (@rocke/reference randomTensor),
 * every manifest candidate in manifest order until the count or time cap (plan, pack, warm up,
 * event timing), then verification against @rocke/reference of the fastest candidates until
 * `verifyTop` pass plus an evenly spaced sample of the rest. A candidate that fails to plan, load
 * or run, or fails verification, is reported and never ranked. With verification on, the best
 * candidate is the fastest one that passed. Device memory and modules are released at the end.
 */
export async function benchShape(
  device: Device,
  shape: ManifestShape,
  helpers: readonly ManifestHelper[],
  blobs: KernelCache,
  options: ShapeBenchOptions,
): Promise<{ result: ShapeResult; y?: Uint16Array }> {
  const now = options.now ?? (() => performance.now());
  const t0 = now();
  const log = options.log ?? (() => {});
  const notes = [...shape.notes];
  const parsed = parseProblem(shape.problem);
  if (!parsed.ok) throw new TypeError(`manifest shape ${shape.name}: ${parsed.reason}`);
  const problem = parsed.problem;
  const base = { name: shape.name, cls: shape.cls, problem, notes };
  if (shape.candidates.length === 0) {
    return { result: { ...base, status: 'failed', reason: `no compiled candidates${notes.length ? ` (${notes.join('; ')})` : ''}`, candidates: [], ranking: [], wallMs: now() - t0 } };
  }
  const g = problemGeometry(problem);
  const seed = options.seed ?? 1;
  const x = options.inputs?.x ?? randomTensor(g.xBytes / 2, problem.dtype, seed);
  const w = options.inputs?.w ?? randomTensor(g.wBytes / 2, problem.dtype, seed + 1);
  const modules = new Map<string, Module>();
  const buffers: PlanBuffers = { x: device.upload(x), w: device.upload(w), y: device.alloc(g.yBytes) };
  const results: CandidateResult[] = [];
  let reduce: { fn: KernelFunction; spec: SplitReduceSpec } | undefined;
  let contextLost: string | undefined;
  let contextLostBy: string | undefined;

  const load = (digest: string, size: number): Module => {
    let m = modules.get(digest);
    if (!m) {
      m = device.loadModule(blobs.readBlob({ digest, size }));
      modules.set(digest, m);
    }
    return m;
  };
  const reduceFor = (): { fn: KernelFunction; spec: SplitReduceSpec } => {
    if (reduce) return reduce;
    const fits = helpers
      .map((h) => ({ h, spec: SplitReduceSpecSchema.safeParse(h.spec) }))
      .filter((c) => c.spec.success && c.spec.data.dtype === problem.dtype)
      .sort((a, b) => (b.spec.data!.vectorWidth - a.spec.data!.vectorWidth)); // widest vectors first
    const pick = fits[0];
    if (!pick) throw new Error(`no split-reduce helper kernel for ${problem.dtype} in the manifest`);
    reduce = { fn: load(pick.h.code.digest, pick.h.code.size).getFunction(pick.h.kernelName, REDUCE_KERNARGS), spec: pick.spec.data! };
    return reduce;
  };
  /** After a runtime error: is the context still usable? CUDA errors such as illegal addresses are sticky. */
  const probeContext = (err: unknown, kernelName: string) => {
    if (!(err instanceof GpuRuntimeError)) return;
    try {
      device.synchronize();
    } catch (e) {
      contextLost = `the GPU context is unusable after ${kernelName}: ${message(err)} (${message(e)})`;
      contextLostBy = kernelName;
    }
  };
  // Host-side plans first: the workspace is allocated once, at the largest split_c plan's size, so
  // the packed views of every prepared plan stay valid until the end.
  const plans = shape.candidates.map((entry) => {
    try {
      const sp = parseSpec(entry.spec);
      if (!sp.ok) throw new TypeError(`bad spec in manifest: ${sp.reason}`);
      const plan = planConv(sp.spec, problem, sp.spec.target);
      // split_c: the planner's count and its neighbours are all timed (splits is a runtime kernarg).
      const trials = sp.spec.variant === 'split_c' ? splitTrials(sp.spec, problem) : [plan.splits];
      const trialPlans = trials.map((s) => (s === plan.splits ? plan : planConv(sp.spec, problem, sp.spec.target, { splits: s! })));
      return { spec: sp.spec, plan, trialPlans };
    } catch (err) {
      return { error: message(err) };
    }
  });
  const wsBytes = Math.max(0, ...plans.flatMap((p) => ('trialPlans' in p && p.trialPlans ? p.trialPlans.map((t) => t.workspaceBytes) : [0])));
  if (wsBytes > 0) buffers.ws = device.alloc(wsBytes);
  const prepare = (spec: Spec, splits: number | undefined, entry: ManifestShape['candidates'][number]) => {
    const fn = load(entry.code.digest, entry.code.size).getFunction(entry.kernelName, kernargTable(spec.variant));
    return preparePlan(spec, problem, fn, buffers, spec.variant === 'split_c' ? reduceFor() : undefined, splits, options.programmatic !== false);
  };

  const spin = options.spinKernel === false ? undefined : loadSpinKernel(device);
  if (!spin && options.spinKernel !== false && device.info.backend === 'cuda') notes.push('the spin kernel did not load: repetitions are timed as the host launches them');
  // Graph timing unless asked not to; after the first capture that cannot be used, the rest of the
  // shape is timed by the fallback (no repeated failing captures; `timing` says which per candidate).
  let graphs = options.graphs !== false;
  const timeOf = (ready: ReturnType<typeof prepare>) => {
    const t = timePlan(device, ready, { ...options, spin, graphs });
    if (t.graphFallback !== undefined && graphs) {
      graphs = false;
      notes.push(`timed with the ${t.method} method instead of a graph: ${t.graphFallback}`);
    }
    return t;
  };
  const maxCandidates = options.maxCandidates ?? 40;
  const budgetMs = options.budgetMs ?? 20_000;
  const prepared = new Map<string, ReturnType<typeof prepare>>();
  try {
    for (const [i, entry] of shape.candidates.entries()) {
      const r: CandidateResult = { kernelName: entry.kernelName, variant: entry.variant };
      results.push(r);
      if (contextLost) {
        r.skipped = contextLost;
        continue;
      }
      const excluded = options.exclude?.get(entry.kernelName);
      if (excluded !== undefined) {
        r.error = `excluded: ${excluded}`;
        continue;
      }
      const timed = results.filter((c) => c.medianMs !== undefined || (c.error !== undefined && !c.error.startsWith('excluded:'))).length;
      if (timed >= maxCandidates || now() - t0 >= budgetMs) {
        r.skipped = timed >= maxCandidates ? `count cap ${maxCandidates}` : `time cap ${Math.round(budgetMs / 1000)} s`;
        continue;
      }
      try {
        const p = plans[i]!;
        if ('error' in p) throw new Error(p.error);
        let fastest: { ready: ReturnType<typeof prepare>; t: ReturnType<typeof timePlan> } | undefined;
        for (const trial of p.trialPlans!) {
          const ready = prepare(p.spec!, trial.splits, entry);
          const t = timeOf(ready);
          if (trial.splits !== undefined) (r.splitTimes ??= []).push({ splits: trial.splits, medianMs: t.medianMs });
          if (!fastest || t.medianMs < fastest.t.medianMs) fastest = { ready, t };
        }
        const { ready, t } = fastest!;
        if (ready.plan.splits !== undefined) r.splits = ready.plan.splits;
        if (p.spec!.variant === 'grouped') r.merge = p.spec!.group_merge;
        r.launches = ready.launches.length;
        Object.assign(r, { medianMs: t.medianMs, minMs: t.minMs, inner: t.inner, timing: t.method });
        prepared.set(entry.kernelName, ready);
        const tried = r.splitTimes && r.splitTimes.length > 1 ? ` (tried ${r.splitTimes.map((s) => `s${s.splits} ${(s.medianMs * 1000).toFixed(1)}`).join(', ')})` : '';
        log(`  [${i + 1}/${shape.candidates.length}] ${(t.medianMs * 1000).toFixed(1).padStart(9)} us  ${entry.kernelName}${r.splits ? ` splits ${r.splits}` : ''}${tried}`);
      } catch (err) {
        r.error = message(err);
        log(`  [${i + 1}/${shape.candidates.length}] error: ${r.error}  ${entry.kernelName}`);
        probeContext(err, entry.kernelName);
      }
    }

    let reference: string | undefined;
    let output: Uint16Array | undefined;
    const runOnce = (kernelName: string): Uint16Array => {
      const ready = prepared.get(kernelName)!;
      buffers.y.fill(0xff); // NaN in fp16 and bf16: a kernel that skips outputs cannot pass on stale results
      executePlan(device, ready);
      device.synchronize();
      return buffers.y.read(new Uint16Array(g.yBytes / 2));
    };
    if (options.verify && !contextLost) {
      const ref = await referenceCheck(problem, x, w, seed + 2, options.fullCheckMaxMacs);
      reference = ref.mode;
      const verifyOne = (r: CandidateResult) => {
        if (r.verify || contextLost) return;
        try {
          const rep = ref.check(runOnce(r.kernelName));
          r.verify = { pass: rep.pass, mode: ref.mode, count: rep.count, mismatches: rep.mismatches, maxAbs: rep.maxAbs, maxRel: rep.maxRel, worstRatio: rep.worstRatio };
          log(`  verify ${rep.pass ? 'PASS' : 'FAIL'} (${ref.mode}, ${rep.mismatches} mismatches, worst ${rep.worstRatio.toPrecision(3)}x tolerance)  ${r.kernelName}`);
        } catch (err) {
          r.error = `verification run failed: ${message(err)}`;
          probeContext(err, r.kernelName);
        }
      };
      const timedOk = rankCandidates(results);
      const top = options.verifyTop ?? 3;
      let passed = 0;
      for (const r of timedOk) {
        if (passed >= top || contextLost) break;
        verifyOne(r);
        if (r.verify?.pass) passed++;
      }
      const rest = timedOk.filter((r) => !r.verify);
      for (const i of evenlySpaced(rest.length, options.verifySample ?? 4)) verifyOne(rest[i]!);
    }
    const ranking = rankCandidates(results);
    const best = options.verify ? ranking.find((r) => r.verify?.pass) : ranking[0];
    if (best && options.keepOutput && !contextLost) output = runOnce(best.kernelName);
    if (best && (best.launches ?? 1) > 1 && !contextLost) {
      const ready = prepared.get(best.kernelName)!;
      try {
        best.roleMs = (['conv', 'reduce'] as const).map((role) => ({ role, medianMs: timeOf({ ...ready, launches: ready.launches.filter((l) => l.role === role) }).medianMs }));
        log(`  best alone: ${best.roleMs.map((x) => `${x.role} ${(x.medianMs * 1000).toFixed(1)} us`).join(', ')}; together ${(best.medianMs! * 1000).toFixed(1)} us`);
      } catch (err) {
        notes.push(`timing the best plan's launches alone failed: ${message(err)}`);
      }
    }
    const failedVerify = results.filter((r) => r.verify && !r.verify.pass).length;
    const reason = best
      ? undefined
      : contextLost ?? (ranking.length ? 'no ranked candidate passed verification' : `no candidate ran (${failedVerify} failed verification, ${results.filter((r) => r.error).length} errors)`);
    const result: ShapeResult = {
      ...base,
      status: best ? 'ok' : 'failed',
      ...(reason ? { reason } : {}),
      ...(reference ? { reference } : {}),
      candidates: results,
      ranking: ranking.map((r) => r.kernelName),
      ...(best ? { best } : {}),
      ...(contextLostBy ? { contextLostBy } : {}),
      wallMs: now() - t0,
    };
    return output ? { result, y: output } : { result };
  } finally {
    // After a lost context these calls fail too; the result must still come back.
    const quietly = (f: () => void) => {
      try {
        f();
      } catch {
        // nothing to release any more
      }
    };
    for (const b of Object.values(buffers)) if (b) quietly(() => b.free());
    for (const m of modules.values()) quietly(() => m.unload());
    if (spin) quietly(() => spin.module.unload());
  }
}
