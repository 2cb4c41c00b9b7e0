import { benchVariants, problemCoverage, problemLabel, type NamedProblem, type Problem, type ShapeSelection } from '@rocke/conv-direct';
import type { TargetName } from '../compile/llvm-toolchain.js';

/** A shape that no kernel serves on a target, and why. */
export interface Uncovered {
  name: string;
  target: TargetName;
  label: string;
  /** conv-direct's decisive reason: the rule that rejects the most candidates of the shape's first apt variant. */
  reason: string;
}

function uncovered(name: string, problem: Problem, target: TargetName): Uncovered {
  const variant = benchVariants(problem)[0]!;
  const reason = problemCoverage(problem, target, { variant }).reason ?? `no valid ${variant} candidate on ${target}`;
  return { name, target, label: problemLabel(problem), reason };
}

/** The selections whose apt variants have no valid candidate at all (a variant left out by `--variant` is not counted). */
export function uncoveredSelections(selections: readonly ShapeSelection[]): Uncovered[] {
  return selections.filter((s) => s.variants.length > 0 && s.variants.every((v) => v.valid === 0)).map((s) => uncovered(s.name, s.problem, s.target));
}

/** The problems with no valid candidate in any apt variant on `target`. */
export function uncoveredProblems(problems: readonly NamedProblem[], target: TargetName): Uncovered[] {
  return problems.filter(({ problem }) => benchVariants(problem).every((variant) => problemCoverage(problem, target, { variant }).valid === 0)).map((p) => uncovered(p.name, p.problem, target));
}

/** One line per uncovered shape: `name (label) on target: reason`. */
export function formatUncovered(u: Uncovered): string {
  return `${u.name === 'problem' ? u.label : `${u.name} (${u.label})`} on ${u.target}: ${u.reason}`;
}
