import { randomUUID } from 'node:crypto';
import type { ProcessingStore, ObjectVersion } from './processing-store.js';

/**
 * Processed events in this process' memory: lost on restart and not shared between replicas, so
 * only meant for local runs (`STORE_URL=memory://`); the app warns when it is chosen.
 */
export function createMemoryProcessingStore(now: () => number = Date.now): ProcessingStore {
  const done = new Map<string, number>();
  const claims = new Map<string, { token: string; expiresAt: number }>();
  const versions = new Map<string, { version: ObjectVersion; expiresAt: number }>();
  const live = (expiresAt: number | undefined): boolean => expiresAt !== undefined && expiresAt > now();
  const releaseIfOurs = (eventId: string, token: string): void => {
    if (claims.get(eventId)?.token === token) claims.delete(eventId);
  };
  return {
    name: 'memory',
    claim(eventId, leaseMs) {
      if (live(done.get(eventId))) return Promise.resolve({ state: 'done' });
      if (live(claims.get(eventId)?.expiresAt)) return Promise.resolve({ state: 'busy' });
      const token = randomUUID();
      claims.set(eventId, { token, expiresAt: now() + leaseMs });
      return Promise.resolve({ state: 'claimed', token });
    },
    complete(eventId, token, retentionMs) {
      done.set(eventId, now() + retentionMs);
      releaseIfOurs(eventId, token);
      return Promise.resolve();
    },
    release(eventId, token) {
      releaseIfOurs(eventId, token);
      return Promise.resolve();
    },
    readVersion(objectKey) {
      const entry = versions.get(objectKey);
      return Promise.resolve(entry !== undefined && live(entry.expiresAt) ? { ...entry.version } : null);
    },
    recordVersion(objectKey, version, retentionMs) {
      const entry = versions.get(objectKey);
      const held = entry !== undefined && live(entry.expiresAt) ? entry.version : undefined;
      // As the Redis store: never lower a version, keep a tombstone.
      if (held !== undefined && ((held.deleted && !version.deleted) || version.created < held.created)) return Promise.resolve();
      versions.set(objectKey, { version: { ...version }, expiresAt: now() + retentionMs });
      return Promise.resolve();
    },
    check: () => Promise.resolve(),
    close() {
      done.clear();
      claims.clear();
      versions.clear();
      return Promise.resolve();
    },
  };
}
