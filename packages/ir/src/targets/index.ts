/** The three targets, built fresh per call so no state is shared between users. */
import { amdTarget, gfx942Atoms, gfx950Atoms } from './amd.js';
import { sm90Target } from './nvidia.js';
import type { Flavor, Target, TargetName } from './target.js';
import { FLAVORS, TargetError } from './target.js';

export interface TargetOptions {
  /** LLVM flavor of the emitted text (default `llvm22`). */
  readonly flavor?: Flavor;
  /** AMD only: `amdhsa_code_object_version` (500 = v5, default; 600 = v6; `null` = LLVM's default). */
  readonly codeObjectVersion?: number | null;
}

export const TARGET_NAMES: readonly TargetName[] = ['gfx950', 'gfx942', 'sm_90'];

/** Returns the target object for a name; unknown names or flavors are a TargetError. */
export function getTarget(name: string, options: TargetOptions = {}): Target {
  const flavor = options.flavor ?? 'llvm22';
  if (!FLAVORS.includes(flavor)) throw new TargetError(`unknown LLVM flavor ${JSON.stringify(flavor)} (known: ${FLAVORS.join(', ')})`);
  const cov = options.codeObjectVersion === null ? undefined : (options.codeObjectVersion ?? 500);
  switch (name) {
    case 'gfx950':
      return amdTarget({ name: 'gfx950', ldsBytes: 160 * 1024, atoms: gfx950Atoms(), codeObjectVersion: cov });
    case 'gfx942':
      return amdTarget({ name: 'gfx942', ldsBytes: 64 * 1024, atoms: gfx942Atoms(), codeObjectVersion: cov });
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
