import type { AnnouncementLog } from './schema-versions.js';

/** An announcement log in memory, beside a memory history whose newest number `last()` tells. */
export interface MemoryAnnouncementLog extends AnnouncementLog {
  /**
   * Called before an entry is appended after `previous`: the first append records every earlier
   * entry as announced; an entry without an event to send counts as sent when nothing before it
   * is pending.
   */
  appending: (previous: number, eventPending: boolean) => void;
}

/** A token-held lease in memory, as the Redis stores' leases behave (local runs only). */
export function createMemoryLease(): { acquire(token: string, ttlMs: number): Promise<boolean>; release(token: string): Promise<void>; holder(): string | undefined } {
  let lease: { token: string; until: number } | undefined;
  const holder = (): string | undefined => (lease !== undefined && lease.until > Date.now() ? lease.token : undefined);
  return {
    holder,
    acquire(token, ttlMs) {
      const current = holder();
      if (current !== undefined && current !== token) return Promise.resolve(false);
      lease = { token, until: Date.now() + ttlMs };
      return Promise.resolve(true);
    },
    release(token) {
      if (holder() === token) lease = undefined;
      return Promise.resolve();
    },
  };
}

/** The announced number and the announcer's lease of a memory store (local runs only). */
export function createMemoryAnnouncementLog(last: () => number): MemoryAnnouncementLog {
  let announced: number | undefined;
  const lease = createMemoryLease();
  return {
    appending(previous, eventPending) {
      announced ??= previous;
      if (!eventPending && announced === previous) announced = previous + 1;
    },
    announcement: () => Promise.resolve({ announced: announced ?? last(), last: last() }),
    markAnnounced(token, from, to) {
      if (lease.holder() !== token || (announced ?? last()) !== from) return Promise.resolve(false);
      announced = to;
      return Promise.resolve(true);
    },
    leaseAnnouncer: (token, ttlMs) => lease.acquire(token, ttlMs),
    releaseAnnouncer: (token) => lease.release(token),
  };
}
