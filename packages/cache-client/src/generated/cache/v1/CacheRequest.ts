// Original file: ../../proto/cache/v1/cache.proto

import type { Long } from '@grpc/proto-loader';

export interface CacheRequest {
  /**
   * required, 1..1024 bytes of UTF-8
   */
  'key'?: (string);
  /**
   * Set, SetIfAbsent: the serialized value; RemoveIfEquals: the value expected
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * Set, SetIfAbsent: time to live in milliseconds; 0 means no expiry
   */
  'ttlMs'?: (number | string | Long);
}

export interface CacheRequest__Output {
  /**
   * required, 1..1024 bytes of UTF-8
   */
  'key': (string);
  /**
   * Set, SetIfAbsent: the serialized value; RemoveIfEquals: the value expected
   */
  'value': (Buffer);
  /**
   * Set, SetIfAbsent: time to live in milliseconds; 0 means no expiry
   */
  'ttlMs': (number);
}
