// Starting several dependencies at once with `Promise.all` leaks the ones that started when
// another fails: their processes and servers are never assigned, so nothing stops them, and they
// keep jest running after the run (a CI run that failed then hung until its time limit).

/** A dependency to start and how to stop it once started. */
export type Start<T> = readonly [started: Promise<T>, stop: (value: T) => unknown];

/**
 * Starts every dependency at once; if one fails, stops those that started, then throws the first
 * failure. Resolves to the started values in order.
 */
export async function startAll<T extends readonly unknown[]>(starts: { readonly [K in keyof T]: Start<T[K]> }): Promise<T> {
  const list = starts as unknown as ReadonlyArray<Start<unknown>>;
  const outcomes = await Promise.allSettled(list.map(([started]) => started));
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure === undefined) return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
  // A stop that fails too must not hide the failure that matters: the start's.
  const stops = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [Promise.resolve().then(() => list[index]![1](outcome.value))] : []));
  await Promise.allSettled(stops);
  throw failure.reason;
}
