/** A stored value with its expiry as a Unix timestamp in milliseconds (0: never). */
export interface Entry {
  value: Buffer;
  expiresAtUnixMs: number;
}

/** A counter after an increment, with its expiry as a Unix timestamp in milliseconds (0: never). */
export interface Counter {
  value: number;
  expiresAtUnixMs: number;
}

/** What SetIfAbsent did: stored the value, or found a live entry and kept it. */
export type SetIfAbsentResult = { stored: true; entry: Entry } | { stored: false; entry: Entry };

/** What happened to entries besides reads and writes, for metrics. */
export interface StoreEvents {
  evicted?(count: number): void;
  expired?(count: number): void;
  /** New keys refused by a full store that does not evict. */
  rejected?(count: number): void;
}

/**
 * A cache backend. Implementations: memory-store (LRU in process) and redis-store. Increment,
 * setIfAbsent and removeIfEquals are atomic: concurrent calls on one key behave as if run one
 * after another.
 */
export interface CacheStore {
  get(key: string): Promise<Entry | undefined>;
  /** Stores the value; `ttlMs` 0 means no expiry. Resolves with the stored entry's expiry. */
  set(key: string, value: Buffer, ttlMs: number): Promise<Entry>;
  /** True when a live entry was removed. */
  remove(key: string): Promise<boolean>;
  /** Removes the live entry only when its value is exactly `value`; true when it did. */
  removeIfEquals(key: string, value: Buffer): Promise<boolean>;
  /**
   * Adds delta to the counter under key; an absent key starts at 0 and expires after `ttlMs`
   * (0: never), later increments keep that expiry. Rejects with FAILED_PRECONDITION (412) when the
   * live value is not a counter or the result would leave the safe integer range.
   */
  increment(key: string, delta: number, ttlMs: number): Promise<Counter>;
  /** Stores the value only when no live entry exists; otherwise leaves and returns that entry. */
  setIfAbsent(key: string, value: Buffer, ttlMs: number): Promise<SetIfAbsentResult>;
  /**
   * The length of each key's value (0 when absent), without reading the values: stores whose
   * reads cross the network have it, so that a GetMany too large to answer is refused before its
   * values are brought in.
   */
  valueBytes?(keys: readonly string[]): Promise<number[]>;
  /** Number of entries held, when the backend can tell cheaply. */
  size(): number | undefined;
  /** Readiness: rejects when the backend is unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}
