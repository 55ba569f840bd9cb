// Original file: ../../proto/cache/v1/cache.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CacheRequest as _cache_v1_CacheRequest, CacheRequest__Output as _cache_v1_CacheRequest__Output } from '../../cache/v1/CacheRequest.js';
import type { CacheResponse as _cache_v1_CacheResponse, CacheResponse__Output as _cache_v1_CacheResponse__Output } from '../../cache/v1/CacheResponse.js';
import type { IncrementRequest as _cache_v1_IncrementRequest, IncrementRequest__Output as _cache_v1_IncrementRequest__Output } from '../../cache/v1/IncrementRequest.js';
import type { IncrementResponse as _cache_v1_IncrementResponse, IncrementResponse__Output as _cache_v1_IncrementResponse__Output } from '../../cache/v1/IncrementResponse.js';

export interface CacheGrpcServiceClient extends grpc.Client {
  /**
   * Reads a live entry. An absent or expired key is OK with found = false. A counter's value is
   * its decimal digits in ASCII (what a JSON serializer reads as a number).
   */
  Get(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reads a live entry. An absent or expired key is OK with found = false. A counter's value is
   * its decimal digits in ASCII (what a JSON serializer reads as a number).
   */
  get(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Adds delta to the counter under key, atomically, and answers the new value. An absent or
   * expired key starts from 0 and gets ttl_ms (0: no expiry); later increments keep that expiry,
   * so a counter with a TTL counts a fixed window. A live entry that is not a counter (ASCII
   * decimal digits with an optional leading minus, as Get shows it) is FAILED_PRECONDITION.
   * Redis backend: one Lua script, one round trip.
   */
  Increment(argument: _cache_v1_IncrementRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _cache_v1_IncrementRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _cache_v1_IncrementRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _cache_v1_IncrementRequest, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Adds delta to the counter under key, atomically, and answers the new value. An absent or
   * expired key starts from 0 and gets ttl_ms (0: no expiry); later increments keep that expiry,
   * so a counter with a TTL counts a fixed window. A live entry that is not a counter (ASCII
   * decimal digits with an optional leading minus, as Get shows it) is FAILED_PRECONDITION.
   * Redis backend: one Lua script, one round trip.
   */
  increment(argument: _cache_v1_IncrementRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _cache_v1_IncrementRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _cache_v1_IncrementRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _cache_v1_IncrementRequest, callback: grpc.requestCallback<_cache_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Removes key; found tells whether a live entry was removed.
   */
  Remove(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Remove(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Remove(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Remove(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Removes key; found tells whether a live entry was removed.
   */
  remove(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  remove(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  remove(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  remove(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stores value under key, replacing any previous entry, with an optional time to live.
   */
  Set(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Set(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Set(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  Set(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stores value under key, replacing any previous entry, with an optional time to live.
   */
  set(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  set(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  set(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  set(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stores value with ttl_ms only when key holds no live entry, atomically: found = false when
   * this call stored it; found = true with the live entry's value and expiry when one exists
   * (the entry is left as it was). Redis backend: SET NX PX, then GET when it was not stored.
   */
  SetIfAbsent(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  SetIfAbsent(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  SetIfAbsent(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  SetIfAbsent(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stores value with ttl_ms only when key holds no live entry, atomically: found = false when
   * this call stored it; found = true with the live entry's value and expiry when one exists
   * (the entry is left as it was). Redis backend: SET NX PX, then GET when it was not stored.
   */
  setIfAbsent(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  setIfAbsent(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  setIfAbsent(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  setIfAbsent(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CacheGrpcServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Reads a live entry. An absent or expired key is OK with found = false. A counter's value is
   * its decimal digits in ASCII (what a JSON serializer reads as a number).
   */
  Get: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
  /**
   * Adds delta to the counter under key, atomically, and answers the new value. An absent or
   * expired key starts from 0 and gets ttl_ms (0: no expiry); later increments keep that expiry,
   * so a counter with a TTL counts a fixed window. A live entry that is not a counter (ASCII
   * decimal digits with an optional leading minus, as Get shows it) is FAILED_PRECONDITION.
   * Redis backend: one Lua script, one round trip.
   */
  Increment: grpc.handleUnaryCall<_cache_v1_IncrementRequest__Output, _cache_v1_IncrementResponse>;
  
  /**
   * Removes key; found tells whether a live entry was removed.
   */
  Remove: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
  /**
   * Stores value under key, replacing any previous entry, with an optional time to live.
   */
  Set: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
  /**
   * Stores value with ttl_ms only when key holds no live entry, atomically: found = false when
   * this call stored it; found = true with the live entry's value and expiry when one exists
   * (the entry is left as it was). Redis backend: SET NX PX, then GET when it was not stored.
   */
  SetIfAbsent: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
}

export interface CacheGrpcServiceDefinition extends grpc.ServiceDefinition {
  Get: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  Increment: MethodDefinition<_cache_v1_IncrementRequest, _cache_v1_IncrementResponse, _cache_v1_IncrementRequest__Output, _cache_v1_IncrementResponse__Output>
  Remove: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  Set: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  SetIfAbsent: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
}
