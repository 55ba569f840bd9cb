import { describe, expect, it } from '@jest/globals';
import { createCallWatchdog } from '../src/call-watchdog.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);
const after = <T>(ms: number, value?: T): Promise<T | undefined> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

/** Blocks this process' event loop, as a long garbage collection or a throttled container does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

// A deadline far above the answers' times and STALL_MS (50 ms): a busy machine delays timers by
// tens of milliseconds without that being a stall (issue 40: a 30 ms deadline on answers of 10 ms
// failed with a second make test beside). The stalls below block for twice the deadline.
const DEADLINE_MS = 300;

describe('createCallWatchdog', () => {
  it('should give the value or the failure of calls that settle in time, and abandon nothing', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(DEADLINE_MS, { onTimeout: () => abandoned++ });
    await expect(calls.watch(() => Promise.resolve(42))).resolves.toBe(42);
    await expect(calls.watch(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(calls.watch(() => {
      throw new Error('not sent');
    })).rejects.toThrow('not sent');
    // Calls that each take a third of the deadline, started at every point of the watchdog's period.
    await Promise.all(Array.from({ length: 20 }, (_, i) => after(i * 15).then(() => calls.watch(() => after(DEADLINE_MS / 3, i)))));
    await after(DEADLINE_MS * 1.5);
    expect(abandoned).toBe(0);
  });

  it('should fail every call in flight once one has waited the deadline, after abandoning what they share', async () => {
    const events: string[] = [];
    const calls = createCallWatchdog(DEADLINE_MS, { what: 'Redis reply', onTimeout: () => events.push('abandoned') });
    const started = performance.now();
    const oldest = calls.watch(never).catch((err: Error) => (events.push('oldest failed'), err.message));
    await after(DEADLINE_MS / 3);
    const younger = calls.watch(never).catch((err: Error) => (events.push('younger failed'), err.message));
    expect(await Promise.race([oldest, after(DEADLINE_MS * 10, 'still waiting')])).toBe(`Redis reply timed out after ${DEADLINE_MS} ms`);
    const elapsed = performance.now() - started;
    expect(await younger).toBe(`Redis reply timed out after ${DEADLINE_MS} ms`);
    expect(events).toEqual(['abandoned', 'oldest failed', 'younger failed']);
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS);
    // The next calls are watched afresh.
    await expect(calls.watch(() => after(10, 'answer'))).resolves.toBe('answer');
    await expect(createCallWatchdog(10).watch(never)).rejects.toThrow(/^timed out after 10 ms$/);
  });

  it('should fail a call that gets no answer while other calls keep being answered (a Cluster node that hangs)', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(DEADLINE_MS, { onTimeout: () => abandoned++ });
    const hung = calls.watch(never);
    // Another node's calls, one after another, each answered in 2 ms: an answer every few ms.
    let answering = true;
    const answered = async (): Promise<void> => {
      while (answering) await calls.watch(() => after(2)).catch(() => undefined);
    };
    const others = answered();
    try {
      await expect(Promise.race([hung, after(DEADLINE_MS * 10, 'still waiting')])).rejects.toThrow(`timed out after ${DEADLINE_MS} ms`);
      expect(abandoned).toBe(1);
    } finally {
      answering = false;
      await others;
    }
  });

  it('should not hold a stall of this process against calls whose answer came meanwhile, and still fail a call never answered', async () => {
    let abandoned = 0;
    const calls = createCallWatchdog(DEADLINE_MS, { onTimeout: () => abandoned++ });
    // The answer arrives while the process is stalled past the deadline, and is read after
    // the timers phase, as a socket's data is (the poll phase; here the check phase).
    const answered = (): Promise<string> => new Promise((resolve) => setTimeout(() => setImmediate(() => resolve('answer')), 10));
    const soft = calls.watch(answered);
    stall(DEADLINE_MS * 2);
    await expect(soft).resolves.toBe('answer');
    // A call sent only after the stall (its answer 10 ms later) gets the deadline again.
    let sent = false;
    const late = calls.watch(() => new Promise((resolve) => setImmediate(() => ((sent = true), setTimeout(resolve, 10)))));
    stall(DEADLINE_MS * 2);
    expect(sent).toBe(false);
    await expect(late).resolves.toBeUndefined();
    expect(abandoned).toBe(0);
    // A call never answered still fails, the stall notwithstanding.
    const silent = calls.watch(never);
    stall(DEADLINE_MS * 2);
    await expect(silent).rejects.toThrow(`timed out after ${DEADLINE_MS} ms`);
    expect(abandoned).toBe(1);
  });

  it('should give a call its time again once only, so a process that keeps stalling still fails a call never answered', async () => {
    const calls = createCallWatchdog(DEADLINE_MS);
    let outcome = 'waiting';
    calls.watch(never).catch((err: Error) => (outcome = err.message));
    for (let i = 0; i < 10 && outcome === 'waiting'; i++) {
      stall(DEADLINE_MS * 2);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(outcome).toBe(`timed out after ${DEADLINE_MS} ms`);
  });
});
