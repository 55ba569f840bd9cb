import { fileURLToPath } from 'node:url';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/cache.js';
import type { CacheGrpcServiceClient, CacheGrpcServiceDefinition, CacheGrpcServiceHandlers } from './generated/cache/v1/CacheGrpcService.js';

// The message and service types are generated from the proto by proto-loader-gen-types
// (`npm run generate -w @sp/cache-client`; a test checks that regenerating changes nothing).
// `X` is what a sender may pass, `X__Output` what a receiver gets with the options below.
export type { CacheRequest, CacheRequest__Output } from './generated/cache/v1/CacheRequest.js';
export type { CacheResponse, CacheResponse__Output } from './generated/cache/v1/CacheResponse.js';
export type { IncrementRequest, IncrementRequest__Output } from './generated/cache/v1/IncrementRequest.js';
export type { IncrementResponse, IncrementResponse__Output } from './generated/cache/v1/IncrementResponse.js';
export type { SubscribeRequest, SubscribeRequest__Output } from './generated/cache/v1/SubscribeRequest.js';
export type { Invalidation, Invalidation__Output } from './generated/cache/v1/Invalidation.js';
export type { GetManyRequest, GetManyRequest__Output } from './generated/cache/v1/GetManyRequest.js';
export type { GetManyResponse, GetManyResponse__Output } from './generated/cache/v1/GetManyResponse.js';
export type { CacheGrpcServiceClient, CacheGrpcServiceDefinition, CacheGrpcServiceHandlers };

/** Where the contract lives in the repository (and in the container images, at the same relative place). */
export const cacheProtoPath = fileURLToPath(new URL('../../../proto/cache/v1/cache.proto', import.meta.url));

/**
 * Decoding options shared by the service and the client, so both see the same shapes; the
 * generator is run with the matching flags (--longs=Number --enums=String --defaults).
 */
export const protoLoaderOptions = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: false } as const;

type CacheGrpcServiceConstructor = ProtoGrpcType['cache']['v1']['CacheGrpcService'];

let packageDefinition: PackageDefinition | undefined;
let clientConstructor: CacheGrpcServiceConstructor | undefined;

/** The parsed proto, with the field names the service and the client use (camelCase). */
export function cachePackageDefinition(): PackageDefinition {
  packageDefinition ??= loadSync(cacheProtoPath, protoLoaderOptions);
  return packageDefinition;
}

/** The typed client constructor of cache.v1.CacheGrpcService; its `service` is the server-side definition. */
export function cacheServiceClient(): CacheGrpcServiceConstructor {
  // The cast is the one @grpc/proto-loader's README prescribes for its generated ProtoGrpcType:
  // loadPackageDefinition is untyped, the generated type says what it returns for this proto.
  // eslint-disable-next-line no-restricted-syntax
  clientConstructor ??= (loadPackageDefinition(cachePackageDefinition()) as unknown as ProtoGrpcType).cache.v1.CacheGrpcService;
  return clientConstructor;
}

export function cacheServiceDefinition(): CacheGrpcServiceDefinition {
  return cacheServiceClient().service;
}
