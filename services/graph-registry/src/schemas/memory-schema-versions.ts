import { createMemoryAnnouncementLog } from './memory-announcement-log.js';
import { infoOf, type SchemaVersions, type StoredSchemaVersion } from './schema-versions.js';

/** The schema history in this process' memory (`STORE_URL=memory://`, local runs only). */
export function createMemorySchemaVersions(current: { get(): string | undefined; set(sdl: string): void }): SchemaVersions {
  const versions = new Map<number, StoredSchemaVersion>();
  let last = 0;
  const { appending, ...announcements } = createMemoryAnnouncementLog(() => last);
  return {
    latest: () => Promise.resolve(last === 0 ? { version: 0, sdl: current.get() } : { version: last, sdl: versions.get(last)?.sdl }),
    append(expected, entry, keep, eventPending) {
      if (expected !== last) return Promise.resolve(false);
      appending(expected, eventPending);
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
    ...announcements,
  };
}
