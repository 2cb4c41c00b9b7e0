/** The three targets, built fresh per call so no state is shared between users. */
import { amdTarget, gfx942Atoms, gfx950Atoms } from './amd.js';
import { sm90Target } from './nvidia.js';
import type { Flavor, MmaAtom, Target, TargetName } from './target.js';
import { FLAVORS, TARGET_NAMES, TargetError } from './target.js';

export interface TargetOptions {
  /** LLVM flavor of the emitted text (default `llvm22`). */
  readonly flavor?: Flavor;
  /** AMD only: `amdhsa_code_object_version` (500 = v5, default; 600 = v6; `null` = LLVM's default). */
  readonly codeObjectVersion?: number | null;
}

export { TARGET_NAMES };

/** Returns the (frozen) target object for a name; unknown names or flavors are a TargetError. */
export function getTarget(name: string, options: TargetOptions = {}): Target {
  const flavor = options.flavor ?? 'llvm22';
  if (!FLAVORS.includes(flavor)) throw new TargetError(`unknown LLVM flavor ${JSON.stringify(flavor)} (known: ${FLAVORS.join(', ')})`);
  const cov = options.codeObjectVersion === null ? undefined : (options.codeObjectVersion ?? 500);
  return Object.freeze(build(name, cov));
}

function build(name: string, cov: number | undefined): Target {
  switch (name) {
    case 'gfx950':
      return amdTarget({ name: 'gfx950', ldsBytes: 160 * 1024, computeUnits: 256, atoms: gfx950Atoms(), ldsDmaSizes: [1, 2, 4, 12, 16], codeObjectVersion: cov });
    case 'gfx942':
      return amdTarget({ name: 'gfx942', ldsBytes: 64 * 1024, computeUnits: 304, atoms: gfx942Atoms(), ldsDmaSizes: [1, 2, 4], codeObjectVersion: cov });
    case 'sm_90':
      return sm90Target();
    default:
      throw new TargetError(`unknown target ${JSON.stringify(name)} (known: ${TARGET_NAMES.join(', ')})`);
  }
}

/** Ready-made targets with default options. */
export const gfx950: Target = getTarget('gfx950');
export const gfx942: Target = getTarget('gfx942');
export const sm_90: Target = getTarget('sm_90');

/** The ready-made targets by name: the one source of each target's hardware facts. */
export const TARGETS: Readonly<Record<TargetName, Target>> = Object.freeze({ gfx950, gfx942, sm_90 });

/**
 * The atom whose `intrinsic` is `name` (e.g. `llvm.amdgcn.mfma.f32.16x16x32.bf16`), across all
 * targets; undefined for other calls. Lets an interpreter find the lane layout of an MMA call.
 * Operand order of the call: AMD `(A, B, C, cbsz, abid, blgp)` with `aType`/`bType` vectors
 * (gfx942 bf16: the same bits as `<4 x i16>`); NVIDIA `(a0..a3, b0, b1, c0..c3)` where register q
 * packs elements `2q` (bits 15:0) and `2q+1` of the atom's `aType`/`bType` vector, result `{f32 ×4}`.
 */
export function atomForIntrinsic(name: string): MmaAtom | undefined {
  for (const t of [gfx950, gfx942, sm_90]) {
    const a = t.atoms.find((x) => x.intrinsic === name);
    if (a) return a;
  }
  return undefined;
}
