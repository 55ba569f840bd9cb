import { poll, toAppError } from '@sp/platform';

/**
 * Repeats a claim holder's own bookkeeping (complete, release) while the store answers 503, for up
 * to `waitMs`: during a Redis failover the claim itself is usually on the promoted replica, and a
 * holder that gave up at once would leave it to block every redelivery of the event until the
 * lease ran out (minutes), then let the work run a second time. The calls must be idempotent.
 */
export async function despiteFailover(call: () => Promise<void>, waitMs: number, pollMs: number): Promise<void> {
  let outage: unknown;
  const done = await poll(
    async () => {
      try {
        await call();
        return true;
      } catch (err) {
        if (toAppError(err).status !== 503) throw err;
        outage = err;
        return undefined;
      }
    },
    { waitMs, pollMs },
  );
  if (done === undefined) throw outage;
}
