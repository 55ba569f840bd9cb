// Original file: ../../proto/cache/v1/cache.proto

import type { Long } from '@grpc/proto-loader';

export interface CacheResponse {
  /**
   * Get: a live entry exists; Remove: an entry was removed; Set: true;
   */
  'found'?: (boolean);
  /**
   * SetIfAbsent: a live entry existed (and was kept);
   * RemoveIfEquals: the entry held the value and was removed
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * expiry as a Unix timestamp in ms; 0 when none
   */
  'expiresAtUnixMs'?: (number | string | Long);
}

export interface CacheResponse__Output {
  /**
   * Get: a live entry exists; Remove: an entry was removed; Set: true;
   */
  'found': (boolean);
  /**
   * SetIfAbsent: a live entry existed (and was kept);
   * RemoveIfEquals: the entry held the value and was removed
   */
  'value': (Buffer);
  /**
   * expiry as a Unix timestamp in ms; 0 when none
   */
  'expiresAtUnixMs': (number);
}
