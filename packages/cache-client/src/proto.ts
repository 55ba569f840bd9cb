import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';

/** Where the contract lives in the repository (and in the container images, at the same relative place). */
export const cacheProtoPath = fileURLToPath(new URL('../../../proto/cache/v1/cache.proto', import.meta.url));

/** CacheRequest as decoded by proto-loader (camelCase fields, int64 as number, bytes as Buffer). */
export interface CacheRequest {
  key: string;
  value: Buffer;
  ttlMs: number;
}

export interface CacheResponse {
  found: boolean;
  value: Buffer;
  expiresAtUnixMs: number;
}

export interface IncrementRequest {
  key: string;
  delta: number;
  ttlMs: number;
}

export interface IncrementResponse {
  value: number;
  expiresAtUnixMs: number;
}

/** Decoding options shared by the service and the client, so both see the same shapes. */
export const protoLoaderOptions = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: false } as const;

interface CacheProto {
  cache: { v1: { CacheGrpcService: ServiceClientConstructor } };
}

let packageDefinition: PackageDefinition | undefined;
let clientConstructor: ServiceClientConstructor | undefined;

/** The parsed proto, with the field names the service and the client use (camelCase). */
export function cachePackageDefinition(): PackageDefinition {
  packageDefinition ??= loadSync(cacheProtoPath, protoLoaderOptions);
  return packageDefinition;
}

/** The generic client constructor of cache.v1.CacheGrpcService; its `service` is the server-side definition. */
export function cacheServiceClient(): ServiceClientConstructor {
  clientConstructor ??= (loadPackageDefinition(cachePackageDefinition()) as unknown as CacheProto).cache.v1.CacheGrpcService;
  return clientConstructor;
}

export function cacheServiceDefinition(): ServiceDefinition {
  return cacheServiceClient().service;
}
