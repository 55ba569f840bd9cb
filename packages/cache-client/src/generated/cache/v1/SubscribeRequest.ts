// Original file: ../../proto/cache/v1/cache.proto


export interface SubscribeRequest {
  /**
   * Key prefixes to watch ("" watches every key); each up to 1024 bytes of UTF-8, 1..64 of them.
   */
  'prefixes'?: (string)[];
}

export interface SubscribeRequest__Output {
  /**
   * Key prefixes to watch ("" watches every key); each up to 1024 bytes of UTF-8, 1..64 of them.
   */
  'prefixes': (string)[];
}
