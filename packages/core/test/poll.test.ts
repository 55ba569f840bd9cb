import { describe, expect, it } from '@jest/globals';
import { poll } from '../src/poll.js';

/** A clock that moves only when the poll sleeps, recording each pause. */
function fakeTime(): { now: () => number; sleep: (ms: number) => Promise<void>; pauses: number[] } {
  let at = 1_000;
  const pauses: number[] = [];
  return {
    now: () => at,
    sleep: (ms) => {
      pauses.push(ms);
      at += ms;
      return Promise.resolve();
    },
    pauses,
  };
}

describe('poll', () => {
  it('should give the first answer without pausing', async () => {
    const time = fakeTime();
    await expect(poll(() => Promise.resolve('lock'), { waitMs: 100, pollMs: 10, ...time })).resolves.toBe('lock');
    expect(time.pauses).toEqual([]);
  });

  it('should try again after each pause until an answer comes, telling each try how many came before', async () => {
    const time = fakeTime();
    const tries: number[] = [];
    const answer = await poll((before) => (tries.push(before), Promise.resolve(before === 3 ? 'claimed' : undefined)), { waitMs: 100, pollMs: 10, ...time });
    expect(answer).toBe('claimed');
    expect(tries).toEqual([0, 1, 2, 3]);
    expect(time.pauses).toEqual([10, 10, 10]);
  });

  it('should give up with undefined once the wait has passed, after a last try', async () => {
    const time = fakeTime();
    let tries = 0;
    await expect(poll(() => Promise.resolve(void tries++), { waitMs: 35, pollMs: 10, ...time })).resolves.toBeUndefined();
    // Tries at 0, 10, 20, 30 and 40 ms: the one at 40 ms is past the wait, so no pause follows it.
    expect(tries).toBe(5);
    expect(time.pauses).toEqual([10, 10, 10, 10]);
  });

  it('should pass a failed try on to the caller', async () => {
    const time = fakeTime();
    await expect(poll(() => Promise.reject(new Error('refused')), { waitMs: 100, pollMs: 10, ...time })).rejects.toThrow('refused');
    expect(time.pauses).toEqual([]);
  });

  it('should pause on the real clock when given none', async () => {
    const started = Date.now();
    let tries = 0;
    await poll(() => Promise.resolve(++tries === 2 ? true : undefined), { waitMs: 1000, pollMs: 20 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(19);
  });
});
