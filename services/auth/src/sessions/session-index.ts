import { randomInt } from 'node:crypto';
import type { CacheClient } from '@sp/cache-client';

/** One session in its user's index: enough to find, order and end it. */
export interface IndexEntry {
  tokenId: string;
  /** The public id (GET /sessions), never the token id. */
  sessionId: string;
  createdAtMs: number;
}

export interface SessionIndex {
  /**
   * Puts a new session into a free slot of its user's index; with none free, takes the slot of the
   * oldest session there. `displaced`: the entries it took out of the index, sessions over the
   * bound that the caller must end (also when `placed` is false: it lost every round to
   * concurrent logins of the same user, and the new session must be ended too).
   */
  claim(subject: string, entry: IndexEntry, ttlMs: number): Promise<{ placed: boolean; displaced: IndexEntry[] }>;
  /** The user's indexed sessions whose record still exists (stale entries are dropped on the way). */
  list(subject: string): Promise<IndexEntry[]>;
  /** Takes an ended session out of its user's index (nothing when it is not there). */
  release(subject: string, tokenId: string): Promise<void>;
}

export interface SessionIndexOptions {
  /** Slots per user: Auth__MaxSessionsPerUser. */
  slots: number;
  /** Whether the session of a token id still exists (its record is in the cache service). */
  exists(tokenId: string): Promise<boolean>;
}

const isEntry = (value: unknown): value is IndexEntry =>
  typeof value === 'object' && value !== null && typeof (value as IndexEntry).tokenId === 'string' && typeof (value as IndexEntry).sessionId === 'string' && typeof (value as IndexEntry).createdAtMs === 'number';

const older = (a: IndexEntry, b: IndexEntry): boolean => a.createdAtMs < b.createdAtMs || (a.createdAtMs === b.createdAtMs && a.sessionId < b.sessionId);

/** Rounds of read-then-act a claim may lose to concurrent logins of the same user before it gives up (503). */
const MAX_ROUNDS = 64;

interface Slot {
  key: string;
  /** The entry read, undefined when the slot was empty. */
  entry: IndexEntry | undefined;
  /** Whether the entry's session still exists. */
  live: boolean;
}

/**
 * A user's sessions in the cache service as a fixed number of slots, `user-sessions:{subject}:{n}`
 * for n < Auth__MaxSessionsPerUser, each holding one session's entry with the TTL of that session's
 * absolute end. So the index never grows past the bound and goes by itself; a login reads it in
 * one GetMany and writes one or two slots: O(bound), whatever the user's history.
 *
 * Every change of a slot is atomic and conditional, so concurrent logins on any replicas never
 * lose an entry: a slot is filled only with SetIfAbsent, and emptied only with RemoveIfEquals of
 * the entry that was read. A login that loses either race reads the slots again. An entry taken
 * out by a login (the oldest, when the user is at the bound) is ended by that login; a session
 * that is in no slot is therefore either still claiming one or ended, and a user never has more
 * live sessions than slots once the logins in flight have returned.
 *
 * A stale entry (its session expired or ended on a path that could not clean up) counts as a free
 * slot and is removed by the next claim or list that meets it.
 */
export function createSessionIndex(cache: CacheClient<unknown>, options: SessionIndexOptions): SessionIndex {
  const keys = (subject: string): string[] => Array.from({ length: options.slots }, (_, n) => `user-sessions:${subject}:${n}`);

  // The gets of one turn go to the cache service as one GetMany (the client coalesces them).
  const read = (subject: string): Promise<Slot[]> =>
    Promise.all(
      keys(subject).map(async (key) => {
        const value = await cache.get(key);
        const entry = isEntry(value) ? value : undefined;
        return { key, entry, live: entry !== undefined && (await options.exists(entry.tokenId)) };
      }),
    );

  /** A slot that is empty or holds a stale entry; a random one, so concurrent logins rarely pick the same. */
  const freeSlot = (slots: Slot[]): Slot | undefined => {
    const free = slots.filter((slot) => !slot.live);
    return free.length === 0 ? undefined : free[randomInt(free.length)];
  };

  const oldestSlot = (slots: Slot[]): Slot => slots.reduce((oldest, slot) => (older(slot.entry!, oldest.entry!) ? slot : oldest));

  return {
    async claim(subject, entry, ttlMs) {
      const displaced: IndexEntry[] = [];
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const slots = await read(subject);
        const free = freeSlot(slots);
        const target = free ?? oldestSlot(slots);
        // Emptied only if it still holds what was read: a concurrent login's entry stays.
        if (target.entry !== undefined && !(await cache.removeIfEquals(target.key, target.entry))) continue;
        if (target.entry !== undefined && target.live) displaced.push(target.entry);
        if ((await cache.setIfAbsent(target.key, entry, ttlMs)).stored) return { placed: true, displaced };
      }
      return { placed: false, displaced };
    },
    async list(subject) {
      const slots = await read(subject);
      await Promise.all(slots.filter((slot) => slot.entry !== undefined && !slot.live).map((slot) => cache.removeIfEquals(slot.key, slot.entry)));
      return slots.filter((slot) => slot.live).map((slot) => slot.entry!);
    },
    async release(subject, tokenId) {
      const slots = await Promise.all(keys(subject).map(async (key) => ({ key, value: await cache.get(key) })));
      await Promise.all(slots.filter(({ value }) => isEntry(value) && value.tokenId === tokenId).map(({ key, value }) => cache.removeIfEquals(key, value)));
    },
  };
}
