import { describe, expect, it } from '@jest/globals';
import type { ChangeKind } from '../src/invalidation-hub.js';
import { createMemoryStore, type MemoryStore } from '../src/memory-store.js';

/** A memory store on a clock the test moves, with what it announced; no timer (the test runs the expiry). */
function storeOnClock(capacity = 100_000): { store: MemoryStore; clock: { now: number }; changes: string[]; expired: number[] } {
  const clock = { now: 1_700_000_000_000 };
  const changes: string[] = [];
  const expired: number[] = [];
  const store = createMemoryStore({
    capacity,
    now: () => clock.now,
    expiryIntervalMs: 0,
    onChange: (key: string, kind: ChangeKind) => changes.push(`${kind} ${key}`),
    events: { expired: (count) => expired.push(count) },
  });
  return { store, clock, changes, expired };
}

/** Moves the clock in steps of 100 ms (the timer's period) up to `ms`, running the expiry at each. */
function runFor(setup: ReturnType<typeof storeOnClock>, ms: number): void {
  for (let passed = 0; passed < ms; passed += 100) {
    setup.clock.now += 100;
    setup.store.expireDue();
  }
}

const value = Buffer.from('v');

describe('memory store, active expiry', () => {
  it('should expire and announce an entry nobody reads within 200 ms of its expiry', async () => {
    const setup = storeOnClock();
    await setup.store.set('session:short', value, 200);
    runFor(setup, 100);
    expect(setup.changes).toEqual(['WRITTEN session:short']);
    runFor(setup, 300);
    expect(setup.changes).toEqual(['WRITTEN session:short', 'EXPIRED session:short']);
    expect(setup.store.size()).toBe(0);
    expect(setup.expired).toEqual([1]);
  });

  it.each([30_000, 90_000, 3_600_000])('should expire an entry of a %i ms TTL on time, however far ahead it was set', async (ttlMs) => {
    const setup = storeOnClock();
    await setup.store.set('k', value, ttlMs);
    runFor(setup, ttlMs - 100);
    expect(setup.store.size()).toBe(1);
    runFor(setup, 300);
    expect(setup.changes).toEqual(['WRITTEN k', 'EXPIRED k']);
  });

  it('should follow the newest expiry of a key written again, and never expire one written without', async () => {
    const setup = storeOnClock();
    await setup.store.set('later', value, 500);
    await setup.store.set('later', value, 120_000);
    await setup.store.set('never', value, 500);
    await setup.store.set('never', value, 0);
    await setup.store.increment('counter', 1, 500);
    await setup.store.increment('counter', 1, 0); // keeps the counter's expiry
    runFor(setup, 1000);
    expect(setup.changes.filter((change) => change.startsWith('EXPIRED'))).toEqual(['EXPIRED counter']);
    runFor(setup, 120_000);
    expect(setup.changes.filter((change) => change.startsWith('EXPIRED'))).toEqual(['EXPIRED counter', 'EXPIRED later']);
    expect(await setup.store.get('never')).toBeDefined();
  });

  it('should announce nothing for an entry removed, expired on read or evicted before its expiry run', async () => {
    const setup = storeOnClock(2);
    await setup.store.set('removed', value, 100);
    await setup.store.remove('removed');
    await setup.store.set('read', value, 100);
    setup.clock.now += 150;
    expect(await setup.store.get('read')).toBeUndefined();
    await setup.store.set('evicted', value, 100);
    await setup.store.set('a', value, 0);
    await setup.store.set('b', value, 0);
    runFor(setup, 500);
    expect(setup.changes).toEqual(['WRITTEN removed', 'REMOVED removed', 'WRITTEN read', 'EXPIRED read', 'WRITTEN evicted', 'WRITTEN a', 'EVICTED evicted', 'WRITTEN b']);
  });

  it('should bound the work of one run: 30,000 entries expiring at once go over several runs, each announced once', async () => {
    const setup = storeOnClock();
    await Promise.all(Array.from({ length: 30_000 }, (_, i) => setup.store.set(`k${i}`, value, 1000)));
    setup.clock.now += 1200;
    const runs: number[] = [];
    for (let expired = setup.store.expireDue(); expired > 0; expired = setup.store.expireDue()) runs.push(expired);
    expect(Math.max(...runs)).toBeLessThanOrEqual(20_000);
    expect(runs.reduce((sum, n) => sum + n, 0)).toBe(30_000);
    expect(new Set(setup.changes.filter((change) => change.startsWith('EXPIRED'))).size).toBe(30_000);
    expect(setup.store.size()).toBe(0);
  });

  it('should still expire entries written while the clock had gone back', async () => {
    const setup = storeOnClock();
    runFor(setup, 1000);
    setup.clock.now -= 60_000;
    await setup.store.set('k', value, 200);
    runFor(setup, 400);
    expect(setup.changes).toEqual(['WRITTEN k', 'EXPIRED k']);
  });
});
