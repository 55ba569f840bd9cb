// Original file: ../../proto/cache/v1/cache.proto

import type { Long } from '@grpc/proto-loader';

// Original file: ../../proto/cache/v1/cache.proto

export const _cache_v1_Invalidation_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  /**
   * the first message: changes after it are announced; key is empty
   */
  SUBSCRIBED: 'SUBSCRIBED',
  /**
   * Set, SetIfAbsent that stored, Increment
   */
  WRITTEN: 'WRITTEN',
  /**
   * Remove of a live entry, RemoveIfEquals that removed (or a DEL in Redis)
   */
  REMOVED: 'REMOVED',
  /**
   * The entry's time to live passed. Memory backend: within about 200 ms of the expiry (its
   * active expiry), at once when the entry is read first. Redis backend: when Redis expires the
   * key (its own active expiry, or an access).
   */
  EXPIRED: 'EXPIRED',
  /**
   * the backend dropped the entry to stay within its capacity
   */
  EVICTED: 'EVICTED',
  /**
   * nothing changed for a second; key is empty
   */
  HEARTBEAT: 'HEARTBEAT',
} as const;

export type _cache_v1_Invalidation_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  /**
   * the first message: changes after it are announced; key is empty
   */
  | 'SUBSCRIBED'
  | 1
  /**
   * Set, SetIfAbsent that stored, Increment
   */
  | 'WRITTEN'
  | 2
  /**
   * Remove of a live entry, RemoveIfEquals that removed (or a DEL in Redis)
   */
  | 'REMOVED'
  | 3
  /**
   * The entry's time to live passed. Memory backend: within about 200 ms of the expiry (its
   * active expiry), at once when the entry is read first. Redis backend: when Redis expires the
   * key (its own active expiry, or an access).
   */
  | 'EXPIRED'
  | 4
  /**
   * the backend dropped the entry to stay within its capacity
   */
  | 'EVICTED'
  | 5
  /**
   * nothing changed for a second; key is empty
   */
  | 'HEARTBEAT'
  | 6

export type _cache_v1_Invalidation_Kind__Output = typeof _cache_v1_Invalidation_Kind[keyof typeof _cache_v1_Invalidation_Kind]

export interface Invalidation {
  /**
   * 1 for SUBSCRIBED, then + 1 for every message of this stream
   */
  'sequence'?: (number | string | Long);
  /**
   * the key that changed (as the caller names it, without Cache__KeyPrefix)
   */
  'key'?: (string);
  'kind'?: (_cache_v1_Invalidation_Kind);
}

export interface Invalidation__Output {
  /**
   * 1 for SUBSCRIBED, then + 1 for every message of this stream
   */
  'sequence': (number);
  /**
   * the key that changed (as the caller names it, without Cache__KeyPrefix)
   */
  'key': (string);
  'kind': (_cache_v1_Invalidation_Kind__Output);
}
