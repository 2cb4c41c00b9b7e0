/** A problem that cannot be planned with the given spec; the message says why, with the sizes involved. */
export class PlanError extends Error {
  override readonly name = 'PlanError';
}
