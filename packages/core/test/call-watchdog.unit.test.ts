import { describe, expect, it } from '@jest/globals';
import { createCallWatchdog } from '../src/call-watchdog.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);
const after = <T>(ms: number, value?: T): Promise<T | undefined> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

/** Blocks this process' event loop, as a long garbage collection or a throttled container does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('createCallWatchdog', () => {
  it('should give the value or the failure of calls that settle in time, and abandon nothing', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(30, { onTimeout: () => abandoned++ });
    await expect(calls.watch(() => Promise.resolve(42))).resolves.toBe(42);
    await expect(calls.watch(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(calls.watch(() => {
      throw new Error('not sent');
    })).rejects.toThrow('not sent');
    // Calls that each take most of the deadline, started at every point of the watchdog's period.
    await Promise.all(Array.from({ length: 20 }, (_, i) => after(i * 3).then(() => calls.watch(() => after(20, i)))));
    await after(60);
    expect(abandoned).toBe(0);
  });

  it('should fail every call in flight once one has waited the deadline, after abandoning what they share', async () => {
    const events: string[] = [];
    const calls = createCallWatchdog(40, { what: 'Redis reply', onTimeout: () => events.push('abandoned') });
    const started = performance.now();
    const oldest = calls.watch(never).catch((err: Error) => (events.push('oldest failed'), err.message));
    await after(15);
    const younger = calls.watch(never).catch((err: Error) => (events.push('younger failed'), err.message));
    expect(await oldest).toBe('Redis reply timed out after 40 ms');
    const elapsed = performance.now() - started;
    expect(await younger).toBe('Redis reply timed out after 40 ms');
    expect(events).toEqual(['abandoned', 'oldest failed', 'younger failed']);
    expect(elapsed).toBeGreaterThanOrEqual(40);
    expect(elapsed).toBeLessThan(40 * 1.25 + 250);
    // The next calls are watched afresh.
    await expect(calls.watch(() => after(10, 'answer'))).resolves.toBe('answer');
    await expect(createCallWatchdog(10).watch(never)).rejects.toThrow(/^timed out after 10 ms$/);
  });

  it('should fail a call that gets no answer while other calls keep being answered (a Cluster node that hangs)', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(40, { onTimeout: () => abandoned++ });
    const started = performance.now();
    const hung = calls.watch(never);
    // Another node's calls, one after another, each answered in 2 ms: an answer every few ms.
    let answering = true;
    const answered = async (): Promise<void> => {
      while (answering) await calls.watch(() => after(2)).catch(() => undefined);
    };
    const others = answered();
    try {
      await expect(Promise.race([hung, after(1000, 'still waiting after 1 s')])).rejects.toThrow('timed out after 40 ms');
      expect(performance.now() - started).toBeLessThan(40 * 1.25 + 250);
      expect(abandoned).toBe(1);
    } finally {
      answering = false;
      await others;
    }
  });

  it('should not hold a stall of this process against calls whose answer came meanwhile, and still fail a call never answered', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(30, { onTimeout: () => abandoned++ });
    // The answer arrives while the process is stalled past the 30 ms deadline, and is read after
    // the timers phase, as a socket's data is (the poll phase; here the check phase).
    const answered = (): Promise<string> => new Promise((resolve) => setTimeout(() => setImmediate(() => resolve('answer')), 10));
    const soft = calls.watch(answered);
    stall(120);
    await expect(soft).resolves.toBe('answer');
    // A call sent only after the stall (its answer 10 ms later) gets the deadline again.
    let sent = false;
    const late = calls.watch(() => new Promise((resolve) => setImmediate(() => ((sent = true), setTimeout(resolve, 10)))));
    stall(120);
    expect(sent).toBe(false);
    await expect(late).resolves.toBeUndefined();
    expect(abandoned).toBe(0);
    // A call never answered still fails, the stall notwithstanding.
    const silent = calls.watch(never);
    stall(120);
    await expect(silent).rejects.toThrow('timed out after 30 ms');
    expect(abandoned).toBe(1);
  });

  it('should give a call its time again once only, so a process that keeps stalling still fails a call never answered', async () => {
    const calls = createCallWatchdog(30);
    let outcome = 'waiting';
    calls.watch(never).catch((err: Error) => (outcome = err.message));
    for (let i = 0; i < 10 && outcome === 'waiting'; i++) {
      stall(120);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(outcome).toBe('timed out after 30 ms');
  });
});
