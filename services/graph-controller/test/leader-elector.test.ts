import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createLeaderElector, type LeaderElector } from '../src/kube/leader-elector.js';
import { LeaseConflictError, type LeaseLock, type LeaseRecord, type ObservedLease } from '../src/kube/lease-lock.js';
import { silentLogger } from '../../../test/support/silent-logger.js';

/** One Lease in memory with the API server's optimistic concurrency; `fail` makes every call reject, `hang` never answer. */
function memoryLease() {
  let stored: ObservedLease | undefined;
  let version = 0;
  const state = { fail: false, hang: false, updates: 0 };
  const gate = <T>(work: () => T): Promise<T> => {
    if (state.hang) return new Promise<T>(() => undefined);
    return state.fail ? Promise.reject(new Error('api down')) : Promise.resolve().then(work);
  };
  const write = (record: LeaseRecord): ObservedLease => {
    version += 1;
    stored = { record: { ...record }, resourceVersion: String(version) };
    return stored;
  };
  const lock: LeaseLock = {
    description: 'platform/graph-controller',
    get: () => gate(() => stored && { record: { ...stored.record }, resourceVersion: stored.resourceVersion }),
    create: (record) =>
      gate(() => {
        if (stored) throw new LeaseConflictError('exists');
        return write(record);
      }),
    update: (record, resourceVersion) =>
      gate(() => {
        if (stored?.resourceVersion !== resourceVersion) throw new LeaseConflictError('stale');
        state.updates += 1;
        return write(record);
      }),
  };
  return { lock, state, current: () => stored?.record };
}

const electors: LeaderElector[] = [];
beforeEach(() => {
  jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
});
afterEach(async () => {
  const stopping = Promise.all(electors.splice(0).map((elector) => elector.stop({ release: false })));
  await jest.advanceTimersByTimeAsync(200);
  await stopping;
  jest.useRealTimers();
});

/** The test's clock: jest's fake timers and Date, injected into the elector as its monotonic clock. */
const clock = (): number => Date.now();
const STEP_MS = 10;

/** Advances the fake clock until `condition` holds; returns how long that took, or fails past `maxMs`. */
async function until(condition: () => boolean, maxMs: number): Promise<number> {
  const startedAt = clock();
  while (!condition()) {
    if (clock() - startedAt > maxMs) throw new Error(`condition not met within ${maxMs} ms of the test clock`);
    await jest.advanceTimersByTimeAsync(STEP_MS);
  }
  return clock() - startedAt;
}

function elector(lock: LeaseLock, identity: string, log: string[], timings = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 }) {
  const created = createLeaderElector({
    lock,
    identity,
    ...timings,
    logger: silentLogger(),
    now: clock,
    wallClock: Date.now,
  });
  electors.push(created);
  created.start({ onStartedLeading: () => log.push(`${identity} started`), onStoppedLeading: () => log.push(`${identity} stopped`) });
  return created;
}

/** A fresh lease that replica `a` (default timings) has just acquired, and the log both replicas write to. */
async function leaseHeldByA(): Promise<{ lease: ReturnType<typeof memoryLease>; log: string[]; a: LeaderElector }> {
  const lease = memoryLease();
  const log: string[] = [];
  const a = elector(lease.lock, 'a', log);
  await until(() => a.isLeader(), 0);
  return { lease, log, a };
}

/** Stops an elector while the clock runs (its stop waits at most one retry period for an attempt in flight). */
async function stop(target: LeaderElector, release: boolean): Promise<void> {
  const stopping = target.stop({ release });
  await jest.advanceTimersByTimeAsync(0);
  await stopping;
}

describe('leader elector', () => {
  it('should acquire an absent lease and keep renewing it', async () => {
    const { lease, log } = await leaseHeldByA();
    expect(lease.current()).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    const { renewTime, acquireTime } = lease.current()!;
    // One renewal each retry period.
    await jest.advanceTimersByTimeAsync(250);
    expect(lease.state.updates).toBe(2);
    expect(lease.current()!.renewTime!.getTime()).toBe(renewTime!.getTime() + 200);
    expect(lease.current()!.acquireTime).toEqual(acquireTime);
    expect(log).toEqual(['a started']);
  });

  it('should not take a lease another replica keeps renewing', async () => {
    const { lease, log } = await leaseHeldByA();
    const b = elector(lease.lock, 'b', log);
    await jest.advanceTimersByTimeAsync(5000); // five lease durations
    expect(b.isLeader()).toBe(false);
    expect(lease.current()?.holderIdentity).toBe('a');
    expect(log).toEqual(['a started']);
  });

  it('should take over a lease that was not renewed for its duration', async () => {
    const { lease, log, a } = await leaseHeldByA();
    const b = elector(lease.lock, 'b', log);
    await jest.advanceTimersByTimeAsync(150);
    await stop(a, false); // a crash, as far as b can tell
    // b saw a's last renewal (at most one retry period before the stop) within its own retry
    // period (100 ms + up to 20% jitter), and takes over a lease duration after seeing it.
    const handover = await until(() => b.isLeader(), 3000);
    expect(handover).toBeGreaterThanOrEqual(1000 - 100);
    expect(handover).toBeLessThanOrEqual(1000 + 2 * 120 + STEP_MS);
    expect(lease.current()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('should hand the lease over at once when the leader releases it', async () => {
    const { lease, log, a } = await leaseHeldByA();
    const b = elector(lease.lock, 'b', log);
    await jest.advanceTimersByTimeAsync(150);
    await stop(a, true);
    expect(lease.current()).toMatchObject({ holderIdentity: undefined, leaseDurationSeconds: 1 });
    // b's next attempt, not the lease duration (1 s).
    expect(await until(() => b.isLeader(), 3000)).toBeLessThanOrEqual(120 + STEP_MS);
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
  });

  it('should stop leading when renewals fail past the renew deadline', async () => {
    const { lease, log, a } = await leaseHeldByA();
    await jest.advanceTimersByTimeAsync(50);
    lease.state.fail = true;
    const lastRenewal = lease.current()!.renewTime!.getTime();
    // Leadership ends the renew deadline after the last successful renewal, well before the lease duration would.
    await until(() => !a.isLeader(), 2000);
    expect(clock() - lastRenewal).toBeGreaterThanOrEqual(600);
    expect(clock() - lastRenewal).toBeLessThanOrEqual(600 + STEP_MS);
    await until(() => log.length === 2, 0);
    expect(log).toEqual(['a started', 'a stopped']);
    lease.state.fail = false;
    expect(await until(() => a.isLeader(), 2000)).toBeLessThanOrEqual(120 + STEP_MS); // still its lease: it takes it back at its next attempt
  });

  it('should stop leading at the renew deadline even while a renewal hangs', async () => {
    const { lease, log, a } = await leaseHeldByA();
    await jest.advanceTimersByTimeAsync(50);
    lease.state.hang = true;
    const lastRenewal = lease.current()!.renewTime!.getTime();
    await until(() => log.includes('a stopped'), 1000);
    expect(clock() - lastRenewal).toBeGreaterThanOrEqual(600);
    expect(clock() - lastRenewal).toBeLessThanOrEqual(600 + STEP_MS);
    expect(a.isLeader()).toBe(false);
  });

  it('should stop leading at once when another replica holds the lease', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log, { leaseDurationMs: 5000, renewDeadlineMs: 4000, retryPeriodMs: 100 });
    await until(() => a.isLeader(), 0);
    const current = await lease.lock.get();
    await lease.lock.update({ ...current!.record, holderIdentity: 'intruder' }, current!.resourceVersion);
    // At its next renewal, not at its renew deadline (4 s).
    expect(await until(() => !a.isLeader(), 500)).toBeLessThanOrEqual(100 + STEP_MS);
    expect(log).toEqual(['a started', 'a stopped']);
  });
});
