/**
 * The contract between the call lowerers (intrinsics.ts and the wgmma lowerers of wgmma.ts) and
 * the compiler: what a call becomes and what a lowerer may ask about it. Its own module so the
 * lowerers depend on it rather than on each other.
 */
import type { Instruction, Value } from '../ir.js';
import type { Target } from '../targets/target.js';
import type { Collective } from './collectives.js';
import type { Machine, Op } from './machine.js';

/** What a call compiles to. */
export type Lowered =
  | { readonly kind: 'op'; readonly op: Op }
  | { readonly kind: 'none' }
  | { readonly kind: 'barrier' }
  | { readonly kind: 'collective'; readonly collective: Collective };

export interface CallContext {
  slot(v: Value): number;
  /** Result slot, -1 for void calls. */
  readonly dest: number;
  readonly machine: Machine;
  readonly target: Target;
  /** Where the call is (`@k block %b instruction #i`), for errors raised while it runs. */
  site(): string;
  /** The instructions right before and after the call in its block (an AMD barrier must sit between its fences). */
  readonly before: Instruction | undefined;
  readonly after: Instruction | undefined;
}
