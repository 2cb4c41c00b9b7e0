import { GpuRuntimeError, type Device, type KernelFunction, type Module } from '@rocke/hip-runtime';
import { randomTensor } from '@rocke/reference';
import type { Epilogue } from '@rocke/ir';
import { benchEpilogueData } from './epilogue.js';
import type { KernelCache } from '../cache/cache.js';
import { executePlan, loadSpinKernel, preparePlan, timePlan, type PlanBuffers, type PlanTiming, type ReadyPlan, type TimingOptions } from './execute.js';
import type { ManifestHelper, ManifestShape } from './manifest.js';
import type { OpPlanner, OpProblem, PlannedSequence, ReferenceCheck } from '../planner.js';
import { evenlySpaced, FULL_CHECK_MAX_MACS } from './reference-check.js';

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
  problem: OpProblem;
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
  /** The GPU it ran on (set by the bench's device loop). */
  device?: { name: string; arch: string; driver: string };
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
  /** false: plain launches instead of programmatic dependent ones where the target has them (see preparePlan). */
  programmatic?: boolean;
  /** Candidates not to run, with the reason (e.g. they killed the GPU context in an earlier process). */
  exclude?: ReadonlyMap<string, string>;
  /** Progress lines (one per candidate). */
  log?: (line: string) => void;
  now?: () => number;
  /** Problems up to this many MACs are checked in full (tests lower it). */
  fullCheckMaxMacs?: number;
  /** The manifest's fused epilogue: its buffers are bound, its scalars planned, the reference applies it. */
  epilogue?: Epilogue;
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

type ManifestCandidate = ManifestShape['candidates'][number];

/** A candidate planned once: the launch sequence of each launch parameter to time, and what its result reports beside the time. */
type CandidatePlan = ReturnType<OpPlanner['trials']> | { error: string };

/** Plans every candidate up front, once, as the planner's `trials` lists its launch sequences. */
function planCandidates(planner: OpPlanner, shape: ManifestShape, problem: OpProblem, helpers: readonly ManifestHelper[], epilogue: Epilogue | undefined): CandidatePlan[] {
  return shape.candidates.map((entry) => {
    try {
      return planner.trials(entry.spec, problem, helpers, epilogue);
    } catch (err) {
      return { error: message(err) };
    }
  });
}

/**
 * The device state of one shape's bench: data buffers, loaded modules, the timing method in use,
 * and whether the GPU context is still usable. `close` releases everything, even after a lost context.
 */
class ShapeSession {
  readonly modules = new Map<string, Module>();
  readonly buffers: PlanBuffers;
  readonly spin: ReturnType<typeof loadSpinKernel>;
  /** Set when a runtime error left the context unusable: the rest of the shape is skipped. */
  contextLost: string | undefined;
  contextLostBy: string | undefined;
  private graphs: boolean;
  private reduceFn: KernelFunction | undefined;

  constructor(
    readonly device: Device,
    private readonly blobs: KernelCache,
    private readonly helper: ManifestHelper | undefined,
    private readonly options: ShapeBenchOptions,
    readonly notes: string[],
    data: { x: Uint16Array; w: Uint16Array; yBytes: number; wsBytes: number; bias?: Float32Array | Uint16Array; residual?: Uint16Array },
  ) {
    this.buffers = { x: device.upload(data.x), w: device.upload(data.w), y: device.alloc(data.yBytes) };
    if (data.bias) this.buffers.bias = device.upload(data.bias);
    if (data.residual) this.buffers.residual = device.upload(data.residual);
    // Allocated once, at the largest plan's size, so every prepared plan's packed views stay valid.
    if (data.wsBytes > 0) this.buffers.ws = device.alloc(data.wsBytes);
    this.spin = options.spinKernel === false ? undefined : loadSpinKernel(device);
    if (!this.spin && options.spinKernel !== false && device.info.backend === 'cuda') notes.push('the spin kernel did not load: repetitions are timed as the host launches them');
    this.graphs = options.graphs !== false;
  }

  private load(digest: string, size: number): Module {
    let m = this.modules.get(digest);
    if (!m) {
      m = this.device.loadModule(this.blobs.readBlob({ digest, size }));
      this.modules.set(digest, m);
    }
    return m;
  }

  /** Loads the candidate's kernel (and the split-reduce helper when the sequence has reduce launches) and packs the launches. */
  prepare(entry: ManifestCandidate, sequence: PlannedSequence): ReadyPlan {
    const conv = this.load(entry.code.digest, entry.code.size).getFunction(entry.kernelName, sequence.launches[0]!.signature);
    const reduceLaunch = sequence.launches.find((l) => l.role === 'reduce');
    if (reduceLaunch && !this.reduceFn && this.helper) this.reduceFn = this.load(this.helper.code.digest, this.helper.code.size).getFunction(this.helper.kernelName, reduceLaunch.signature);
    return preparePlan(sequence, { conv, reduce: this.reduceFn }, this.buffers, this.options.programmatic !== false);
  }

  /**
   * Times a plan: a graph unless asked not to; after the first capture that cannot be used, the
   * rest of the shape is timed by the fallback (no repeated failing captures).
   */
  time(ready: ReadyPlan): PlanTiming {
    const t = timePlan(this.device, ready, { ...this.options, spin: this.spin, graphs: this.graphs });
    if (t.graphFallback !== undefined && this.graphs) {
      this.graphs = false;
      this.notes.push(`timed with the ${t.method} method instead of a graph: ${t.graphFallback}`);
    }
    return t;
  }

  /** Runs a plan once over a NaN-filled y and reads y back. */
  runOnce(ready: ReadyPlan, yElements: number): Uint16Array {
    this.buffers.y.fill(0xff); // NaN in fp16 and bf16: a kernel that skips outputs cannot pass on stale results
    executePlan(this.device, ready);
    this.device.synchronize();
    return this.buffers.y.read(new Uint16Array(yElements));
  }

  /** After a runtime error: is the context still usable? CUDA errors such as illegal addresses are sticky. */
  probeContext(err: unknown, kernelName: string): void {
    if (!(err instanceof GpuRuntimeError)) return;
    try {
      this.device.synchronize();
    } catch (e) {
      this.contextLost = `the GPU context is unusable after ${kernelName}: ${message(err)} (${message(e)})`;
      this.contextLostBy = kernelName;
    }
  }

  close(): void {
    // After a lost context these calls fail too; the result must still come back.
    const quietly = (f: () => void) => {
      try {
        f();
      } catch {
        // nothing to release any more
      }
    };
    for (const b of Object.values(this.buffers)) if (b) quietly(() => b.free());
    for (const m of this.modules.values()) quietly(() => m.unload());
    if (this.spin) quietly(() => this.spin!.module.unload());
  }
}

/** Why a candidate is not timed (context lost, excluded, count or time cap), else undefined. */
function skipReason(session: ShapeSession, entry: ManifestCandidate, results: readonly CandidateResult[], options: ShapeBenchOptions, elapsedMs: number): Pick<CandidateResult, 'skipped' | 'error'> | undefined {
  if (session.contextLost) return { skipped: session.contextLost };
  const excluded = options.exclude?.get(entry.kernelName);
  if (excluded !== undefined) return { error: `excluded: ${excluded}` };
  const maxCandidates = options.maxCandidates ?? 40;
  const budgetMs = options.budgetMs ?? 20_000;
  const timed = results.filter((c) => c.medianMs !== undefined || (c.error !== undefined && !c.error.startsWith('excluded:'))).length;
  if (timed >= maxCandidates) return { skipped: `count cap ${maxCandidates}` };
  if (elapsedMs >= budgetMs) return { skipped: `time cap ${Math.round(budgetMs / 1000)} s` };
  return undefined;
}

/** Times one planned candidate: every trial split count, keeping the fastest. */
function timeCandidate(session: ShapeSession, entry: ManifestCandidate, plan: CandidatePlan, r: CandidateResult): ReadyPlan {
  if ('error' in plan) throw new Error(plan.error);
  let fastest: { ready: ReadyPlan; t: PlanTiming } | undefined;
  for (const trial of plan.trials) {
    const ready = session.prepare(entry, trial);
    const t = session.time(ready);
    if (trial.plan.splits !== undefined) (r.splitTimes ??= []).push({ splits: trial.plan.splits, medianMs: t.medianMs });
    if (!fastest || t.medianMs < fastest.t.medianMs) fastest = { ready, t };
  }
  const { ready, t } = fastest!;
  if (ready.plan.splits !== undefined) r.splits = ready.plan.splits;
  if (plan.report.merge !== undefined) r.merge = plan.report.merge;
  r.launches = ready.launches.length;
  Object.assign(r, { medianMs: t.medianMs, minMs: t.minMs, inner: t.inner, timing: t.method });
  return ready;
}

/** Times the candidates in manifest order until a cap; returns each one's result and the prepared plans of those timed. */
function timeCandidates(session: ShapeSession, shape: ManifestShape, plans: readonly CandidatePlan[], options: ShapeBenchOptions, elapsedMs: () => number): { results: CandidateResult[]; prepared: Map<string, ReadyPlan> } {
  const log = options.log ?? (() => {});
  const results: CandidateResult[] = [];
  const prepared = new Map<string, ReadyPlan>();
  for (const [i, entry] of shape.candidates.entries()) {
    const r: CandidateResult = { kernelName: entry.kernelName, variant: entry.variant };
    const skip = skipReason(session, entry, results, options, elapsedMs());
    results.push(r);
    if (skip) {
      Object.assign(r, skip);
      continue;
    }
    try {
      prepared.set(entry.kernelName, timeCandidate(session, entry, plans[i]!, r));
      const tried = r.splitTimes && r.splitTimes.length > 1 ? ` (tried ${r.splitTimes.map((s) => `s${s.splits} ${(s.medianMs * 1000).toFixed(1)}`).join(', ')})` : '';
      log(`  [${i + 1}/${shape.candidates.length}] ${(r.medianMs! * 1000).toFixed(1).padStart(9)} us  ${entry.kernelName}${r.splits ? ` splits ${r.splits}` : ''}${tried}`);
    } catch (err) {
      r.error = message(err);
      log(`  [${i + 1}/${shape.candidates.length}] error: ${r.error}  ${entry.kernelName}`);
      session.probeContext(err, entry.kernelName);
    }
  }
  return { results, prepared };
}

/** Verifies the fastest candidates until `verifyTop` pass, then an evenly spaced sample of the rest. */
function verifyRanked(session: ShapeSession, ref: ReferenceCheck, results: readonly CandidateResult[], prepared: ReadonlyMap<string, ReadyPlan>, yElements: number, options: ShapeBenchOptions): void {
  const log = options.log ?? (() => {});
  const verifyOne = (r: CandidateResult) => {
    if (r.verify || session.contextLost) return;
    try {
      const rep = ref.check(session.runOnce(prepared.get(r.kernelName)!, yElements));
      r.verify = { pass: rep.pass, mode: ref.mode, count: rep.count, mismatches: rep.mismatches, maxAbs: rep.maxAbs, maxRel: rep.maxRel, worstRatio: rep.worstRatio };
      log(`  verify ${rep.pass ? 'PASS' : 'FAIL'} (${ref.mode}, ${rep.mismatches} mismatches, worst ${rep.worstRatio.toPrecision(3)}x tolerance)  ${r.kernelName}`);
    } catch (err) {
      r.error = `verification run failed: ${message(err)}`;
      session.probeContext(err, r.kernelName);
    }
  };
  const timedOk = rankCandidates(results);
  const top = options.verifyTop ?? 3;
  let passed = 0;
  for (const r of timedOk) {
    if (passed >= top || session.contextLost) break;
    verifyOne(r);
    if (r.verify?.pass) passed++;
  }
  const rest = timedOk.filter((r) => !r.verify);
  for (const i of evenlySpaced(rest.length, options.verifySample ?? 4)) verifyOne(rest[i]!);
}

/** A multi-launch best plan: each role's launches timed alone (what back-to-back launches overlap or lose). */
function timeRolesAlone(session: ShapeSession, best: CandidateResult, ready: ReadyPlan, log: (line: string) => void): void {
  try {
    best.roleMs = (['conv', 'reduce'] as const).map((role) => ({ role, medianMs: session.time({ ...ready, launches: ready.launches.filter((l) => l.role === role) }).medianMs }));
    log(`  best alone: ${best.roleMs.map((x) => `${x.role} ${(x.medianMs * 1000).toFixed(1)} us`).join(', ')}; together ${(best.medianMs! * 1000).toFixed(1)} us`);
  } catch (err) {
    session.notes.push(`timing the best plan's launches alone failed: ${message(err)}`);
  }
}

/**
 * Benchmarks one shape on an open device: seeded random x and w (@rocke/reference randomTensor),
 * every manifest candidate in manifest order until the count or time cap (planned once, packed,
 * warmed up, timed with events), then verification against @rocke/reference of the fastest
 * candidates until `verifyTop` pass plus an evenly spaced sample of the rest. A candidate that
 * fails to plan, load or run, or fails verification, is reported and never ranked. With
 * verification on, the best candidate is the fastest one that passed. Device memory and modules
 * are released at the end.
 */
export async function benchShape(
  planner: OpPlanner,
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
  const parsed = planner.parseProblem(shape.problem);
  if (!parsed.ok) throw new TypeError(`manifest shape ${shape.name}: ${parsed.reason}`);
  const problem = parsed.problem;
  const base = { name: shape.name, cls: shape.cls, problem, notes };
  if (shape.candidates.length === 0) {
    return { result: { ...base, status: 'failed', reason: `no compiled candidates${notes.length ? ` (${notes.join('; ')})` : ''}`, candidates: [], ranking: [], wallMs: now() - t0 } };
  }
  const g = planner.tensors(problem);
  const seed = options.seed ?? 1;
  const x = options.inputs?.x ?? randomTensor(g.xBytes / 2, problem.dtype, seed);
  const w = options.inputs?.w ?? randomTensor(g.wBytes / 2, problem.dtype, seed + 1);
  const plans = planCandidates(planner, shape, problem, helpers, options.epilogue);
  const wsBytes = Math.max(0, ...plans.flatMap((p) => ('trials' in p ? p.trials.map((t) => t.plan.workspaceBytes) : [0])));
  const fused = options.epilogue ? benchEpilogueData(options.epilogue, problem.dtype, g.channels, g.yBytes / 2, seed + 3) : undefined;
  const session = new ShapeSession(device, blobs, planner.helperFor(helpers, problem, options.epilogue), options, notes, {
    x, w, yBytes: g.yBytes, wsBytes, ...(fused?.bias ? { bias: fused.bias } : {}), ...(fused?.residual ? { residual: fused.residual } : {}),
  });
  try {
    const { results, prepared } = timeCandidates(session, shape, plans, options, () => now() - t0);
    let reference: string | undefined;
    if (options.verify && !session.contextLost) {
      const ref = await planner.reference(problem, x, w, seed + 2, options.fullCheckMaxMacs ?? FULL_CHECK_MAX_MACS, fused?.values);
      reference = ref.mode;
      verifyRanked(session, ref, results, prepared, g.yBytes / 2, options);
    }
    const ranking = rankCandidates(results);
    const best = options.verify ? ranking.find((r) => r.verify?.pass) : ranking[0];
    const output = best && options.keepOutput && !session.contextLost ? session.runOnce(prepared.get(best.kernelName)!, g.yBytes / 2) : undefined;
    if (best && (best.launches ?? 1) > 1 && !session.contextLost) timeRolesAlone(session, best, prepared.get(best.kernelName)!, log);
    const failedVerify = results.filter((r) => r.verify && !r.verify.pass).length;
    const reason = best
      ? undefined
      : session.contextLost ?? (ranking.length ? 'no ranked candidate passed verification' : `no candidate ran (${failedVerify} failed verification, ${results.filter((r) => r.error).length} errors)`);
    const result: ShapeResult = {
      ...base,
      status: best ? 'ok' : 'failed',
      ...(reason ? { reason } : {}),
      ...(reference ? { reference } : {}),
      candidates: results,
      ranking: ranking.map((r) => r.kernelName),
      ...(best ? { best } : {}),
      ...(session.contextLostBy ? { contextLostBy: session.contextLostBy } : {}),
      wallMs: now() - t0,
    };
    return output ? { result, y: output } : { result };
  } finally {
    session.close();
  }
}
