/** Slot width of expiries less than HORIZON_MS ahead: an expired key is found at most two slots late. */
const FINE_MS = 100;
/** Slot width of expiries further ahead; such a slot is split into fine slots once it is within the horizon. */
const COARSE_MS = 60_000;
const HORIZON_MS = COARSE_MS;

type Slots = Map<number, Set<string>>;

/** What the index asks of its store when it hands out due keys. */
export interface ExpiringStore {
  /** The key's current expiry (Unix ms), 0 when it is gone or has none. */
  expiryOf(key: string): number;
  /** The key's slot has passed: expire it if its current expiry has (the store checks). */
  expire(key: string): void;
}

/**
 * The memory store's keys that have an expiry, grouped by when they expire, so the due ones are
 * found without scanning the store (as Redis keeps its `expires` dictionary beside the keys).
 * Expiries within a minute sit in 100 ms slots, later ones in one-minute slots: a day of distinct
 * TTLs makes at most ~2,600 slots, and a key costs one Set entry whatever its TTL.
 */
export interface ExpiryIndex {
  add(key: string, expiresAtUnixMs: number, now: number): void;
  delete(key: string, expiresAtUnixMs: number): void;
  /**
   * Hands the store the keys of every fine slot that ended by `now`, oldest first, until `budget`
   * keys were looked at; the rest wait for the next call. Coarse slots are split into fine ones
   * as they come within the horizon (their keys count against the budget too). Returns how many
   * keys it looked at.
   */
  takeDue(now: number, budget: number, store: ExpiringStore): number;
  readonly size: number;
  clear(): void;
}

/** Slots of one width, and the first slot not taken yet (moved back when a key lands behind it: the clock went back). */
interface Level {
  width: number;
  slots: Slots;
  next: number;
}

/**
 * The first slot of `level` from its `next` up to `until` (exclusive) that holds keys, or
 * undefined. Walks slot by slot while that is cheaper than looking at every slot (a clock that
 * jumped far ahead).
 */
function firstHeld({ slots, next }: Level, until: number): number | undefined {
  if (until - next <= slots.size) {
    for (let slot = next; slot < until; slot += 1) if (slots.has(slot)) return slot;
    return undefined;
  }
  let first: number | undefined;
  for (const slot of slots.keys()) if (slot >= next && slot < until && (first === undefined || slot < first)) first = slot;
  return first;
}

export function createExpiryIndex(): ExpiryIndex {
  const fine: Level = { width: FINE_MS, slots: new Map(), next: Number.POSITIVE_INFINITY };
  const coarse: Level = { width: COARSE_MS, slots: new Map(), next: Number.POSITIVE_INFINITY };
  let size = 0;

  function put(level: Level, expiresAt: number, key: string): void {
    const slot = Math.floor(expiresAt / level.width);
    level.next = Math.min(level.next, slot);
    const keys = level.slots.get(slot) ?? new Set<string>();
    if (keys.size === 0) level.slots.set(slot, keys);
    if (!keys.has(key)) size += 1;
    keys.add(key);
  }

  function remove(level: Level, expiresAt: number, key: string): void {
    const slot = Math.floor(expiresAt / level.width);
    const keys = level.slots.get(slot);
    if (keys === undefined || !keys.delete(key)) return;
    size -= 1;
    if (keys.size === 0) level.slots.delete(slot);
  }

  /** Takes the keys of the slots before `until` out of `level`, oldest first, each to `each`, at most `budget`; returns how many. */
  function take(level: Level, until: number, budget: number, each: (key: string, slot: number) => void): number {
    let taken = 0;
    while (taken < budget) {
      const slot = firstHeld(level, until);
      if (slot === undefined) {
        level.next = Math.max(level.next, until);
        return taken;
      }
      level.next = slot;
      const keys = level.slots.get(slot)!;
      for (const key of keys) {
        if (taken >= budget) return taken;
        keys.delete(key);
        size -= 1;
        taken += 1;
        each(key, slot);
      }
      level.slots.delete(slot);
    }
    return taken;
  }

  return {
    add(key, expiresAt, now) {
      put(expiresAt - now < HORIZON_MS ? fine : coarse, expiresAt, key);
    },
    delete(key, expiresAt) {
      remove(fine, expiresAt, key);
      remove(coarse, expiresAt, key);
    },
    takeDue(now, budget, store) {
      // The coarse slots that start within the horizon move to the fine slots of their keys'
      // expiry (a key written since with another expiry is in that expiry's slot already).
      const split = take(coarse, Math.floor((now + HORIZON_MS) / COARSE_MS), budget, (key, slot) => {
        const expiresAt = store.expiryOf(key);
        if (expiresAt !== 0 && Math.floor(expiresAt / COARSE_MS) === slot) put(fine, expiresAt, key);
      });
      return split + take(fine, Math.floor(now / FINE_MS), budget - split, (key) => store.expire(key));
    },
    get size() {
      return size;
    },
    clear() {
      fine.slots.clear();
      coarse.slots.clear();
      size = 0;
    },
  };
}
