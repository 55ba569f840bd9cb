import { nextOutcome, type EventAttempt, type EventLog, type EventLogOptions, type EventRecord } from './event-log.js';
import { decodeLogCursor, encodeLogCursor } from './event-log-cursor.js';

/**
 * The event log in this process' memory (`STORE_URL=memory://`, local runs only): the same rules as
 * the Redis log (event-log.ts), lost on restart, not shared between replicas. Lists scan every record.
 */
export function createMemoryEventLog(options: EventLogOptions): EventLog {
  const records = new Map<string, EventRecord>();
  const live = (record: EventRecord, now: number): boolean => record.firstSeen > now - options.retentionMs;
  const newestFirst = (now: number): EventRecord[] =>
    [...records.values()].filter((record) => live(record, now)).sort((a, b) => b.firstSeen - a.firstSeen || (b.id < a.id ? -1 : 1));
  const trim = (now: number): void => {
    for (const record of records.values()) if (!live(record, now)) records.delete(record.id);
    const oldestFirst = newestFirst(now).reverse();
    for (const record of oldestFirst.slice(0, Math.max(0, oldestFirst.length - options.maxEvents + 1))) records.delete(record.id);
  };
  const liveRecord = (id: string, now: number): EventRecord | undefined => {
    const record = records.get(id);
    return record !== undefined && live(record, now) ? record : undefined;
  };
  const nextRecord = (previous: Omit<EventRecord, 'lastSeen' | 'source' | 'outcome'> & Partial<EventRecord>, attempt: EventAttempt, now: number): EventRecord => {
    const failures = attempt.result === 'failed' ? previous.failures + 1 : 0;
    const { id, type, created, firstSeen } = previous;
    return {
      id,
      type,
      created,
      firstSeen,
      lastSeen: now,
      deliveries: previous.deliveries + 1,
      failures,
      source: attempt.source,
      outcome: nextOutcome(attempt, { outcome: previous.outcome, failures }, now, options),
      ...(attempt.result === 'failed' ? { error: { code: attempt.errorCode ?? '', message: attempt.errorMessage ?? '' } } : {}),
    };
  };
  return {
    record(attempt) {
      const now = options.now();
      const previous = liveRecord(attempt.id, now);
      if (previous === undefined) trim(now);
      const record = nextRecord(previous ?? { id: attempt.id, type: attempt.type, created: attempt.created, firstSeen: now, deliveries: 0, failures: 0 }, attempt, now);
      records.set(attempt.id, record);
      return Promise.resolve(record);
    },
    get: (id) => Promise.resolve(liveRecord(id, options.now()) ?? null),
    list(query) {
      const after = query.cursor === undefined ? undefined : decodeLogCursor(query.cursor);
      const matching = newestFirst(options.now()).filter(
        (record) =>
          (query.outcome === undefined || record.outcome === query.outcome) &&
          (query.type === undefined || record.type === query.type) &&
          record.firstSeen >= (query.since ?? 0) &&
          (after === undefined || record.firstSeen < after.score || (record.firstSeen === after.score && record.id < after.id)),
      );
      const events = matching.slice(0, query.limit);
      const last = events.at(-1);
      return Promise.resolve({ events, ...(matching.length > query.limit && last !== undefined ? { next: encodeLogCursor({ score: last.firstSeen, id: last.id }) } : {}) });
    },
    deadCount() {
      const now = options.now();
      return Promise.resolve([...records.values()].filter((record) => record.outcome === 'dead' && live(record, now)).length);
    },
  };
}
