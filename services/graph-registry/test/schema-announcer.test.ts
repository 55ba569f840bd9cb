import { afterEach, describe, expect, it } from '@jest/globals';
import type { EventPublisher } from '@sp/messaging';
import { eventually, sleep } from '../../../test/support/eventually.js';
import { createMemoryGraphStore } from '../src/graphs/memory-graph-store.js';
import { createSchemaAnnouncer, versionAnnouncements, type SchemaAnnouncer } from '../src/schemas/schema-announcer.js';
import type { StoredSchemaVersion } from '../src/schemas/schema-versions.js';
import { silentLogger as quietLogger } from '../../../test/support/silent-logger.js';

const silentLogger = quietLogger('schema-announcer-test');

/**
 * A publisher recording the versions it sent into `sent` (shared by the replicas: the order the
 * broker receives them); its `failures` first publishes fail, each takes up to `maxDelayMs`.
 */
function recordingPublisher(failures = 0, maxDelayMs = 10, sent: number[] = []): EventPublisher & { sent: number[] } {
  let left = failures;
  return {
    sent,
    async publish(_topic, event) {
      await sleep(Math.random() * maxDelayMs);
      if (left-- > 0) throw new Error('broker unavailable');
      sent.push(event.data.version as number);
    },
    check: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

const version = (n: number): StoredSchemaVersion => ({
  version: n,
  sha256: '0'.repeat(64),
  publishedAt: new Date().toISOString(),
  publisher: 'key:test',
  previousVersion: n === 1 ? null : n - 1,
  rollbackOf: null,
  counts: { breaking: 0, dangerous: 0, safe: 0 },
  sdl: `type Query { f${n}: Int }`,
  report: { changes: [], counts: { breaking: 0, dangerous: 0, safe: 0 } },
});

const announcers: SchemaAnnouncer[] = [];
afterEach(() => announcers.splice(0).forEach((announcer) => announcer.close()));

/** Announcers of two replicas on one store, each with its own publisher. */
function replicas(store: ReturnType<typeof createMemoryGraphStore>, publishers: EventPublisher[], sweepMs = 60_000): SchemaAnnouncer[] {
  const made = publishers.map((events) => createSchemaAnnouncer({ log: store.versions, pending: versionAnnouncements(store.versions), events, logger: silentLogger }, { topic: 'schema-changes', sweepMs }));
  announcers.push(...made);
  return made;
}

describe('schema announcer', () => {
  it('should send the events of versions stored through two replicas at once in version order, each once', async () => {
    const store = createMemoryGraphStore();
    const sent: number[] = [];
    const publishers = [recordingPublisher(0, 20, sent), recordingPublisher(0, 5, sent)];
    const [a, b] = replicas(store, publishers);
    const announced: Array<Promise<void>> = [];
    for (let n = 1; n <= 30; n++) {
      expect(await store.versions.append(n - 1, version(n), 100, true)).toBe(true);
      // Each replica announces its own versions, several at once (its publishes and its sweep).
      announced.push((n % 2 === 1 ? a! : b!).announceThrough(n));
    }
    await Promise.all(announced);
    expect(sent).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await store.versions.announcement()).toEqual({ announced: 30, last: 30 });
  });

  it('should send a version whose event failed before the next one, and the sweep send what nobody else does', async () => {
    const store = createMemoryGraphStore();
    const events = recordingPublisher(1);
    const [announcer] = replicas(store, [events], 100);
    await store.versions.append(0, version(1), 100, true);
    await announcer!.announceThrough(1);
    expect(events.sent).toEqual([]);
    await store.versions.append(1, version(2), 100, true);
    await announcer!.announceThrough(2);
    expect(events.sent).toEqual([1, 2]);
    await store.versions.append(2, version(3), 100, true);
    await eventually(() => events.sent.length === 3, 2000, 'the sweep sends version 3');
    expect(events.sent).toEqual([1, 2, 3]);
  });

  it('should count as sent the versions stored while no events were configured', async () => {
    const store = createMemoryGraphStore();
    await store.versions.append(0, version(1), 100, false);
    const events = recordingPublisher();
    const [announcer] = replicas(store, [events]);
    await store.versions.append(1, version(2), 100, true);
    await announcer!.announceThrough(2);
    expect(events.sent).toEqual([2]);
  });
});
