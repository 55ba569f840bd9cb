import type { ClientReadableStream } from '@grpc/grpc-js';
import { LRUCache } from 'lru-cache';
import { backoffDelay } from '@sp/core';
import type { Invalidation__Output } from './generated/cache/v1/Invalidation.js';

export interface NearCacheSettings {
  /** Key prefixes whose `get` is served from this process' memory, e.g. `['token:', 'session:']`. */
  prefixes: readonly string[];
  /** Most entries held; the least recently used goes first. Default 10,000. */
  maxEntries?: number;
  /**
   * A stream that has said nothing (not even its once-a-second heartbeat) for this long counts as
   * lost: the near cache empties and reads go to the service until it is subscribed again. This is
   * the staleness bound when the network fails silently. Default 3000 ms.
   */
  maxSilenceMs?: number;
}

/** What a caller can see of the near cache (for readiness, metrics, tests). */
export interface NearCacheView {
  /** Subscribed: `get` of a covered key may be answered from memory. Otherwise every get reads through. */
  readonly live: boolean;
  readonly entries: number;
  /** Gets answered from memory / read through the service, since the client was made. */
  readonly hits: number;
  readonly misses: number;
  /** Times everything was dropped (stream lost, sequence gap). */
  readonly flushes: number;
  /** Resolves once live (at once when it is); rejects after `timeoutMs`. */
  whenLive(timeoutMs?: number): Promise<void>;
}

/** A value as read from the service: its bytes and expiry (Unix ms, 0: none). */
export interface NearEntry {
  bytes: Buffer;
  expiresAtUnixMs: number;
}

/** A read through the service that may fill the near cache, unless a change of its key overtook it. */
export interface NearRead {
  key: string;
  valid: boolean;
}

export interface NearCache extends NearCacheView {
  covers(key: string): boolean;
  /** The live, unexpired entry held for key; `countMiss: false` for a look that a read through follows. */
  lookup(key: string, countMiss?: boolean): NearEntry | undefined;
  /** Starts a read through; undefined when not live (nothing will be kept). */
  begin(key: string): NearRead | undefined;
  /** Ends a read: keeps `entry` only if no change of the key (or flush) came since `begin`. */
  complete(read: NearRead | undefined, entry: NearEntry | undefined): void;
  /** Drops key and spoils reads of it in flight (a change announced, or written through this client). */
  invalidate(key: string): void;
  close(): void;
}

/** Opens Subscribe for the prefixes (on the client's channel). */
export type OpenSubscription = (prefixes: readonly string[]) => ClientReadableStream<Invalidation__Output>;

/**
 * The near cache: an LRU of values read through the service, kept only while a Subscribe stream
 * tells us of every change. Entries are dropped on their invalidation, at their expiry, and all
 * at once when the stream is lost, silent, or skips a sequence number; then every get reads
 * through until the next stream says SUBSCRIBED (resubscribing with backoff). A read that began
 * before a change of its key (or before a flush, or while not live) never fills the cache, so an
 * older value cannot land after the invalidation that should have removed it.
 */
export function createNearCache(settings: NearCacheSettings, open: OpenSubscription): NearCache {
  const prefixes = [...settings.prefixes];
  const maxSilenceMs = settings.maxSilenceMs ?? 3000;
  const entries = new LRUCache<string, NearEntry>({ max: settings.maxEntries ?? 10_000 });
  const reads = new Map<string, Set<NearRead>>();
  let live = false;
  let closed = false;
  let stream: ClientReadableStream<Invalidation__Output> | undefined;
  let sequence = 0;
  let failures = 0;
  let silence: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let waiters: Array<() => void> = [];
  const counts = { hits: 0, misses: 0, flushes: 0 };

  const spoil = (key: string): void => reads.get(key)?.forEach((read) => (read.valid = false));

  function invalidate(key: string): void {
    entries.delete(key);
    spoil(key);
  }

  function flush(): void {
    entries.clear();
    for (const pending of reads.values()) for (const read of pending) read.valid = false;
    counts.flushes++;
  }

  /** The stream can no longer vouch for the cache: drop everything, read through, resubscribe. */
  function lost(): void {
    const wasLive = live;
    live = false;
    clearTimeout(silence);
    const ended = stream;
    stream = undefined;
    ended?.cancel();
    if (wasLive || entries.size > 0) flush();
    if (closed) return;
    failures++;
    retry = setTimeout(subscribe, backoffDelay(failures, 50, 2000));
    retry.unref();
  }

  function armSilence(): void {
    clearTimeout(silence);
    silence = setTimeout(lost, maxSilenceMs);
    silence.unref();
  }

  function onMessage(message: Invalidation__Output): void {
    if (message.sequence !== sequence + 1) return lost();
    sequence = message.sequence;
    armSilence();
    if (message.kind === 'SUBSCRIBED') {
      live = true;
      failures = 0;
      waiters.forEach((wake) => wake());
      waiters = [];
    } else if (message.kind !== 'HEARTBEAT') {
      invalidate(message.key);
    }
  }

  function subscribe(): void {
    if (closed) return;
    sequence = 0;
    const current = open(prefixes);
    stream = current;
    const ifCurrent =
      <A extends unknown[]>(handle: (...args: A) => void) =>
      (...args: A): void => {
        if (stream === current) handle(...args);
      };
    current.on('data', ifCurrent(onMessage));
    current.on('error', ifCurrent(lost));
    current.on('end', ifCurrent(lost));
    armSilence();
  }

  subscribe();

  return {
    get live() {
      return live;
    },
    get entries() {
      return entries.size;
    },
    get hits() {
      return counts.hits;
    },
    get misses() {
      return counts.misses;
    },
    get flushes() {
      return counts.flushes;
    },
    whenLive(timeoutMs = 5000) {
      if (live) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`near cache not subscribed within ${timeoutMs} ms`)), timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    covers: (key) => prefixes.some((prefix) => key.startsWith(prefix)),
    lookup(key, countMiss = true) {
      const entry = live ? entries.get(key) : undefined;
      if (entry !== undefined && (entry.expiresAtUnixMs === 0 || entry.expiresAtUnixMs > Date.now())) {
        counts.hits++;
        return entry;
      }
      if (entry !== undefined) entries.delete(key);
      if (countMiss) counts.misses++;
      return undefined;
    },
    begin(key) {
      if (!live) return undefined;
      const read = { key, valid: true };
      const pending = reads.get(key) ?? new Set<NearRead>();
      pending.add(read);
      reads.set(key, pending);
      return read;
    },
    complete(read, entry) {
      if (read === undefined) return;
      const pending = reads.get(read.key);
      pending?.delete(read);
      if (pending?.size === 0) reads.delete(read.key);
      if (read.valid && live && entry !== undefined) entries.set(read.key, entry);
    },
    invalidate,
    close() {
      closed = true;
      clearTimeout(retry);
      lost();
      waiters = [];
    },
  };
}
