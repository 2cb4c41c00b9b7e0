import { aotCandidates, buildConvKernel, DTYPES, kernelName, parseSpec, selectProblemSpecs, specGeometry, TARGET_NAMES, VARIANTS, VERSION as CONV_DIRECT_VERSION, type Dtype, type NamedProblem, type SelectOptions, type ShapeSelection, type Spec, type Variant } from '@rocke/conv-direct';
import { getTarget, printModule, VERSION as IR_VERSION } from '@rocke/ir';
import type { BuiltKernel, Family, KernelCandidate } from '../family.js';
import type { JsonValue } from '../../hash.js';
import type { TargetName } from '../llvm-toolchain.js';

/** Cache family name of the direct forward-convolution kernels. */
export const CONV_DIRECT_FAMILY = 'direct_fwd';

/** Variants conv-direct's `buildConvKernel` builds: all of them (dense, split_c, grouped, depthwise). */
export const BUILDABLE_VARIANTS: readonly Variant[] = VARIANTS;

/** Options of {@link convDirectFamily}. */
export interface ConvDirectFamilyOptions {
  dtypes?: readonly Dtype[];
  variants?: readonly Variant[];
  /** The specs for one target, dtype and variant; default: conv-direct's AOT grid (`aotCandidates(...).valid`). */
  grid?: (target: TargetName, dtype: Dtype, variant: Variant) => readonly Spec[];
}

/**
 * conv-direct's kernels as a compile-all family (`direct_fwd`): per target every dtype × buildable
 * variant of the shape-independent AOT grid (runtime shapes: one binary serves many problems).
 * The spec is the cache identity's spec (it carries `waves_per_eu`, so elf-prune's twin rule
 * applies); IR is `printModule(buildConvKernel(spec).module)`.
 */
export function convDirectFamily(options: ConvDirectFamilyOptions = {}): Family {
  const dtypes = options.dtypes ?? DTYPES;
  const variants = options.variants ?? BUILDABLE_VARIANTS;
  const grid = options.grid ?? ((target, dtype, variant) => aotCandidates(target, dtype, variant).valid);
  return {
    name: CONV_DIRECT_FAMILY,
    targets: TARGET_NAMES,
    emitter: `@rocke/conv-direct@${CONV_DIRECT_VERSION} @rocke/ir@${IR_VERSION}`,
    candidates(target: TargetName): KernelCandidate[] {
      const out: KernelCandidate[] = [];
      for (const dtype of dtypes) for (const variant of variants) for (const spec of grid(target, dtype, variant)) out.push({ variant: spec.variant, spec: { ...spec } as JsonValue });
      return out;
    },
    build(candidate: KernelCandidate, target: TargetName, flavor: string): BuiltKernel {
      const parsed = parseSpec(candidate.spec);
      if (!parsed.ok) throw new TypeError(`not a conv-direct spec: ${parsed.reason}`);
      const spec = parsed.spec;
      if (spec.target !== target) throw new TypeError(`spec is for ${spec.target}, not ${target}`);
      const irFlavor = getTarget(target).flavor;
      if (irFlavor !== flavor) throw new TypeError(`conv-direct emits ${irFlavor} IR; the compiler expects ${flavor}`);
      const kernel = buildConvKernel(spec);
      return { kernelName: kernel.name, ir: printModule(kernel.module) };
    },
    describe: describeConvSpec,
    // conv-direct kernels take all their LDS dynamically: the launch plan's sharedBytes.
    launchLdsBytes(spec: JsonValue): number {
      const parsed = parseSpec(spec);
      return parsed.ok ? specGeometry(parsed.spec).ldsBytes : 0;
    },
  };
}

/**
 * The key fields of a conv-direct spec, e.g. `8x32x128 ck32 w2x4 we3 gm4`: tile_h×tile_w×tile_k,
 * the channel chunk, the wave layout, then waves_per_eu, group_merge, double buffering and tile_n when set.
 */
export function describeConvSpec(spec: JsonValue): string {
  const parsed = parseSpec(spec);
  if (!parsed.ok) return '?';
  const s = parsed.spec;
  return [
    `${s.tile_h}x${s.tile_w}x${s.tile_k}`,
    `ck${s.ck}`,
    `w${s.waves_m}x${s.waves_n}`,
    s.waves_per_eu === null ? '' : `we${s.waves_per_eu}`,
    s.variant === 'grouped' || s.group_merge !== 1 ? `gm${s.group_merge}` : '',
    s.double_buffer ? 'db' : '',
    s.tile_n !== 1 ? `n${s.tile_n}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * A problem set as conv-direct's compile-all family (`direct_fwd`): per target the union of
 * {@link selectProblemSpecs} over the shapes (a spec two shapes share is one entry). The same cache
 * identities as the AOT family's, so entries are shared with `--grid aot` runs and bench-prep.
 * `selections(target)` returns what was selected (computed once per target).
 */
export function problemSetFamily(problems: readonly NamedProblem[], options: SelectOptions = {}): { family: Family; selections(target: TargetName): ShapeSelection[] } {
  const memo = new Map<TargetName, ShapeSelection[]>();
  const selections = (target: TargetName): ShapeSelection[] => {
    let s = memo.get(target);
    if (!s) {
      s = selectProblemSpecs(problems, target, options);
      memo.set(target, s);
    }
    return s;
  };
  const grid = (target: TargetName, dtype: Dtype, variant: Variant): Spec[] => {
    const seen = new Set<string>();
    const out: Spec[] = [];
    for (const shape of selections(target)) {
      for (const v of shape.variants) {
        if (v.variant !== variant) continue;
        for (const spec of v.specs) {
          if (spec.dtype !== dtype) continue;
          const name = kernelName(spec);
          if (seen.has(name)) continue;
          seen.add(name);
          out.push(spec);
        }
      }
    }
    return out;
  };
  return { family: convDirectFamily({ grid }), selections };
}
