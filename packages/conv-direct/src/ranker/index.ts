/**
 * The ranker: chooses among a problem's candidates without a GPU, by the cost model
 * (cost-model.ts) with coefficients fitted on measured bench rows.
 */
export { RankerModelSchema, defaultRankerModel, rankerEstimate, rankerExplain, rankerOrder, rankerScore, type RankedCandidate, type RankerModel } from './model.js';
export {
  RankerRowsSchema,
  evaluateRanker,
  fitRanker,
  generatedModelSource,
  leaveGroupOut,
  leaveOneClassOut,
  leaveOneShapeOut,
  mergeRows,
  problemClass,
  problemKey,
  rowsFromBenchDetails,
  rowsSource,
  type Evaluation,
  type FitOptions,
  type HeldOutShape,
  type RankerRows,
  type RunMeta,
} from './fit.js';
export { specFromKernelName } from './spec-from-name.js';
export { chooseConv, type ChooseOptions, type ConvChoice, type ConvRecordChoice } from './choose.js';
