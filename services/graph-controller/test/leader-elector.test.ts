import { afterEach, describe, expect, it } from '@jest/globals';
import { createLeaderElector, type LeaderElector } from '../src/leader-elector.js';
import { LeaseConflictError, type LeaseLock, type LeaseRecord, type ObservedLease } from '../src/lease-lock.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { eventually, sleep } from '../../../test/support/eventually.js';

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
afterEach(async () => {
  await Promise.all(electors.splice(0).map((elector) => elector.stop({ release: false })));
});

function elector(lock: LeaseLock, identity: string, log: string[], timings = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 }) {
  const created = createLeaderElector({
    lock,
    identity,
    ...timings,
    logger: silentLogger(),
    onStartedLeading: () => log.push(`${identity} started`),
    onStoppedLeading: () => log.push(`${identity} stopped`),
  });
  electors.push(created);
  created.start();
  return created;
}

describe('leader elector', () => {
  it('should acquire an absent lease and keep renewing it', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    expect(lease.current()).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    const { renewTime, acquireTime } = lease.current()!;
    await eventually(() => lease.state.updates >= 2);
    expect(lease.current()!.renewTime!.getTime()).toBeGreaterThan(renewTime!.getTime());
    expect(lease.current()!.acquireTime).toEqual(acquireTime);
    expect(log).toEqual(['a started']);
  });

  it('should not take a lease another replica keeps renewing', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    const b = elector(lease.lock, 'b', log);
    await sleep(1500); // longer than the lease duration
    expect(b.isLeader()).toBe(false);
    expect(lease.current()?.holderIdentity).toBe('a');
  });

  it('should take over a lease that was not renewed for its duration', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    const b = elector(lease.lock, 'b', log);
    await sleep(150);
    await a.stop({ release: false }); // a crash, as far as b can tell
    const stoppedAt = Date.now();
    await eventually(() => b.isLeader(), 3000);
    const handover = Date.now() - stoppedAt;
    expect(handover).toBeGreaterThan(700);
    expect(handover).toBeLessThan(1000 + 2 * 120 + 400);
    expect(lease.current()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('should hand the lease over at once when the leader releases it', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    const b = elector(lease.lock, 'b', log);
    await sleep(150);
    await a.stop({ release: true });
    expect(lease.current()).toMatchObject({ holderIdentity: undefined, leaseDurationSeconds: 1 });
    const releasedAt = Date.now();
    await eventually(() => b.isLeader(), 3000);
    expect(Date.now() - releasedAt).toBeLessThan(500); // not the lease duration (1 s)
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
  });

  it('should stop leading when renewals fail past the renew deadline', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    lease.state.fail = true;
    const failingSince = Date.now();
    await eventually(() => !a.isLeader(), 2000);
    const lost = Date.now() - failingSince;
    expect(lost).toBeGreaterThan(400);
    expect(lost).toBeLessThan(600 + 350); // the renew deadline, well before the lease duration would end
    await eventually(() => log.length === 2);
    expect(log).toEqual(['a started', 'a stopped']);
    lease.state.fail = false;
    await eventually(() => a.isLeader(), 2000); // still its lease: it takes it back
  });

  it('should stop leading at the renew deadline even while a renewal hangs', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log);
    await eventually(() => a.isLeader());
    lease.state.hang = true;
    await eventually(() => log.includes('a stopped'), 1000);
    expect(a.isLeader()).toBe(false);
  });

  it('should stop leading at once when another replica holds the lease', async () => {
    const lease = memoryLease();
    const log: string[] = [];
    const a = elector(lease.lock, 'a', log, { leaseDurationMs: 5000, renewDeadlineMs: 4000, retryPeriodMs: 100 });
    await eventually(() => a.isLeader());
    const current = await lease.lock.get();
    await lease.lock.update({ ...current!.record, holderIdentity: 'intruder' }, current!.resourceVersion);
    await eventually(() => !a.isLeader(), 500);
    expect(log).toEqual(['a started', 'a stopped']);
  });
});
