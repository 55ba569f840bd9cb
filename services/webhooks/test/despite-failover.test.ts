import { describe, expect, it } from '@jest/globals';
import { unavailable } from '@sp/core';
import { despiteFailover } from '../src/events/despite-failover.js';

/** A store that answers 503 until `backAt` on a clock that moves only when the code under test sleeps. */
function failingUntil(backAt: number) {
  const clock = { now: 0 };
  const calls: number[] = [];
  let succeeded: () => void = () => undefined;
  const success = new Promise<void>((resolve) => (succeeded = resolve));
  const call = (): Promise<void> => {
    calls.push(clock.now);
    if (clock.now < backAt) return Promise.reject(unavailable('store'));
    succeeded();
    return Promise.resolve();
  };
  const timing = { now: () => clock.now, sleep: (ms: number) => Promise.resolve((clock.now += ms)) };
  return { clock, calls, call, success, timing };
}

describe('a claim holder’s bookkeeping during a store failover', () => {
  it('should succeed in the foreground when the store comes back within waitMs', async () => {
    const store = failingUntil(300);
    await despiteFailover(store.call, { waitMs: 1000, pollMs: 50, backgroundMs: 60_000, ...store.timing });
    expect(store.calls.at(-1)).toBe(300);
  });

  it('should answer the outage after waitMs and complete in the background once the store is back, within the lease', async () => {
    const store = failingUntil(30_000);
    await expect(despiteFailover(store.call, { waitMs: 8000, pollMs: 50, backgroundMs: 100_000, ...store.timing })).rejects.toMatchObject({ status: 503 });
    const givenUpAt = store.clock.now;
    expect(givenUpAt).toBeGreaterThanOrEqual(8000);
    expect(givenUpAt).toBeLessThan(9000);
    await store.success;
    expect(store.calls.at(-1)).toBeGreaterThanOrEqual(30_000);
    expect(store.calls.at(-1)).toBeLessThan(31_000);
    // Past waitMs the store is tried every 500 ms, not every 50.
    const background = store.calls.filter((at) => at > givenUpAt);
    expect(background.length).toBeLessThanOrEqual(Math.ceil((30_000 - givenUpAt) / 500) + 1);
  });

  it('should stop trying when the lease is over', async () => {
    const store = failingUntil(Number.POSITIVE_INFINITY);
    await expect(despiteFailover(store.call, { waitMs: 8000, pollMs: 50, backgroundMs: 10_000, ...store.timing })).rejects.toMatchObject({ status: 503 });
    for (let i = 0; i < 100; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(store.clock.now).toBeGreaterThanOrEqual(18_000);
    expect(store.clock.now).toBeLessThan(19_000);
  });

  it('should not repeat a call that fails for another reason than the store being out', async () => {
    let calls = 0;
    const call = (): Promise<void> => {
      calls += 1;
      return Promise.reject(new Error('script error'));
    };
    await expect(despiteFailover(call, { waitMs: 8000, pollMs: 50, backgroundMs: 100_000 })).rejects.toThrow('script error');
    expect(calls).toBe(1);
  });
});
