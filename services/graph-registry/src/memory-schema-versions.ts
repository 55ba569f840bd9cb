import { infoOf, type SchemaVersions, type StoredSchemaVersion } from './schema-versions.js';

/** The schema history in this process' memory (`STORE_URL=memory://`, local runs only). */
export function createMemorySchemaVersions(current: { get(): string | undefined; set(sdl: string): void }): SchemaVersions {
  const versions = new Map<number, StoredSchemaVersion>();
  let last = 0;
  let announced: number | undefined;
  let lease: { token: string; until: number } | undefined;
  const leaseHolder = (): string | undefined => (lease !== undefined && lease.until > Date.now() ? lease.token : undefined);
  return {
    latest: () => Promise.resolve(last === 0 ? { version: 0, sdl: current.get() } : { version: last, sdl: versions.get(last)?.sdl }),
    append(expected, entry, keep, eventPending) {
      if (expected !== last) return Promise.resolve(false);
      announced ??= last;
      if (!eventPending && announced === last) announced = expected + 1;
      last = expected + 1;
      versions.set(last, { ...entry, version: last });
      current.set(entry.sdl);
      for (const version of [...versions.keys()].sort((a, b) => a - b).slice(0, Math.max(0, versions.size - keep))) versions.delete(version);
      return Promise.resolve(true);
    },
    list(before, limit) {
      const numbers = [...versions.keys()].filter((version) => before === undefined || version < before).sort((a, b) => b - a);
      return Promise.resolve(numbers.slice(0, limit).map((version) => infoOf(versions.get(version)!)));
    },
    get: (version) => Promise.resolve(versions.get(version)),
    announcement: () => Promise.resolve({ announced: announced ?? last, last }),
    markAnnounced(token, from, to) {
      if (leaseHolder() !== token || (announced ?? last) !== from) return Promise.resolve(false);
      announced = to;
      return Promise.resolve(true);
    },
    leaseAnnouncer(token, ttlMs) {
      const holder = leaseHolder();
      if (holder !== undefined && holder !== token) return Promise.resolve(false);
      lease = { token, until: Date.now() + ttlMs };
      return Promise.resolve(true);
    },
    releaseAnnouncer(token) {
      if (leaseHolder() === token) lease = undefined;
      return Promise.resolve();
    },
  };
}
