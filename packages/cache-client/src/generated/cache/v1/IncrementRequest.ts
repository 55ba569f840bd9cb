// Original file: ../../proto/cache/v1/cache.proto

import type { Long } from '@grpc/proto-loader';

export interface IncrementRequest {
  /**
   * required, 1..1024 bytes of UTF-8
   */
  'key'?: (string);
  /**
   * added to the counter; negative decrements, 0 reads (and creates)
   */
  'delta'?: (number | string | Long);
  /**
   * life of a counter this call creates, in milliseconds; 0 means no expiry
   */
  'ttlMs'?: (number | string | Long);
}

export interface IncrementRequest__Output {
  /**
   * required, 1..1024 bytes of UTF-8
   */
  'key': (string);
  /**
   * added to the counter; negative decrements, 0 reads (and creates)
   */
  'delta': (number);
  /**
   * life of a counter this call creates, in milliseconds; 0 means no expiry
   */
  'ttlMs': (number);
}
