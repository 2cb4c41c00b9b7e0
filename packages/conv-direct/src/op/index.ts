// conv-direct as a command line reads and reports it: problems from flags, suite rows, MIOpen logs
// and operand shapes; the plan report; why a problem has no kernel.
export {
  OPERAND_PROBLEM_FLAGS,
  PROBLEM_FLAGS,
  PROBLEM_SET_USAGE,
  PROBLEM_USAGE,
  operandShapes,
  problemFromFlags,
  problemFromOperands,
  problemFromSuiteRow,
  readMiopenLog,
  type MiopenLog,
} from './problem-input.js';
export { isUncovered, planReport, specDetail, uncoveredReason, type CachedKernels, type PlanReport, type PlanReportOptions, type RankingEntry } from './plan-report.js';
