// Original file: ../../proto/cache/v1/cache.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CacheRequest as _cache_v1_CacheRequest, CacheRequest__Output as _cache_v1_CacheRequest__Output } from '../../cache/v1/CacheRequest.js';
import type { CacheResponse as _cache_v1_CacheResponse, CacheResponse__Output as _cache_v1_CacheResponse__Output } from '../../cache/v1/CacheResponse.js';
import type { GetManyRequest as _cache_v1_GetManyRequest, GetManyRequest__Output as _cache_v1_GetManyRequest__Output } from '../../cache/v1/GetManyRequest.js';
import type { GetManyResponse as _cache_v1_GetManyResponse, GetManyResponse__Output as _cache_v1_GetManyResponse__Output } from '../../cache/v1/GetManyResponse.js';
import type { IncrementRequest as _cache_v1_IncrementRequest, IncrementRequest__Output as _cache_v1_IncrementRequest__Output } from '../../cache/v1/IncrementRequest.js';
import type { IncrementResponse as _cache_v1_IncrementResponse, IncrementResponse__Output as _cache_v1_IncrementResponse__Output } from '../../cache/v1/IncrementResponse.js';
import type { Invalidation as _cache_v1_Invalidation, Invalidation__Output as _cache_v1_Invalidation__Output } from '../../cache/v1/Invalidation.js';
import type { SubscribeRequest as _cache_v1_SubscribeRequest, SubscribeRequest__Output as _cache_v1_SubscribeRequest__Output } from '../../cache/v1/SubscribeRequest.js';

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
   * Reads up to 1000 keys in one call: entries[i] is what Get answers for keys[i]. The typed client
   * sends the gets its callers make at the same moment as one GetMany, which costs both sides far
   * less than one call each. INVALID_ARGUMENT when any key is (as Get), or for 0 or over 1000 keys.
   * Redis backend: one pipelined round trip per Redis node holding some of the keys.
   */
  GetMany(argument: _cache_v1_GetManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _cache_v1_GetManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _cache_v1_GetManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _cache_v1_GetManyRequest, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reads up to 1000 keys in one call: entries[i] is what Get answers for keys[i]. The typed client
   * sends the gets its callers make at the same moment as one GetMany, which costs both sides far
   * less than one call each. INVALID_ARGUMENT when any key is (as Get), or for 0 or over 1000 keys.
   * Redis backend: one pipelined round trip per Redis node holding some of the keys.
   */
  getMany(argument: _cache_v1_GetManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _cache_v1_GetManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _cache_v1_GetManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _cache_v1_GetManyRequest, callback: grpc.requestCallback<_cache_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  
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
   * Removes key only when its live entry's value is exactly these bytes, atomically: found tells
   * whether it removed it. An absent or expired key, or any other value (a newer holder's lock, a
   * newer code), is found = false and left as it is. For records read, acted on, then removed:
   * `Get` then `Remove` could remove what another caller wrote in between. A removal is announced
   * on Subscribe as REMOVED, like Remove's. ttl_ms is ignored; value as Set's (INVALID_ARGUMENT
   * over the maximum). A call that ended UNAVAILABLE may have removed the entry: a retry then
   * answers found = false. Redis backend: one Lua script (GET, compare, DEL), one round trip.
   */
  RemoveIfEquals(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  RemoveIfEquals(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  RemoveIfEquals(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  RemoveIfEquals(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Removes key only when its live entry's value is exactly these bytes, atomically: found tells
   * whether it removed it. An absent or expired key, or any other value (a newer holder's lock, a
   * newer code), is found = false and left as it is. For records read, acted on, then removed:
   * `Get` then `Remove` could remove what another caller wrote in between. A removal is announced
   * on Subscribe as REMOVED, like Remove's. ttl_ms is ignored; value as Set's (INVALID_ARGUMENT
   * over the maximum). A call that ended UNAVAILABLE may have removed the entry: a retry then
   * answers found = false. Redis backend: one Lua script (GET, compare, DEL), one round trip.
   */
  removeIfEquals(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  removeIfEquals(argument: _cache_v1_CacheRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  removeIfEquals(argument: _cache_v1_CacheRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  removeIfEquals(argument: _cache_v1_CacheRequest, callback: grpc.requestCallback<_cache_v1_CacheResponse__Output>): grpc.ClientUnaryCall;
  
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
  
  /**
   * Announces, until the caller cancels, every change of a key under one of the prefixes: Set,
   * SetIfAbsent that stored, Increment, Remove of a live entry, RemoveIfEquals that removed,
   * eviction and expiry, whichever replica of the service (or anything else writing the service's
   * Redis keys) made it. Meant for near caches: a client drops its copy of a key when told, and
   * everything when it cannot be sure it was told (a sequence gap, the stream ending).
   * 
   * The first message is SUBSCRIBED (sequence 1): changes from then on are announced. Every
   * message after it has the previous sequence + 1; a jump means messages were dropped (the client
   * read too slowly: the service drops rather than buffers without bound). HEARTBEAT messages come
   * every second while nothing else does, so a silent stream is a lost stream.
   * 
   * UNAVAILABLE (at the start or at any time later) means announcements cannot be guaranteed now:
   * the Redis backend lost its notification connection (a failover, a restart) or the replica is
   * shutting down. Subscribe again, after a backoff. FAILED_PRECONDITION: Redis does not send
   * keyspace notifications and the service could not turn them on (CONFIG SET refused); see the
   * service's README. INVALID_ARGUMENT: no prefix, more than 64, one over 1024 bytes, or one whose
   * bytes are not UTF-8.
   * 
   * Redis backend: the service reads Redis' keyspace notifications (on every primary of a
   * Cluster), so it also sees expiry and eviction; an announcement follows the write by the time
   * Redis takes to deliver a notification. FLUSHDB/FLUSHALL are not announced.
   */
  Subscribe(argument: _cache_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_cache_v1_Invalidation__Output>;
  Subscribe(argument: _cache_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_cache_v1_Invalidation__Output>;
  /**
   * Announces, until the caller cancels, every change of a key under one of the prefixes: Set,
   * SetIfAbsent that stored, Increment, Remove of a live entry, RemoveIfEquals that removed,
   * eviction and expiry, whichever replica of the service (or anything else writing the service's
   * Redis keys) made it. Meant for near caches: a client drops its copy of a key when told, and
   * everything when it cannot be sure it was told (a sequence gap, the stream ending).
   * 
   * The first message is SUBSCRIBED (sequence 1): changes from then on are announced. Every
   * message after it has the previous sequence + 1; a jump means messages were dropped (the client
   * read too slowly: the service drops rather than buffers without bound). HEARTBEAT messages come
   * every second while nothing else does, so a silent stream is a lost stream.
   * 
   * UNAVAILABLE (at the start or at any time later) means announcements cannot be guaranteed now:
   * the Redis backend lost its notification connection (a failover, a restart) or the replica is
   * shutting down. Subscribe again, after a backoff. FAILED_PRECONDITION: Redis does not send
   * keyspace notifications and the service could not turn them on (CONFIG SET refused); see the
   * service's README. INVALID_ARGUMENT: no prefix, more than 64, one over 1024 bytes, or one whose
   * bytes are not UTF-8.
   * 
   * Redis backend: the service reads Redis' keyspace notifications (on every primary of a
   * Cluster), so it also sees expiry and eviction; an announcement follows the write by the time
   * Redis takes to deliver a notification. FLUSHDB/FLUSHALL are not announced.
   */
  subscribe(argument: _cache_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_cache_v1_Invalidation__Output>;
  subscribe(argument: _cache_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_cache_v1_Invalidation__Output>;
  
}

export interface CacheGrpcServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Reads a live entry. An absent or expired key is OK with found = false. A counter's value is
   * its decimal digits in ASCII (what a JSON serializer reads as a number).
   */
  Get: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
  /**
   * Reads up to 1000 keys in one call: entries[i] is what Get answers for keys[i]. The typed client
   * sends the gets its callers make at the same moment as one GetMany, which costs both sides far
   * less than one call each. INVALID_ARGUMENT when any key is (as Get), or for 0 or over 1000 keys.
   * Redis backend: one pipelined round trip per Redis node holding some of the keys.
   */
  GetMany: grpc.handleUnaryCall<_cache_v1_GetManyRequest__Output, _cache_v1_GetManyResponse>;
  
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
   * Removes key only when its live entry's value is exactly these bytes, atomically: found tells
   * whether it removed it. An absent or expired key, or any other value (a newer holder's lock, a
   * newer code), is found = false and left as it is. For records read, acted on, then removed:
   * `Get` then `Remove` could remove what another caller wrote in between. A removal is announced
   * on Subscribe as REMOVED, like Remove's. ttl_ms is ignored; value as Set's (INVALID_ARGUMENT
   * over the maximum). A call that ended UNAVAILABLE may have removed the entry: a retry then
   * answers found = false. Redis backend: one Lua script (GET, compare, DEL), one round trip.
   */
  RemoveIfEquals: grpc.handleUnaryCall<_cache_v1_CacheRequest__Output, _cache_v1_CacheResponse>;
  
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
  
  /**
   * Announces, until the caller cancels, every change of a key under one of the prefixes: Set,
   * SetIfAbsent that stored, Increment, Remove of a live entry, RemoveIfEquals that removed,
   * eviction and expiry, whichever replica of the service (or anything else writing the service's
   * Redis keys) made it. Meant for near caches: a client drops its copy of a key when told, and
   * everything when it cannot be sure it was told (a sequence gap, the stream ending).
   * 
   * The first message is SUBSCRIBED (sequence 1): changes from then on are announced. Every
   * message after it has the previous sequence + 1; a jump means messages were dropped (the client
   * read too slowly: the service drops rather than buffers without bound). HEARTBEAT messages come
   * every second while nothing else does, so a silent stream is a lost stream.
   * 
   * UNAVAILABLE (at the start or at any time later) means announcements cannot be guaranteed now:
   * the Redis backend lost its notification connection (a failover, a restart) or the replica is
   * shutting down. Subscribe again, after a backoff. FAILED_PRECONDITION: Redis does not send
   * keyspace notifications and the service could not turn them on (CONFIG SET refused); see the
   * service's README. INVALID_ARGUMENT: no prefix, more than 64, one over 1024 bytes, or one whose
   * bytes are not UTF-8.
   * 
   * Redis backend: the service reads Redis' keyspace notifications (on every primary of a
   * Cluster), so it also sees expiry and eviction; an announcement follows the write by the time
   * Redis takes to deliver a notification. FLUSHDB/FLUSHALL are not announced.
   */
  Subscribe: grpc.handleServerStreamingCall<_cache_v1_SubscribeRequest__Output, _cache_v1_Invalidation>;
  
}

export interface CacheGrpcServiceDefinition extends grpc.ServiceDefinition {
  Get: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  GetMany: MethodDefinition<_cache_v1_GetManyRequest, _cache_v1_GetManyResponse, _cache_v1_GetManyRequest__Output, _cache_v1_GetManyResponse__Output>
  Increment: MethodDefinition<_cache_v1_IncrementRequest, _cache_v1_IncrementResponse, _cache_v1_IncrementRequest__Output, _cache_v1_IncrementResponse__Output>
  Remove: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  RemoveIfEquals: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  Set: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  SetIfAbsent: MethodDefinition<_cache_v1_CacheRequest, _cache_v1_CacheResponse, _cache_v1_CacheRequest__Output, _cache_v1_CacheResponse__Output>
  Subscribe: MethodDefinition<_cache_v1_SubscribeRequest, _cache_v1_Invalidation, _cache_v1_SubscribeRequest__Output, _cache_v1_Invalidation__Output>
}
