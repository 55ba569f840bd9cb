// Original file: ../../proto/cache/v1/cache.proto

import type { Long } from '@grpc/proto-loader';

export interface IncrementResponse {
  /**
   * the counter after this call
   */
  'value'?: (number | string | Long);
  /**
   * the counter's expiry as a Unix timestamp in ms; 0 when none
   */
  'expiresAtUnixMs'?: (number | string | Long);
}

export interface IncrementResponse__Output {
  /**
   * the counter after this call
   */
  'value': (number);
  /**
   * the counter's expiry as a Unix timestamp in ms; 0 when none
   */
  'expiresAtUnixMs': (number);
}
