/**
 * The ranker: chooses among a problem's candidates without a GPU, by a cost model over problem and
 * spec features fitted on measured bench rows.
 */
export { RANKER_FEATURES, rankerFeatures, type RankerFeature } from './features.js';
export { RankerModelSchema, defaultRankerModel, rankerExplain, rankerOrder, rankerScore, type RankedCandidate, type RankerModel } from './model.js';
export { RankerRowsSchema, evaluateRanker, fitRanker, generatedModelSource, leaveOneShapeOut, rowsFromBenchDetails, type FitOptions, type HeldOutShape, type RankerRows } from './fit.js';
export { specFromKernelName } from './spec-from-name.js';
export { chooseConv, type ChooseOptions, type ConvChoice, type ConvRecordChoice } from './choose.js';
