/** Bad input to a split-reduce planner or host helper; the message says what and why, with the numbers involved. */
export class SplitReduceError extends Error {
  override readonly name = 'SplitReduceError';
}
