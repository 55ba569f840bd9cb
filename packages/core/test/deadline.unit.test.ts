import { describe, expect, it } from '@jest/globals';
import { withDeadline } from '../src/deadline.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('withDeadline', () => {
  it('should give the value or the failure of work that settles in time', async () => {
    await expect(withDeadline(Promise.resolve(42), 1000)).resolves.toBe(42);
    await expect(withDeadline(Promise.reject(new Error('refused')), 1000)).rejects.toThrow('refused');
  });

  it('should reject work that outlives the deadline, naming it, after abandoning it', async () => {
    const abandoned: string[] = [];
    await expect(withDeadline(never(), 20, { what: 'publish', onTimeout: () => abandoned.push('publish') })).rejects.toThrow('publish timed out after 20 ms');
    expect(abandoned).toEqual(['publish']);
    await expect(withDeadline(never(), 10)).rejects.toThrow(/^timed out after 10 ms$/);
  });

  it('should not abandon work that settled before the deadline', async () => {
    let abandoned = false;
    await withDeadline(Promise.resolve(), 20, { onTimeout: () => (abandoned = true) });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(abandoned).toBe(false);
  });

  it('should not hold a stall of this process against work whose answer came meanwhile, unless the deadline is hard', async () => {
    const stall = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    // The answer arrives while the process is stalled past the 30 ms deadline, and is read after
    // the timers phase, as a socket's data is (the poll phase; here the check phase).
    const answered = (): Promise<string> => new Promise((resolve) => setTimeout(() => setImmediate(() => resolve('answer')), 10));
    const soft = withDeadline(answered(), 30);
    stall(120);
    await expect(soft).resolves.toBe('answer');
    const hard = withDeadline(answered(), 30, { hard: true });
    stall(120);
    await expect(hard).rejects.toThrow('timed out after 30 ms');
    // Work sent only after the stall (its answer 10 ms later) gets the deadline again, once.
    let sent = false;
    const late = withDeadline(new Promise((resolve) => setImmediate(() => ((sent = true), setTimeout(resolve, 10)))), 30);
    stall(120);
    expect(sent).toBe(false);
    await expect(late).resolves.toBeUndefined();
    // An answer that never comes still times out, the stall notwithstanding.
    const silent = withDeadline(never(), 30);
    stall(120);
    await expect(silent).rejects.toThrow('timed out after 30 ms');
  });
});
