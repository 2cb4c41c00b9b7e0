/**
 * Runs `task` over `items` with at most `concurrency` in flight; results keep the input order.
 * A task that throws does not stop the others: its slot holds `{ ok: false, error }`.
 * When `signal` aborts, tasks not yet started are not started (their slot holds the abort error).
 */
export async function runPool<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<({ ok: true; value: R } | { ok: false; error: unknown })[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  const results = new Array<{ ok: true; value: R } | { ok: false; error: unknown }>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      if (signal?.aborted) {
        results[i] = { ok: false, error: signal.reason ?? new Error('aborted') };
        continue;
      }
      try {
        results[i] = { ok: true, value: await task(items[i] as T, i) };
      } catch (error) {
        results[i] = { ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
