import { getTarget, printModule, VERSION as IR_VERSION, type Family, type KernelCandidate } from '@rocke/ir';
import { aotCandidates } from './candidates.js';
import type { Dtype } from './problem.js';
import { selectProblemSpecs, type NamedProblem, type SelectOptions, type ShapeSelection } from './selection.js';
import { kernelName, specGeometry, SpecSchema, VARIANTS, type Spec, type Variant } from './spec.js';
import { TARGET_NAMES, type TargetName } from './targets.js';
import { DTYPES } from './problem.js';
import { buildConvKernel } from './kernel/index.js';

declare const __PACKAGE_VERSION__: string;

/** Cache family name of the direct forward-convolution kernels. */
export const CONV_DIRECT_FAMILY = 'direct_fwd';

/** Options of {@link convDirectFamily}. */
export interface ConvDirectFamilyOptions {
  dtypes?: readonly Dtype[];
  variants?: readonly Variant[];
  /** The specs for one target, dtype and variant; default: the AOT grid (`aotCandidates(...).valid`). */
  grid?: (target: TargetName, dtype: Dtype, variant: Variant) => readonly Spec[];
}

/**
 * The direct-convolution kernels as a kernel family (`direct_fwd`): per target every dtype ×
 * variant of the shape-independent AOT grid (runtime shapes: one binary serves many problems), or
 * the specs `grid` names. A spec carries `waves_per_eu`, so a pruner can drop code-identical twins;
 * IR is `printModule(buildConvKernel(spec).module)`; all LDS is dynamic (the launch's shared bytes).
 */
export function convDirectFamily(options: ConvDirectFamilyOptions = {}): Family<Spec> {
  const dtypes = options.dtypes ?? DTYPES;
  const variants = options.variants ?? VARIANTS;
  const grid = options.grid ?? ((target, dtype, variant) => aotCandidates(target, dtype, variant).valid);
  return {
    name: CONV_DIRECT_FAMILY,
    targets: TARGET_NAMES,
    emitter: `@rocke/conv-direct@${__PACKAGE_VERSION__} @rocke/ir@${IR_VERSION}`,
    schema: SpecSchema,
    candidates(target: TargetName): KernelCandidate<Spec>[] {
      const out: KernelCandidate<Spec>[] = [];
      for (const dtype of dtypes) for (const variant of variants) for (const spec of grid(target, dtype, variant)) out.push({ variant: spec.variant, spec: { ...spec } });
      return out;
    },
    build({ spec }: KernelCandidate<Spec>, target: TargetName, flavor: string) {
      if (spec.target !== target) throw new TypeError(`spec is for ${spec.target}, not ${target}`);
      const irFlavor = getTarget(target).flavor;
      if (irFlavor !== flavor) throw new TypeError(`conv-direct emits ${irFlavor} IR; the compiler expects ${flavor}`);
      const kernel = buildConvKernel(spec);
      return { kernelName: kernel.name, ir: printModule(kernel.module) };
    },
    describe: describeConvSpec,
    launchLdsBytes: (spec: Spec) => specGeometry(spec).ldsBytes,
    wavesPerEu(spec: Spec) {
      const { waves_per_eu: wavesPerEu, ...rest } = spec;
      return { wavesPerEu, rest };
    },
  };
}

/**
 * The key fields of a spec, e.g. `8x32x128 ck32 w2x4 we3 gm4`: tile_h×tile_w×tile_k, the channel
 * chunk, the wave layout, then waves_per_eu, group_merge, double buffering and tile_n when set.
 */
export function describeConvSpec(s: Spec): string {
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
 * A problem set as a kernel family (`direct_fwd`): per target the union of
 * {@link selectProblemSpecs} over the shapes (a spec two shapes share is one entry). The same cache
 * identities as the AOT family's, so entries are shared with AOT runs and bench-prep.
 * `selections(target)` returns what was selected (computed once per target).
 */
export function problemSetFamily(problems: readonly NamedProblem[], options: SelectOptions = {}): { family: Family<Spec>; selections(target: TargetName): ShapeSelection[] } {
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
          const name = kernelName(spec);
          if (spec.dtype !== dtype || seen.has(name)) continue;
          seen.add(name);
          out.push(spec);
        }
      }
    }
    return out;
  };
  return { family: convDirectFamily({ grid }), selections };
}
