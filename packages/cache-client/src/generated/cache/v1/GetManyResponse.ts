// Original file: ../../proto/cache/v1/cache.proto

import type { CacheResponse as _cache_v1_CacheResponse, CacheResponse__Output as _cache_v1_CacheResponse__Output } from '../../cache/v1/CacheResponse.js';

export interface GetManyResponse {
  /**
   * one per key, in the order of the request's keys
   */
  'entries'?: (_cache_v1_CacheResponse)[];
}

export interface GetManyResponse__Output {
  /**
   * one per key, in the order of the request's keys
   */
  'entries': (_cache_v1_CacheResponse__Output)[];
}
