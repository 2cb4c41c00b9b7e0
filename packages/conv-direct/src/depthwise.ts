/**
 * The depthwise variant on the host side: which problems it serves, its spec rules (with reasons)
 * and its candidate grid. Depthwise convs (groups = C, K = M*C) do R*S multiply-adds per output
 * for about 2 (+2/M) bytes moved, so the kernel is built for bytes, not for MMA: see
 * kernel/depthwise.ts and the geometry in depthwise-geometry.ts.
 */
import { DEPTHWISE_VECTOR, depthwiseGeometry, depthwiseLdsPad } from './depthwise-geometry.js';
import type { Dtype, Problem } from './problem.js';
import type { Spec } from './spec.js';
import { TARGETS, type TargetName } from './targets.js';

/** Channel multipliers K/C the kernel serves: its 8 output channels read 8/M input channels. */
export const DEPTHWISE_MULTIPLIERS = [1, 2, 4] as const;
/** Largest filter side: one filter row of weights (S x 8 f32) lives in registers. */
export const DEPTHWISE_MAX_FILTER = 7;

/** True when `p` is a depthwise conv the variant serves: groups = C > 1 and K/C in {@link DEPTHWISE_MULTIPLIERS}. */
export function isDepthwiseProblem(p: Problem): boolean {
  // Dilated and strides past 2: the grouped kernel serves them.
  const plain = p.dilationH === 1 && p.dilationW === 1 && p.strideH <= 2 && p.strideW <= 2;
  return plain && p.groups > 1 && p.groups === p.C && (DEPTHWISE_MULTIPLIERS as readonly number[]).includes(p.K / p.C);
}

/** Why a depthwise spec is invalid on its own, or null (the target-hint checks are validate()'s). */
export function depthwiseSpecReason(s: Spec): string | null {
  if (s.atom !== 'fma') return `the depthwise kernel uses no MMA: its atom is fma (got ${s.atom})`;
  for (const f of ['R', 'S', 'stride_h', 'stride_w', 'tile_h', 'tile_w', 'tile_k', 'ck', 'waves_m', 'waves_n'] as const) {
    if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  }
  if (s.pad_h < 0 || s.pad_w < 0) return `padding must be >= 0 (got pad_h ${s.pad_h}, pad_w ${s.pad_w})`;
  if (s.stride_h > 2 || s.stride_w > 2) return `stride ${s.stride_h}x${s.stride_w} is not supported (each stride must be 1 or 2)`;
  if (s.R > DEPTHWISE_MAX_FILTER || s.S > DEPTHWISE_MAX_FILTER) return `filter ${s.R}x${s.S}: the depthwise kernel takes sides up to ${DEPTHWISE_MAX_FILTER}`;
  if (![2, 4, 8].includes(s.ck)) return `ck ${s.ck}: depthwise ck is 8 / channel multiplier (8, 4 or 2 for multipliers 1, 2, 4)`;
  if (s.tile_k % DEPTHWISE_VECTOR !== 0) return `tile_k ${s.tile_k} is not a multiple of ${DEPTHWISE_VECTOR} (one 16-byte output vector per thread)`;
  const m = DEPTHWISE_VECTOR / s.ck;
  if ((s.tile_k / m) % DEPTHWISE_VECTOR !== 0) return `tile_k ${s.tile_k} / multiplier ${m} = ${s.tile_k / m} input channels are not a multiple of ${DEPTHWISE_VECTOR} (16-byte staging)`;
  if (s.tile_w % s.waves_m !== 0) return `tile_w ${s.tile_w} is not a multiple of waves_m ${s.waves_m} (depthwise: output columns per thread)`;
  if (s.lds_pad < 0 || s.lds_pad % 8 !== 0) return `lds_pad ${s.lds_pad} must be a non-negative multiple of 8 (16-byte aligned LDS vectors)`;
  const unused: [string, boolean][] = [
    ['waves_n 1', s.waves_n === 1],
    ['tile_n 1', s.tile_n === 1],
    ['group_merge 1', s.group_merge === 1],
    ['dilation 1x1', s.dilation_h === 1 && s.dilation_w === 1],
    ['c_tail 0', s.c_tail === 0],
    ['k_tail false', !s.k_tail],
    ['double_buffer false (one stage: the tile is the whole reduction)', !s.double_buffer],
  ];
  for (const [want, ok] of unused) if (!ok) return `depthwise specs need ${want}`;
  for (const f of ['swizzle_wgm', 'chiplet_chunk', 'num_xcds'] as const) if (s[f] < 1) return `${f} must be >= 1 (got ${s[f]})`;
  const t = TARGETS[s.target];
  const g = depthwiseGeometry(s);
  if (g.threads > t.maxThreadsPerBlock) return `${g.threads} threads per workgroup (tile_k/8 x tile_h x tile_w/waves_m) exceed ${t.maxThreadsPerBlock} on ${s.target}`;
  if (g.ldsBytes > t.sharedBytesPerBlock) return `LDS ${g.ldsBytes} bytes exceed the ${t.sharedBytesPerBlock}-byte limit of ${s.target}`;
  return null;
}

/** Why a depthwise spec cannot serve problem `p` (its filter, stride, padding and dtype already match), or null. */
export function depthwiseProblemReason(s: Spec, p: Problem): string | null {
  if (p.groups !== p.C) return `the depthwise variant needs groups == C (got groups ${p.groups}, C ${p.C})`;
  const m = DEPTHWISE_VECTOR / s.ck;
  if (p.K !== m * p.C) return `channel multiplier K/C = ${p.K}/${p.C} does not match the spec's ${m} (ck ${s.ck} = 8 / multiplier)`;
  return null;
}

/** Tile heights offered: 2, 4, 8, and Ho itself when it is smaller (a whole small map per tile). */
export const DEPTHWISE_TILE_H = [2, 4, 8] as const;
/** Output channels per tile offered (those whose input channels make whole 16-byte vectors). */
export const DEPTHWISE_TILE_K = [8, 16, 32, 64] as const;
/** Most output columns a thread computes (accumulators: 8 per column). */
export const DEPTHWISE_MAX_COLUMNS = 8;
/** Threads per workgroup the grid keeps (whole waves): 64 to 256, so that with the register cap below two or more workgroups fit a CU / SM. */
export const DEPTHWISE_THREADS = { min: 64, max: 256 } as const;

/**
 * Tile widths for an output width Wo: multiples of 4 up to 32 that divide Wo (else the one that pads
 * least), plus Wo itself up to 32 (a whole row per tile). Null (shape-independent): 8, 16, 32.
 */
export function depthwiseWidths(wo: number | null): number[] {
  if (wo === null) return [8, 16, 32];
  const widths = Array.from({ length: 8 }, (_, i) => 4 * (i + 1));
  let out = widths.filter((w) => wo % w === 0);
  if (out.length === 0) out = [widths.reduce((a, w) => (Math.ceil(wo / w) * w < Math.ceil(wo / a) * a ? w : a))];
  if (wo <= 32 && !out.includes(wo)) out.push(wo);
  return out;
}

/** Columns per thread for a tile width: its largest divisor up to 8 and its largest up to 4. */
export function depthwiseColumns(tileW: number): number[] {
  const largest = (cap: number) => Math.max(...Array.from({ length: cap }, (_, i) => i + 1).filter((d) => tileW % d === 0));
  return [...new Set([largest(DEPTHWISE_MAX_COLUMNS), largest(4)])];
}

/** Knobs of {@link depthwiseGrid}. */
export interface DepthwiseGridOptions {
  readonly dtype: Dtype;
  readonly capability: { R: number; S: number; stride_h: number; stride_w: number; pad_h: number; pad_w: number; dilation_h: number; dilation_w: number };
  readonly wo?: number | null;
  readonly ho?: number | null;
  /** Multipliers to offer (default all of {@link DEPTHWISE_MULTIPLIERS}). */
  readonly multipliers?: readonly number[];
}

/**
 * The depthwise grid for one capability: multiplier x tile_k x tile_h x tile_w x columns per
 * thread, keeping workgroups of whole waves within {@link DEPTHWISE_THREADS} whose staged tile
 * leaves room for two workgroups per CU / SM and whose live registers (staging or tap loop) stay
 * within {@link depthwiseRegisterBudget}, so several workgroups keep their loads in flight at once;
 * the LDS pad is the one that avoids bank conflicts on the tap loop's reads.
 */
export function depthwiseGrid(target: TargetName, o: DepthwiseGridOptions): Spec[] {
  const t = TARGETS[target];
  const amd = t.vendor === 'amd';
  const cap = o.capability;
  const heights = [...DEPTHWISE_TILE_H, ...(o.ho != null && o.ho < 8 && !(DEPTHWISE_TILE_H as readonly number[]).includes(o.ho) ? [o.ho] : [])];
  const specs: Spec[] = [];
  for (const m of o.multipliers ?? DEPTHWISE_MULTIPLIERS)
    for (const tile_k of DEPTHWISE_TILE_K)
      for (const tile_h of heights)
        for (const tile_w of depthwiseWidths(o.wo ?? null))
          for (const cols of depthwiseColumns(tile_w)) {
            const fields = { target, R: cap.R, S: cap.S, stride_h: cap.stride_h, stride_w: cap.stride_w, tile_h, tile_w, tile_k, ck: DEPTHWISE_VECTOR / m, waves_m: cols };
            if ((tile_k / m) % DEPTHWISE_VECTOR !== 0) continue;
            const lds_pad = depthwiseLdsPad(fields);
            const g = depthwiseGeometry({ ...fields, lds_pad });
            if (g.threads < DEPTHWISE_THREADS.min || g.threads > DEPTHWISE_THREADS.max || g.threads % t.waveSize !== 0) continue;
            if (g.ldsBytes + t.sharedReservedPerBlock > t.sharedBytesPerUnit / 2 || g.liveRegisters > depthwiseRegisterBudget(target, g.threads)) continue;
            specs.push({
              variant: 'depthwise',
              dtype: o.dtype,
              ...cap,
              ...fields,
              waves_n: 1,
              atom: 'fma',
              lds_pad,
              double_buffer: false,
              chiplet_swizzle: amd,
              chiplet_chunk: 64,
              num_xcds: t.chiplets,
              swizzle_wgm: 8,
              iglp: null,
              waves_per_eu: null,
              group_merge: 1,
              tile_n: 1,
              c_tail: 0,
              k_tail: false,
            });
          }
  return specs;
}

/** Threads of one kernel a CU / SM should hold at least (8 warps, 4 wave64 waves) to keep loads in flight. */
export const DEPTHWISE_MIN_RESIDENT_THREADS = 256;

/**
 * Registers per thread a depthwise workgroup of `threads` may estimate: few enough that a CU / SM
 * holds two such workgroups and at least {@link DEPTHWISE_MIN_RESIDENT_THREADS} threads (the
 * spill heuristic, `spillFilter`, still drops estimates near the per-thread maximum).
 */
export function depthwiseRegisterBudget(target: TargetName, threads: number): number {
  const t = TARGETS[target];
  if (t.registers.kind === 'file') {
    return Math.min(t.registers.maxPerThread, t.registers.perUnit / Math.max(DEPTHWISE_MIN_RESIDENT_THREADS, 2 * threads));
  }
  // AMD: a workgroup's waves spread over the SIMDs; two workgroups share each SIMD's file.
  const wavesPerSimd = Math.ceil(threads / t.waveSize / t.registers.simdsPerUnit);
  return t.registers.perLane / (2 * wavesPerSimd);
}

/** The probe problem a shape-independent depthwise spec is validated on: N1 64x64, C = groups = 256, K = M*C. */
export function depthwiseProbe(s: Spec, channels: number): Problem {
  const m = DEPTHWISE_VECTOR / s.ck;
  return { N: 1, H: 64, W: 64, C: channels, K: m * channels, R: s.R, S: s.S, strideH: s.stride_h, strideW: s.stride_w, padH: s.pad_h, padW: s.pad_w, dilationH: 1, dilationW: 1, groups: channels, dtype: s.dtype };
}


/**
 * Output input pixels over staged halo pixels of one tile (at most 1): the share of the staged
 * bytes that a tile with no halo would stage. Ranks depthwise tiles that tie on padding waste and
 * grid fill, since the kernel's cost is its bytes.
 */
export function depthwiseStagingEfficiency(s: Spec): number {
  const g = depthwiseGeometry(s);
  return (s.tile_h * s.stride_h * s.tile_w * s.stride_w) / (g.ldsInH * g.ldsInW);
}
