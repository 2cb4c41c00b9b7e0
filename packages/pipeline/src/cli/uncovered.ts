import type { TargetName } from '../compile/llvm-toolchain.js';
import type { NamedProblem } from './problem-input.js';
import { cliOp } from './wiring.js';

/** A shape that no kernel serves on a target, and why. */
export interface Uncovered {
  name: string;
  target: TargetName;
  label: string;
  /** The family's decisive reason: the rule that rejects the most candidates of the shape's first apt variant. */
  reason: string;
}

function uncovered(name: string, problem: NamedProblem['problem'], target: TargetName): Uncovered {
  return { name, target, label: cliOp.label(problem), reason: cliOp.uncoveredReason(problem, target) };
}

/** A selection of a problem set: per apt variant, how many candidates are valid. */
interface CoveredSelection {
  name: string;
  problem: NamedProblem['problem'];
  target: TargetName;
  variants: readonly { valid: number }[];
}

/** The selections whose apt variants have no valid candidate at all (a variant left out by `--variant` is not counted). */
export function uncoveredSelections(selections: readonly CoveredSelection[]): Uncovered[] {
  return selections.filter((s) => s.variants.length > 0 && s.variants.every((v) => v.valid === 0)).map((s) => uncovered(s.name, s.problem, s.target));
}

/** The problems with no valid candidate in any apt variant on `target`. */
export function uncoveredProblems(problems: readonly NamedProblem[], target: TargetName): Uncovered[] {
  return problems.filter(({ problem }) => cliOp.isUncovered(problem, target)).map((p) => uncovered(p.name, p.problem, target));
}

/** One line per uncovered shape: `name (label) on target: reason`. */
export function formatUncovered(u: Uncovered): string {
  return `${u.name === 'problem' ? u.label : `${u.name} (${u.label})`} on ${u.target}: ${u.reason}`;
}
