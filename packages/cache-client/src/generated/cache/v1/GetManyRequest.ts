// Original file: ../../proto/cache/v1/cache.proto


export interface GetManyRequest {
  /**
   * 1..1000 keys, each as CacheRequest.key
   */
  'keys'?: (string)[];
}

export interface GetManyRequest__Output {
  /**
   * 1..1000 keys, each as CacheRequest.key
   */
  'keys': (string)[];
}
