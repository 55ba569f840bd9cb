import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { parseRedisUrl } from '@sp/core';
import { connectRedis } from '@sp/storage';
import { STRIPE_RETRY_WINDOW_MS, type EventAttempt, type EventLog, type EventLogOptions } from '../src/events/event-log.js';
import { createMemoryEventLog } from '../src/events/memory-event-log.js';
import { createRedisEventLog } from '../src/events/redis-event-log.js';
import { infra } from '../../../test/support/infra.js';
import { manualClock, type TestClock } from '../../../test/support/test-clock.js';

const options: Omit<EventLogOptions, 'now'> = { retentionMs: 60_000, maxEvents: 5, deadAfterFailures: 3, retryWindowMs: STRIPE_RETRY_WINDOW_MS };
let redis: Redis;

beforeAll(() => {
  const target = parseRedisUrl(infra('REDIS_URL'));
  if (target.kind !== 'standalone') throw new Error('the test Redis is a standalone server');
  redis = connectRedis(target);
});

afterAll(async () => {
  await redis?.quit();
});

const attempt = (id: string, result: EventAttempt['result'] = 'processed'): EventAttempt => ({ id, type: 'price.updated', created: Math.floor(Date.now() / 1000), source: 'webhook', result });

/** Every key the log holds under `prefix`. */
async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

async function allIds(log: EventLog): Promise<string[]> {
  return (await log.list({ limit: 100 })).events.map((e) => e.id);
}

describe.each([
  ['redis', (clock: TestClock) => createRedisEventLog(redis, { ...options, now: clock.now }, `test-event-log:${randomUUID()}:`)],
  ['memory', (clock: TestClock) => createMemoryEventLog({ ...options, now: clock.now })],
])('the %s event log', (_name, create) => {
  it('should keep at most maxEvents records, dropping the oldest first seen', async () => {
    const clock = manualClock();
    const log = create(clock);
    for (let i = 0; i < 8; i += 1) {
      await log.record(attempt(`evt_${i}`));
      clock.advance(1);
    }
    expect(await allIds(log)).toEqual(['evt_7', 'evt_6', 'evt_5', 'evt_4', 'evt_3']);
    expect(await log.get('evt_2')).toBeNull();
  });

  it('should drop records past the retention', async () => {
    // Redis expires a record by the same clock's time (PEXPIREAT): the old one is at its end now.
    const clock = manualClock(Date.now() - options.retentionMs);
    const log = create(clock);
    await log.record(attempt('evt_old'));
    clock.advance(options.retentionMs + 1);
    await log.record(attempt('evt_new'));
    expect(await allIds(log)).toEqual(['evt_new']);
    expect(await log.get('evt_old')).toBeNull();
  });

  it('should page through events first seen in the same millisecond, each once', async () => {
    const log = create(manualClock());
    for (const id of ['evt_a', 'evt_b', 'evt_c', 'evt_d']) await log.record(attempt(id));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await log.list({ limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.events.map((e) => e.id));
      cursor = page.next;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
  });

  it('should keep a success through later duplicates, count failures, turn dead at the limit and back to processed after a success', async () => {
    const log = create(manualClock());
    expect((await log.record(attempt('evt_s', 'stale'))).outcome).toBe('stale');
    expect(await log.record(attempt('evt_s', 'duplicate'))).toMatchObject({ outcome: 'stale', deliveries: 2 });

    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push((await log.record({ ...attempt('evt_f', 'failed'), errorCode: 'not_synchronized', errorMessage: 'no plan' })).outcome);
    expect(outcomes).toEqual(['failed', 'failed', 'dead']);
    expect(await log.deadCount()).toBe(1);
    expect((await log.list({ outcome: 'dead', limit: 10 })).events.map((e) => e.id)).toEqual(['evt_f']);
    const fixed = await log.record({ ...attempt('evt_f', 'processed'), source: 'replay' });
    expect(fixed).toMatchObject({ outcome: 'processed', failures: 0, deliveries: 4, source: 'replay' });
    expect(fixed.error).toBeUndefined();
    expect(await log.deadCount()).toBe(0);
    expect((await log.list({ outcome: 'dead', limit: 10 })).events).toEqual([]);
  });
});

describe('the redis event log', () => {
  it('should hold one key per kept event plus the indexes, all in one Cluster slot', async () => {
    const prefix = `test-event-log:${randomUUID()}:`;
    const clock = manualClock();
    const log = createRedisEventLog(redis, { ...options, now: clock.now }, prefix);
    for (let i = 0; i < 20; i += 1) {
      await log.record(attempt(`evt_${i}`, i % 2 === 0 ? 'processed' : 'ignored'));
      clock.advance(1);
    }
    const keys = await keysUnder(prefix);
    expect(keys.filter((key) => key.includes(':event:'))).toHaveLength(options.maxEvents);
    expect(keys.filter((key) => !key.includes(':event:')).map((key) => key.slice(prefix.length))).toEqual(['{event-log}:all', '{event-log}:outcome:ignored', '{event-log}:outcome:processed']);
    expect(await redis.zcard(`${prefix}{event-log}:all`)).toBe(options.maxEvents);
    expect((await redis.zcard(`${prefix}{event-log}:outcome:ignored`)) + (await redis.zcard(`${prefix}{event-log}:outcome:processed`))).toBe(options.maxEvents);
    expect(new Set(keys.map((key) => /\{[^}]*\}/.exec(key)![0]))).toEqual(new Set(['{event-log}']));
    for (const key of keys.filter((candidate) => candidate.includes(':event:'))) expect(await redis.pttl(key)).toBeGreaterThan(0);
  });
});
