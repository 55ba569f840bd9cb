import type { Cluster, Redis } from 'ioredis';
import { createRedisStoreBase } from '@sp/storage';
import { EVENT_OUTCOMES, type EventLog, type EventLogOptions, type EventOutcome, type EventRecord, type EventSource } from './event-log.js';
import { decodeLogCursor, encodeLogCursor, type LogPosition } from './event-log-cursor.js';

/** Records and index entries removed by one write at most, so a write stays cheap however much is due. */
const TRIM_BATCH = 100;
/** Index entries one page of a `type` query looks at at most (the type has no index of its own). */
const SCAN_BUDGET = 1000;
const FETCH_BATCH = 100;

// Every key of the log carries the hash tag {event-log}: one Cluster slot, so one script updates an
// event's record and the indexes atomically (an event is ~600 bytes with its index entries; the count bound keeps the slot
// small). KEYS[1] = the event's record, KEYS[2] = the index of all events (score: first seen, ms).
// ARGV: id, type, created, source, result, error code, error message, now, retention ms, max events,
// dead after failures, retry window ms, key prefix. Each step is O(log N), trimming at most
// TRIM_BATCH entries per write. The outcome rule is nextOutcome's (event-log.ts).
const RECORD = `
local rec, all, prefix = KEYS[1], KEYS[2], ARGV[13]
local id, now, retention, maxEvents = ARGV[1], tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local outcomes = {${EVENT_OUTCOMES.map((o) => `'${o}'`).join(',')}}
local function forget(member)
  redis.call('DEL', prefix .. 'event:' .. member)
  redis.call('ZREM', all, member)
  for _, o in ipairs(outcomes) do redis.call('ZREM', prefix .. 'outcome:' .. o, member) end
end
local firstSeen = tonumber(redis.call('HGET', rec, 'firstSeen'))
local previous = redis.call('HGET', rec, 'outcome')
if not firstSeen then
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', all, '-inf', now - retention, 'LIMIT', 0, ${TRIM_BATCH})) do forget(m) end
  local excess = redis.call('ZCARD', all) - maxEvents + 1
  if excess > 0 then
    for _, m in ipairs(redis.call('ZRANGE', all, 0, math.min(excess, ${TRIM_BATCH}) - 1)) do forget(m) end
  end
  forget(id)
  firstSeen = now
  redis.call('HSET', rec, 'id', id, 'type', ARGV[2], 'created', ARGV[3], 'firstSeen', now, 'deliveries', 0, 'failures', 0)
  redis.call('PEXPIREAT', rec, now + retention)
  redis.call('ZADD', all, now, id)
end
local result, outcome = ARGV[5], ARGV[5]
if result == 'failed' then
  local failures = redis.call('HINCRBY', rec, 'failures', 1)
  if failures >= tonumber(ARGV[11]) or now - tonumber(ARGV[3]) * 1000 > tonumber(ARGV[12]) then outcome = 'dead' end
  redis.call('HSET', rec, 'errorCode', ARGV[6], 'errorMessage', ARGV[7])
else
  if result == 'duplicate' and previous and previous ~= 'failed' and previous ~= 'dead' then outcome = previous end
  redis.call('HSET', rec, 'failures', 0)
  redis.call('HDEL', rec, 'errorCode', 'errorMessage')
end
redis.call('HINCRBY', rec, 'deliveries', 1)
redis.call('HSET', rec, 'lastSeen', now, 'source', ARGV[4], 'outcome', outcome)
if previous and previous ~= outcome then redis.call('ZREM', prefix .. 'outcome:' .. previous, id) end
redis.call('ZADD', prefix .. 'outcome:' .. outcome, firstSeen, id)
return redis.call('HGETALL', rec)`;

type Connection = Redis | Cluster;

interface EventLogCommands {
  eventLogRecord(record: string, all: string, ...args: (string | number)[]): Promise<string[]>;
}

function toRecord(fields: Record<string, string>): EventRecord | null {
  if (fields.id === undefined) return null;
  return {
    id: fields.id,
    type: fields.type ?? '',
    created: Number(fields.created),
    firstSeen: Number(fields.firstSeen),
    lastSeen: Number(fields.lastSeen),
    deliveries: Number(fields.deliveries),
    failures: Number(fields.failures),
    source: fields.source as EventSource,
    outcome: fields.outcome as EventOutcome,
    ...(fields.errorCode === undefined ? {} : { error: { code: fields.errorCode, message: fields.errorMessage ?? '' } }),
  };
}

/** A record still kept, of `type` when one is asked for. */
const ofType = (record: EventRecord | null, type: string | undefined): record is EventRecord => record !== null && (type === undefined || record.type === type);

/** A flat Redis reply `[k1, v1, k2, v2, …]` as its pairs, in order. */
function pairs(flat: string[]): [string, string][] {
  const result: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) result.push([flat[i]!, flat[i + 1]!]);
  return result;
}

/**
 * The event log on Redis (standalone, Sentinel or Cluster), shared by the replicas:
 * `{prefix}{event-log}:event:<id>` is an event's record (a hash, expiring `retentionMs` after it was
 * first seen), `{prefix}{event-log}:all` and `{prefix}{event-log}:outcome:<outcome>` index the ids by
 * first seen. Writes are one Lua script: O(log N), and they drop expired and excess records as they go.
 */
export function createRedisEventLog(connection: Connection, options: EventLogOptions, prefix = 'webhooks:event-log:'): EventLog {
  connection.defineCommand('eventLogRecord', { numberOfKeys: 2, lua: RECORD });
  const redis = connection as Connection & EventLogCommands;
  const { run } = createRedisStoreBase(connection, { dependency: 'store' });
  const base = `${prefix}{event-log}:`;
  const recordKey = (id: string): string => `${base}event:${id}`;
  const allKey = `${base}all`;
  const outcomeKey = (outcome: EventOutcome): string => `${base}outcome:${outcome}`;
  /** Up to FETCH_BATCH index entries from `offset` below the cursor, with their records (null: expired); `end` when the index has no more. */
  const readBatch = async (index: string, at: { after: LogPosition | undefined; min: number; offset: number }): Promise<{ entries: { position: LogPosition; record: EventRecord | null }[]; end: boolean }> => {
    const flat = await run(() => redis.zrevrangebyscore(index, at.after?.score ?? '+inf', at.min, 'WITHSCORES', 'LIMIT', at.offset, FETCH_BATCH));
    // Entries of the cursor's millisecond come in descending id order: those up to the cursor were on earlier pages.
    const positions = pairs(flat)
      .map(([id, score]) => ({ id, score: Number(score) }))
      .filter((entry) => at.after === undefined || entry.score < at.after.score || entry.id < at.after.id);
    const pipeline = redis.pipeline();
    for (const position of positions) pipeline.hgetall(recordKey(position.id));
    const records = (await run(() => pipeline.exec())) ?? [];
    return {
      entries: positions.map((position, i) => ({ position, record: toRecord((records[i]?.[1] ?? {}) as Record<string, string>) })),
      end: flat.length < FETCH_BATCH * 2,
    };
  };
  /** The record, unless it is past the retention on the clock (Redis expires it by the same time, PEXPIREAT). */
  const get = async (id: string): Promise<EventRecord | null> => {
    const record = toRecord(await run(() => redis.hgetall(recordKey(id))));
    return record !== null && record.firstSeen > options.now() - options.retentionMs ? record : null;
  };
  return {
    async record(attempt) {
      const now = options.now();
      const flat = await run(() =>
        redis.eventLogRecord(
          recordKey(attempt.id),
          allKey,
          attempt.id,
          attempt.type,
          attempt.created,
          attempt.source,
          attempt.result,
          attempt.errorCode ?? '',
          attempt.errorMessage ?? '',
          now,
          options.retentionMs,
          options.maxEvents,
          options.deadAfterFailures,
          options.retryWindowMs,
          base,
        ),
      );
      return toRecord(Object.fromEntries(pairs(flat)))!;
    },
    get,
    async list(query) {
      const index = query.outcome === undefined ? allKey : outcomeKey(query.outcome);
      const after = query.cursor === undefined ? undefined : decodeLogCursor(query.cursor);
      const min = Math.max(query.since ?? 0, options.now() - options.retentionMs);
      const events: EventRecord[] = [];
      let last: LogPosition | undefined;
      for (let offset = 0; offset < SCAN_BUDGET; offset += FETCH_BATCH) {
        const batch = await readBatch(index, { after, min, offset });
        for (const { position, record } of batch.entries) {
          last = position;
          if (ofType(record, query.type)) events.push(record);
          if (events.length === query.limit) return { events, next: encodeLogCursor(position) };
        }
        if (batch.end) return { events };
      }
      return { events, ...(last === undefined ? {} : { next: encodeLogCursor(last) }) };
    },
    async deadCount() {
      const now = options.now();
      return run(() => redis.zcount(outcomeKey('dead'), now - options.retentionMs, '+inf'));
    },
  };
}
