import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CacheGrpcServiceClient as _cache_v1_CacheGrpcServiceClient, CacheGrpcServiceDefinition as _cache_v1_CacheGrpcServiceDefinition } from './cache/v1/CacheGrpcService.js';
import type { CacheRequest as _cache_v1_CacheRequest, CacheRequest__Output as _cache_v1_CacheRequest__Output } from './cache/v1/CacheRequest.js';
import type { CacheResponse as _cache_v1_CacheResponse, CacheResponse__Output as _cache_v1_CacheResponse__Output } from './cache/v1/CacheResponse.js';
import type { GetManyRequest as _cache_v1_GetManyRequest, GetManyRequest__Output as _cache_v1_GetManyRequest__Output } from './cache/v1/GetManyRequest.js';
import type { GetManyResponse as _cache_v1_GetManyResponse, GetManyResponse__Output as _cache_v1_GetManyResponse__Output } from './cache/v1/GetManyResponse.js';
import type { IncrementRequest as _cache_v1_IncrementRequest, IncrementRequest__Output as _cache_v1_IncrementRequest__Output } from './cache/v1/IncrementRequest.js';
import type { IncrementResponse as _cache_v1_IncrementResponse, IncrementResponse__Output as _cache_v1_IncrementResponse__Output } from './cache/v1/IncrementResponse.js';
import type { Invalidation as _cache_v1_Invalidation, Invalidation__Output as _cache_v1_Invalidation__Output } from './cache/v1/Invalidation.js';
import type { SubscribeRequest as _cache_v1_SubscribeRequest, SubscribeRequest__Output as _cache_v1_SubscribeRequest__Output } from './cache/v1/SubscribeRequest.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  cache: {
    v1: {
      CacheGrpcService: SubtypeConstructor<typeof grpc.Client, _cache_v1_CacheGrpcServiceClient> & { service: _cache_v1_CacheGrpcServiceDefinition }
      CacheRequest: MessageTypeDefinition<_cache_v1_CacheRequest, _cache_v1_CacheRequest__Output>
      CacheResponse: MessageTypeDefinition<_cache_v1_CacheResponse, _cache_v1_CacheResponse__Output>
      GetManyRequest: MessageTypeDefinition<_cache_v1_GetManyRequest, _cache_v1_GetManyRequest__Output>
      GetManyResponse: MessageTypeDefinition<_cache_v1_GetManyResponse, _cache_v1_GetManyResponse__Output>
      IncrementRequest: MessageTypeDefinition<_cache_v1_IncrementRequest, _cache_v1_IncrementRequest__Output>
      IncrementResponse: MessageTypeDefinition<_cache_v1_IncrementResponse, _cache_v1_IncrementResponse__Output>
      Invalidation: MessageTypeDefinition<_cache_v1_Invalidation, _cache_v1_Invalidation__Output>
      SubscribeRequest: MessageTypeDefinition<_cache_v1_SubscribeRequest, _cache_v1_SubscribeRequest__Output>
    }
  }
}

