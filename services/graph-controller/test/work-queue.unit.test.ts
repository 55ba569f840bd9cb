import { describe, expect, it } from '@jest/globals';
import { createWorkQueue } from '../src/reconcile/work-queue.js';
import { eventually, sleep } from '../../../test/support/eventually.js';

describe('createWorkQueue', () => {
  it('should coalesce repeated adds of a waiting key', async () => {
    const handled: string[] = [];
    const queue = createWorkQueue({ concurrency: 1, backoff: { baseMs: 10, maxMs: 10 }, process: (key) => Promise.resolve(void handled.push(key)) });
    for (const key of ['a', 'b', 'a', 'a', 'b']) queue.add(key);
    expect(queue.depth()).toBe(2);
    queue.start();
    await queue.idle();
    expect(handled).toEqual(['a', 'b']);
  });

  it('should never handle one key twice at once, and handle a key re-added meanwhile once more', async () => {
    let running = 0;
    let overlap = false;
    const handled: string[] = [];
    let release!: () => void;
    const queue = createWorkQueue({
      concurrency: 4,
      backoff: { baseMs: 10, maxMs: 10 },
      process: async (key) => {
        running += 1;
        overlap ||= running > 1;
        handled.push(key);
        if (handled.length === 1) await new Promise<void>((resolve) => (release = resolve));
        running -= 1;
      },
    });
    queue.start();
    queue.add('a');
    await eventually(() => handled.length === 1);
    queue.add('a');
    queue.add('a');
    await sleep(20);
    expect(handled).toEqual(['a']);
    release();
    await queue.idle();
    expect(handled).toEqual(['a', 'a']);
    expect(overlap).toBe(false);
  });

  it('should retry a failing key with growing delays, without holding up other keys', async () => {
    const attempts: number[] = [];
    const others: number[] = [];
    const start = Date.now();
    const delays: number[] = [];
    const queue = createWorkQueue({
      concurrency: 1,
      backoff: { baseMs: 40, maxMs: 160 },
      onError: (_key, _err, retryInMs) => delays.push(retryInMs),
      process: (key) => {
        if (key !== 'failing') return Promise.resolve(void others.push(Date.now() - start));
        attempts.push(Date.now() - start);
        return attempts.length < 5 ? Promise.reject(new Error('registry down')) : Promise.resolve();
      },
    });
    queue.start();
    queue.add('failing');
    await eventually(() => attempts.length === 2);
    queue.add('other');
    await eventually(() => others.length === 1);
    await eventually(() => attempts.length === 5, 3000);
    expect(others[0]!).toBeLessThan(attempts[2]!); // handled while the failing key waited for its retry
    const gaps = attempts.slice(1).map((at, index) => at - attempts[index]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
    expect(gaps[3]).toBeGreaterThanOrEqual(158);
    // Capped: the delays the queue chose, not the gaps' upper end, which a busy machine's late
    // timers stretch (an uncapped 320 ms fell under the 400 ms bound this replaced anyway; issue 40).
    expect(delays).toEqual([40, 80, 160, 160]);
    await queue.idle();
    expect(queue.depth()).toBe(0);
  });

  it('should count a key waiting for its retry in the depth, and start over after a success', async () => {
    let fail = true;
    const errors: number[] = [];
    const queue = createWorkQueue({
      concurrency: 1,
      // Retries far enough apart that polling sees each count of errors, even on a loaded machine.
      backoff: { baseMs: 200, maxMs: 5000 },
      process: () => (fail ? Promise.reject(new Error('no')) : Promise.resolve()),
      onError: (_key, _err, retryInMs) => errors.push(retryInMs),
    });
    queue.start();
    queue.add('a');
    await eventually(() => errors.length === 2);
    expect(queue.depth()).toBe(1);
    fail = false;
    await queue.idle();
    fail = true;
    queue.add('a');
    await eventually(() => errors.length === 3);
    expect(errors).toEqual([200, 400, 200]);
    await queue.stop();
  });

  it('should wait for keys in progress on stop and drop pending retries', async () => {
    let finished = false;
    const queue = createWorkQueue({
      concurrency: 2,
      backoff: { baseMs: 10_000, maxMs: 10_000 },
      process: async (key) => {
        if (key === 'bad') throw new Error('no');
        await sleep(50);
        finished = true;
      },
    });
    queue.start();
    queue.add('bad');
    queue.add('slow');
    await eventually(() => queue.depth() === 1); // 'bad' waits for its retry
    await queue.stop();
    expect(finished).toBe(true);
    expect(queue.depth()).toBe(0);
  });

  it('should serve a change before the resync work queued ahead of it, and promote a queued resync key', async () => {
    const handled: string[] = [];
    const queue = createWorkQueue({ concurrency: 2, backoff: { baseMs: 10, maxMs: 10 }, process: (key) => Promise.resolve(void handled.push(key)) });
    for (let index = 0; index < 100; index += 1) queue.add(`r${index}`, 'resync');
    queue.add('change');
    queue.add('r99', 'change');
    queue.add('r98', 'resync');
    queue.start();
    await queue.idle();
    expect(handled.slice(0, 2)).toEqual(['change', 'r99']);
    expect(handled).toHaveLength(101);
    expect(new Set(handled).size).toBe(101);
  });

  it('should keep a worker for changes while resync work fills the others', async () => {
    const releases: Array<() => void> = [];
    const started: string[] = [];
    const queue = createWorkQueue({
      concurrency: 3,
      backoff: { baseMs: 10, maxMs: 10 },
      process: (key) => {
        started.push(key);
        return key.startsWith('r') ? new Promise<void>((resolve) => releases.push(resolve)) : Promise.resolve();
      },
    });
    queue.start();
    for (let index = 0; index < 10; index += 1) queue.add(`r${index}`, 'resync');
    await eventually(() => started.length === 2);
    await sleep(20);
    expect(started).toEqual(['r0', 'r1']); // the third worker waits for changes
    queue.add('change');
    await eventually(() => started.includes('change'), 1000, 'the change served while both resync keys hang');
    const drain = setInterval(() => releases.splice(0).forEach((release) => release()), 5);
    await queue.idle();
    clearInterval(drain);
    expect(started).toHaveLength(11);
  });
});
