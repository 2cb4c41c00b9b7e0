/**
 * The one cost model of a (problem, spec, split count) launch: a predicted time built from terms
 * that follow from the problem and the target — MMA work including tile waste, quantized over the
 * compute units; bytes staged from L2 (halo re-reads and weight re-reads across tiles); operand
 * reads from LDS; compulsory DRAM bytes and split_c's workspace; the exposed latency of the channel
 * loop over the residency rounds; extra launches. Each term is a time on the target's published
 * rates; a few coefficients (cost-coefficients.generated.ts, fitted by ranker/fit.ts on measured
 * rows) scale them. A term with no fitted coefficient keeps its roofline value (coefficient 1), so
 * a variant or atom never measured is still ranked, on the same scale.
 *
 * The bench order (ranking.ts), the ranker (ranker/) and the split and merge choosers use it.
 */
import { TARGETS } from '@rocke/ir';
import { DEFAULT_SLICES_PER_STEP } from '@rocke/split-reduce';
import { DEPTHWISE_PAIR, DEPTHWISE_STAGE_BATCH, depthwiseGeometry, depthwiseReadConflicts, depthwiseWeightStoreConflicts } from './depthwise-geometry.js';
import { launchGrid } from './grid.js';
import { ELEMENT_BYTES, problemGeometry, type Problem } from './problem.js';
import { fragmentLoadsPerMma } from './fragments.js';
import { streamTilesPerWorkgroup } from './pointwise.js';
import { residency, type Residency } from './residency.js';
import { fittedStoreRun, outputElementBytes } from './store-path.js';
import { keptFacts, reducedChannels, specGeometry, tapFold, wgmmaLds, type Spec } from './spec.js';
import { longestSlice, splitUnit } from './split-slices.js';
import { ATOMS, isWarpgroupAtom, type TargetName } from './targets.js';
import { WORKSPACE_ELEMENT_BYTES } from './validate.js';
import { wholeMapLayout } from './whole-map.js';
import { weightPieceElems } from './kernel/schedule.js';
import { FITTED_RANKER } from './ranker/model.generated.js';

/**
 * Throughputs and latencies of each target, from the vendors' product specifications (dense
 * bf16/fp16 matrix and fp32 vector peaks, HBM bandwidth, boost clock) and the per-clock widths of
 * the L2-to-CU/SM path and of LDS / shared memory. They set the terms' units; the fitted
 * coefficients absorb how far a kernel stays from them.
 */
export interface TargetRates {
  /** Dense bf16/fp16 matrix peak, FLOP/s. */
  readonly mmaFlops: number;
  /** fp32 vector FMA peak, FLOP/s (the depthwise kernel's units). */
  readonly fmaFlops: number;
  /** HBM bandwidth, bytes/s. */
  readonly dramBytes: number;
  /** L2 to CU / SM bandwidth per unit, bytes/s. */
  readonly l2BytesPerUnit: number;
  /** LDS / shared memory read bandwidth per unit, bytes/s. */
  readonly ldsBytesPerUnit: number;
  /** Latency of one staged global load (issue to LDS), s. */
  readonly loadLatency: number;
  /** Boost clock, Hz. */
  readonly clock: number;
  /** Gap one more kernel launch on a stream adds, s. */
  readonly launch: number;
}

const GHZ = 1e9;
/** A cache line on every target here, bytes. */
const LINE_BYTES = 128;
export const TARGET_RATES: Readonly<Record<TargetName, TargetRates>> = {
  // MI355X: 2.5 PF dense bf16, 157.3 TF fp32 vector, 8 TB/s HBM3E, 2.4 GHz, 64 B/clk L2 and 128 B/clk LDS per CU.
  gfx950: { mmaFlops: 2.5e15, fmaFlops: 157.3e12, dramBytes: 8e12, l2BytesPerUnit: 64 * 2.4 * GHZ, ldsBytesPerUnit: 128 * 2.4 * GHZ, clock: 2.4 * GHZ, loadLatency: 0.6e-6, launch: 2e-6 },
  // MI300X: 1307 TF dense bf16, 163.4 TF fp32 vector, 5.3 TB/s HBM3, 2.1 GHz.
  gfx942: { mmaFlops: 1307.4e12, fmaFlops: 163.4e12, dramBytes: 5.3e12, l2BytesPerUnit: 64 * 2.1 * GHZ, ldsBytesPerUnit: 128 * 2.1 * GHZ, clock: 2.1 * GHZ, loadLatency: 0.6e-6, launch: 2e-6 },
  // H200 SXM: 989 TF dense bf16, 67 TF fp32, 4.8 TB/s HBM3e, 1.98 GHz, 64 B/clk L2 and 128 B/clk shared memory per SM.
  sm_90: { mmaFlops: 989e12, fmaFlops: 67e12, dramBytes: 4.8e12, l2BytesPerUnit: 64 * 1.98 * GHZ, ldsBytesPerUnit: 128 * 1.98 * GHZ, clock: 1.98 * GHZ, loadLatency: 0.6e-6, launch: 2e-6 },
};

/** The terms of the cost, each a time in microseconds. */
export const COST_TERMS = ['mma', 'stage', 'loads', 'lds', 'store', 'dram', 'latency', 'launch'] as const;
export type CostTerm = (typeof COST_TERMS)[number];

/**
 * How an atom uses the MMA units: each class gets its own coefficient on the `mma` term (its
 * efficiency against the dense peak). `wgmma-unswizzled`: the warpgroup MMA reading unswizzled
 * core matrices (bank conflicts), a different rate from the 128B-swizzled rows.
 */
export const ATOM_CLASSES = ['mfma', 'mma.sync', 'wgmma', 'wgmma-unswizzled', 'fma'] as const;
export type AtomClass = (typeof ATOM_CLASSES)[number];

export function atomClass(spec: Spec): AtomClass {
  if (spec.atom === 'fma') return 'fma';
  if (isWarpgroupAtom(spec.atom)) return wgmmaLds(spec).swizzle ? 'wgmma' : 'wgmma-unswizzled';
  return TARGETS[spec.target].vendor === 'nvidia' ? 'mma.sync' : 'mfma';
}

/**
 * Coefficients per target: one per term, the `mma` term per atom class (`mma:<class>`). Missing
 * keys are 1 (the roofline value).
 */
export type CostCoefficients = Readonly<Record<string, number>>;

export function coefficientKey(term: CostTerm, cls: AtomClass): string {
  return term === 'mma' ? `mma:${cls}` : term;
}

/** The coefficients committed for `target` (fitted where measured rows exist; empty elsewhere). */
export function defaultCoefficients(target: TargetName): CostCoefficients {
  return FITTED_RANKER.target === target ? FITTED_RANKER.coefficients : {};
}

/** Launch facts the terms are built from (reported by `explain`). */
export interface CostFacts {
  readonly workgroups: number;
  /** Workgroups resident per CU / SM (residency model) and the busiest unit's workgroup count. */
  readonly perUnit: number;
  readonly busiest: number;
  /** Residency rounds on the busiest unit: ceil(busiest / perUnit). */
  readonly rounds: number;
  /**
   * Output stores the busiest unit's workgroups issue one after another, each but the last
   * overlapping the next one's work: the rounds, times the tiles of a streaming workgroup.
   */
  readonly storeRounds: number;
  /** Useful FLOPs / FLOPs computed (partial tiles, channel padding, the block diagonal's zeros). */
  readonly tileUtilization: number;
  /** Channel-loop steps per workgroup and loads kept in flight (LDS stages). */
  readonly chunks: number;
  readonly stages: number;
  /** Bytes staged from L2 over all workgroups, per useful FLOP. */
  readonly stagedPerFlop: number;
  readonly launches: number;
  readonly atomClass: AtomClass;
}

/** One launch's predicted time and its terms. */
export interface CostEstimate {
  /** Predicted time, microseconds. */
  readonly us: number;
  /** Each term after its coefficient, microseconds. */
  readonly terms: Readonly<Record<CostTerm, number>>;
  readonly facts: CostFacts;
}

/** Raw terms (coefficient 1) and facts. Call it on specs that validate for the problem. */
export function costTerms(spec: Spec, problem: Problem, splits = 1): { terms: Record<CostTerm, number>; facts: CostFacts } {
  const rates = TARGET_RATES[spec.target];
  const units = TARGETS[spec.target].computeUnits;
  const g = problemGeometry(problem);
  const wg = launchGrid(spec, problem, splits).workgroups;
  const c = specCost(spec);
  const res = c.residency;
  const busiest = Math.ceil(wg / units);
  const rounds = Math.ceil(busiest / res.perUnit);
  const w = workgroupWork(spec, c, problem, splits);
  const cls = c.cls;
  const peak = cls === 'fma' ? rates.fmaFlops : rates.mmaFlops;
  const wsBytes = spec.variant === 'split_c' ? 2 * splits * problem.N * g.Ho * g.Wo * problem.K * WORKSPACE_ELEMENT_BYTES : 0;
  const launches = spec.variant === 'split_c' ? 2 : 1;
  const reduceRoundTrips = spec.variant === 'split_c' ? 1 + Math.ceil((splits - 1) / DEFAULT_SLICES_PER_STEP) : 0;
  const us = 1e6;
  const terms: Record<CostTerm, number> = {
    mma: (busiest * w.peakFlops * units * us) / peak,
    stage: (busiest * w.stagedBytes * us) / rates.l2BytesPerUnit,
    // The load unit takes one wave-wide global load instruction per clock, however few bytes it moves.
    loads: (busiest * w.loadInstructions * us) / rates.clock,
    lds: (busiest * w.ldsReadBytes * us) / rates.ldsBytesPerUnit,
    // The store unit handles one cache line per clock: a store instruction whose lanes write
    // runs of r bytes per pixel costs one line per run, up to a whole line (see fittedStoreRun).
    store: (busiest * w.storeBytes * us) / (c.storeLine * rates.clock),
    dram: ((g.bytes + wsBytes) * us) / rates.dramBytes,
    // The first chunk's loads are exposed in every residency round; later ones overlap `stages` deep.
    // split_c's reduce adds its fold's round trips: slice 0, then DEFAULT_SLICES_PER_STEP slices at a time.
    latency: (rounds * (1 + (w.chunks - 1) / w.stages) + reduceRoundTrips) * rates.loadLatency * us,
    launch: launches * rates.launch * us,
  };
  const facts: CostFacts = {
    workgroups: wg,
    perUnit: res.perUnit,
    busiest,
    rounds,
    storeRounds: rounds * w.tiles,
    tileUtilization: g.flops / (wg * w.flops),
    chunks: w.chunks,
    stages: w.stages,
    stagedPerFlop: (wg * w.stagedBytes) / g.flops,
    launches,
    atomClass: cls,
  };
  return { terms, facts };
}

/**
 * Combines the terms: the throughput terms overlap (the slowest one bounds the launch; a smooth
 * maximum, so every term keeps a say near a tie), the loop's exposed latency and the launches add.
 * The output stores overlap only across residency rounds: a unit's workgroups of one round store
 * together after their loops, so the last round's share (1/rounds of the store term) adds; a
 * streaming workgroup's tiles are rounds of their own (each tile's store overlaps the next tile's
 * loads and MMAs), so `storeRounds` counts them.
 */
export function combineTerms(t: Readonly<Record<CostTerm, number>>, storeRounds = Infinity): number {
  const exposed = 1 / storeRounds;
  let overlapped = 0;
  let added = t.store * exposed;
  for (let i = 0; i < COST_TERMS.length; i++) {
    const term = COST_TERMS[i]!;
    const v = term === 'store' ? t[term] * (1 - exposed) : t[term];
    if (OVERLAPPED[i]) overlapped += v ** COMBINE.norm;
    else added += v;
  }
  return overlapped ** (1 / COMBINE.norm) + added;
}

/** How {@link combineTerms} joins the terms: the overlapped ones by a p-norm (p = norm), the rest summed. */
export const COMBINE: { readonly overlapped: readonly CostTerm[]; readonly norm: number } = { overlapped: ['mma', 'stage', 'lds', 'store', 'dram'], norm: 4 };

/** Per term of COST_TERMS: whether {@link COMBINE} overlaps it. */
const OVERLAPPED = COST_TERMS.map((term) => COMBINE.overlapped.includes(term));

/** The predicted time of `spec` on `problem` with `splits` slices (coefficients default to the committed fit). */
export function estimateCost(spec: Spec, problem: Problem, splits = 1, coefficients: CostCoefficients = defaultCoefficients(spec.target)): CostEstimate {
  const { terms: raw, facts } = costTerms(spec, problem, splits);
  const keys = COEFFICIENT_KEYS[facts.atomClass];
  const times = (term: CostTerm) => raw[term] * (coefficients[keys[term]] ?? 1);
  // Every term of COST_TERMS, in its order.
  const terms: Record<CostTerm, number> = {
    mma: times('mma'),
    stage: times('stage'),
    loads: times('loads'),
    lds: times('lds'),
    store: times('store'),
    dram: times('dram'),
    latency: times('latency'),
    launch: times('launch'),
  };
  return { us: combineTerms(terms, facts.storeRounds), terms, facts };
}

/** {@link coefficientKey} of every term, per atom class. */
const COEFFICIENT_KEYS = Object.fromEntries(ATOM_CLASSES.map((cls) => [cls, Object.fromEntries(COST_TERMS.map((t) => [t, coefficientKey(t, cls)]))])) as Record<AtomClass, Record<CostTerm, string>>;

/** The cost's terms as one line (for explain). */
export function costLine(c: CostEstimate): string {
  const f = c.facts;
  const t = COST_TERMS.map((k) => `${k} ${c.terms[k].toFixed(2)}`).join(', ');
  return (
    `${c.us.toFixed(2)} us predicted (${t} us; ${f.workgroups} workgroups, ${f.perUnit}/unit resident, busiest unit ${f.busiest} in ${f.rounds} round(s), ` +
    `tile utilization ${f.tileUtilization.toFixed(3)}, ${f.chunks} chunk(s) x ${f.stages} stage(s), ${f.stagedPerFlop.toFixed(3)} staged B/FLOP, ${f.atomClass})`
  );
}

interface WorkgroupWork {
  /** FLOPs one workgroup computes (padding included). */
  readonly flops: number;
  /** What the `mma` term charges at the peak: the FLOPs, or for CUDA-core kernels 2 per issued instruction. */
  readonly peakFlops: number;
  /** Bytes it stages from global memory (halo and weights, per chunk). */
  readonly stagedBytes: number;
  /** Wave-wide global load instructions that staging issues (narrow weight pieces take one each). */
  readonly loadInstructions: number;
  /** Operand bytes its MMAs (or FMAs) read from LDS. */
  readonly ldsReadBytes: number;
  /** Output bytes it stores (split_c: fp32 partial sums). */
  readonly storeBytes: number;
  readonly chunks: number;
  readonly stages: number;
  /** Output tiles it computes one after another (1 unless streaming). */
  readonly tiles: number;
}

/**
 * What the cost model reads of a spec alone, kept per frozen spec (spec.ts `keptFacts`): a
 * search scores one spec for every split count and every problem that shares its grid. Each
 * value is a factor the terms multiply in the same order as ever, so predictions stay bit-equal.
 */
interface SpecCost {
  readonly residency: Residency;
  readonly cls: AtomClass;
  /** The store term's bytes per clock: the fitted store run, at most a cache line. */
  readonly storeLine: number;
  /** Depthwise: its workgroup's work, which no problem size changes. */
  readonly depthwise: WorkgroupWork | undefined;
  /** Filter taps per staged chunk (tap-folded: R). */
  readonly taps: number;
  /** 2 x computed pixels x tile_k x taps: the FLOPs of one channel of one chunk, before x chunks x ck. */
  readonly flopsPerChunkChannel: number;
  /** Staged elements per channel of a chunk: the halo's pixels and tile_k x taps weights. */
  readonly stagedPerChannel: number;
  /** FLOPs per LDS operand read and the operand elements one read moves, as ldsReadBytes multiplies them. */
  readonly ldsDivisor: number;
  readonly ldsFactor: number;
  readonly stages: number;
  readonly storeBytes: number;
  readonly waves: number;
  /** Global load instructions per wave and chunk: the halo's passes and the weights' pieces. */
  readonly xPasses: number;
  readonly wLoads: number;
}

function specCost(spec: Spec): SpecCost {
  const kept = keptFacts(spec);
  return kept ? (kept.cost ??= specCostOf(spec)) : specCostOf(spec);
}

declare module './spec.js' {
  interface SpecFacts {
    /** cost-model.ts: what the cost model reads of the spec alone. */
    cost?: SpecCost;
  }
}

/** {@link SpecCost}, computed. */
function specCostOf(spec: Spec): SpecCost {
  const common = { residency: residency(spec), cls: atomClass(spec), storeLine: Math.min(fittedStoreRun(spec), LINE_BYTES) };
  if (spec.variant === 'depthwise') {
    return { ...common, depthwise: depthwiseWork(spec), taps: 0, flopsPerChunkChannel: 0, stagedPerChannel: 0, ldsDivisor: 1, ldsFactor: 0, stages: 1, storeBytes: 0, waves: 0, xPasses: 0, wLoads: 0 };
  }
  // Tap-folded: R taps of S·C folded elements each (see tapFold).
  const taps = (spec.R * spec.S) / tapFold(spec);
  const pixels = spec.tile_n * spec.tile_h * spec.tile_w;
  // Whole-map tiles compute their flat pixel columns, padding between rows and images included.
  const computed = spec.whole_map ? wholeMapLayout(spec).pixels : pixels;
  const sg = specGeometry(spec);
  let ldsDivisor: number;
  let ldsFactor: number;
  let stages: number;
  if (isWarpgroupAtom(spec.atom)) {
    // Each wgmma reads its 64-pixel activation block and its N weight rows of 16 channels (whole-map
    // tiles: 64 weight rows and N pixels, N the mean pixel run).
    const n = spec.whole_map ? computed / wholeMapLayout(spec).runs.length : spec.tile_k / spec.waves_m;
    ldsDivisor = 2 * 64 * n * 16;
    ldsFactor = 64 + n;
    stages = wgmmaLds(spec).stages;
  } else {
    const a = ATOMS[spec.atom];
    ldsDivisor = 2 * a.m * a.n * a.k;
    ldsFactor = fragmentLoadsPerMma(spec);
    stages = spec.double_buffer ? 2 : 1;
  }
  // Weight slots of grouped specs (whose slots may straddle groups) and of channel tails load in pieces.
  const slot = TARGETS[spec.target].vendor === 'amd' ? sg.atom.fragA : 8;
  return {
    ...common,
    depthwise: undefined,
    taps,
    flopsPerChunkChannel: 2 * computed * spec.tile_k * taps,
    stagedPerChannel: sg.ldsRows * sg.ldsInW + spec.tile_k * taps,
    ldsDivisor,
    ldsFactor,
    stages,
    storeBytes: pixels * spec.tile_k * outputElementBytes(spec),
    waves: Math.ceil(sg.threads / sg.waveSize),
    xPasses: sg.xPasses,
    wLoads: sg.wPasses * (slot / weightPieceElems(spec, slot)),
  };
}

/** One workgroup's work: FLOPs, staged bytes, LDS reads, channel-loop steps. */
function workgroupWork(spec: Spec, c: SpecCost, problem: Problem, splits: number): WorkgroupWork {
  if (c.depthwise) return c.depthwise;
  const g = problemGeometry(problem);
  // Tap-folded: S·C elements per tap (reducedChannels).
  const merged = reducedChannels(spec, (spec.variant === 'grouped' ? spec.group_merge : 1) * g.cpg);
  // split_c: the longest slice's channels, the loop every workgroup waits for (split-slices.ts).
  const reduced = splits === 1 ? merged : longestSlice(merged, splitUnit(spec), splits);
  const chunks = Math.ceil(reduced / spec.ck);
  const flops = c.flopsPerChunkChannel * chunks * spec.ck;
  const stagedBytes = chunks * spec.ck * ELEMENT_BYTES * c.stagedPerChannel;
  const ldsReadBytes = isWarpgroupAtom(spec.atom)
    ? (flops / c.ldsDivisor) * c.ldsFactor * 16 * ELEMENT_BYTES
    : (flops / c.ldsDivisor) * c.ldsFactor * ATOMS[spec.atom].m * ATOMS[spec.atom].k * ELEMENT_BYTES;
  const { stages, storeBytes, waves } = c;
  if (spec.stream) {
    // Streaming: `tiles` pixel tiles in one channel-loop sequence of tiles x chunks steps, the
    // weights staged once.
    const tiles = streamTilesPerWorkgroup(spec, problem);
    const wBytes = chunks * spec.ck * ELEMENT_BYTES * spec.tile_k * c.taps;
    return {
      flops: tiles * flops,
      peakFlops: tiles * flops,
      stagedBytes: tiles * (stagedBytes - wBytes) + wBytes,
      loadInstructions: waves * chunks * (tiles * c.xPasses + c.wLoads),
      ldsReadBytes: tiles * ldsReadBytes,
      storeBytes: tiles * storeBytes,
      chunks: tiles * chunks,
      stages,
      tiles,
    };
  }
  const loadInstructions = waves * chunks * (c.xPasses + c.wLoads);
  return { flops, peakFlops: flops, stagedBytes, loadInstructions, ldsReadBytes, storeBytes, chunks, stages, tiles: 1 };
}

/** Bytes one shared-memory wavefront serves: 32 banks of 4 bytes. */
const WAVEFRONT_BYTES = 128;

/**
 * The depthwise kernel's workgroup (kernel/depthwise.ts): CUDA-core / VALU FMAs, no MMA, so its
 * time is issue slots and shared-memory wavefronts, not FLOPs at a matrix peak. An image tile
 * (tile_n > 1) does the tap loop (weight reads included) and the halo staging once per image and
 * stages the weights once.
 * - `peakFlops`: every thread issues 2 FMAs per tap of its block's outputs, one LDS read and its
 *   conversions per window pixel, and one read and two conversions per weight; at 2 FLOPs per
 *   issued instruction against the fp32 peak.
 * - `ldsReadBytes`: the wavefronts of the workgroup's shared-memory accesses (each one
 *   {@link WAVEFRONT_BYTES}): per wave the window reads (times their bank conflict), the weight
 *   reads, the staging's 16-byte input stores and its 2-byte weight stores (times their bank
 *   conflict).
 * - `chunks`: the staging's batches of loads, each a round trip to memory before the tap loop
 *   (an image tile's later images stage while the one before is computed).
 */
function depthwiseWork(spec: Spec): WorkgroupWork {
  const d = depthwiseGeometry(spec);
  const taps = spec.R * spec.S;
  const pixels = spec.tile_n * spec.tile_h * spec.tile_w;
  const window = d.rowsRead * d.columnsRead;
  const issue = d.images * (DEPTHWISE_PAIR * d.rowsPerThread * d.columnsPerThread * taps + window * (1 + d.pairInChannels) + taps * (1 + DEPTHWISE_PAIR));
  const phases = Math.ceil(Math.min(d.waveSize, d.threads) / 32);
  const perWave = d.images * phases * (window * depthwiseReadConflicts(spec) + taps + d.xPasses * 4) + d.wPasses * phases * depthwiseWeightStoreConflicts(spec);
  const waves = Math.ceil(d.threads / d.waveSize);
  return {
    flops: 2 * pixels * spec.tile_k * taps,
    peakFlops: 2 * d.threads * issue,
    stagedBytes: d.images * d.xBytes + d.wBytes,
    loadInstructions: Math.ceil(d.threads / d.waveSize) * (d.images * d.xPasses + d.wPasses),
    ldsReadBytes: waves * perWave * WAVEFRONT_BYTES,
    storeBytes: pixels * spec.tile_k * ELEMENT_BYTES,
    chunks: Math.ceil(d.xPasses / DEPTHWISE_STAGE_BATCH) + Math.ceil(d.wPasses / (4 * DEPTHWISE_STAGE_BATCH)),
    stages: 1,
    tiles: 1,
  };
}
