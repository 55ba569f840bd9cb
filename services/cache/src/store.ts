/** A stored value with its expiry as a Unix timestamp in milliseconds (0: never). */
export interface Entry {
  value: Buffer;
  expiresAtUnixMs: number;
}

/** What happened to entries besides reads and writes, for metrics. */
export interface StoreEvents {
  evicted?(count: number): void;
  expired?(count: number): void;
}

/** A cache backend. Implementations: memory-store (LRU in process) and redis-store. */
export interface CacheStore {
  get(key: string): Promise<Entry | undefined>;
  /** Stores the value; `ttlMs` 0 means no expiry. Resolves with the stored entry's expiry. */
  set(key: string, value: Buffer, ttlMs: number): Promise<Entry>;
  /** True when a live entry was removed. */
  remove(key: string): Promise<boolean>;
  /** Number of entries held, when the backend can tell cheaply. */
  size(): number | undefined;
  /** Readiness: rejects when the backend is unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}
