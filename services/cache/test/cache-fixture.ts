import { Writable } from 'node:stream';
import { credentials, loadPackageDefinition, type ChannelOptions, type Client, type ClientReadableStream, type ServiceClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import protobuf from 'protobufjs';
import { cacheServiceClient, cacheServiceDefinition, type CacheRequest, type CacheResponse__Output, type IncrementRequest, type IncrementResponse__Output } from '@sp/cache-client';
import { createLogger, createRegistry, type Registry } from '@sp/observability';
import { createCache, type Cache, type CacheOverrides } from '../src/cache.js';
import type { CacheConfig } from '../src/config.js';

export const silentLogger = createLogger({ service: 'cache-test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

export interface RunningCache {
  service: Cache;
  address: string;
  registry: Registry;
  close(): Promise<void>;
}

/**
 * The cache service built by its root as main.ts builds it, on a free loopback port (or `port`, to
 * restart one in place); `now`: the memory backend's clock, when it is to differ from the test's.
 */
export async function startCache(backend: CacheConfig['backend'], maxValueBytes = 1024 * 1024, port = 0, overrides: CacheOverrides = {}, now?: () => number): Promise<RunningCache> {
  const registry = createRegistry('cache');
  const service = createCache({ port, host: '127.0.0.1', backend, maxValueBytes }, { registry, logger: silentLogger, ...(now === undefined ? {} : { now }) }, overrides);
  const boundPort = await service.api.start();
  return {
    service,
    address: `127.0.0.1:${boundPort}`,
    registry,
    close: async () => {
      await service.api.drain(1000);
      await service.close();
    },
  };
}

/** Any request message, with int64 fields also as decimal strings (as a client may send int64 max). */
export type RawRequest = Partial<Record<keyof CacheRequest | keyof IncrementRequest, unknown>>;
type RawResponse = CacheResponse__Output & IncrementResponse__Output;
type RawMethod = (request: RawRequest, callback: (err: ServiceError | null, response?: RawResponse) => void) => void;
export type RpcName = 'Get' | 'Set' | 'Remove' | 'Increment' | 'SetIfAbsent' | 'RemoveIfEquals';
export type RawClient = Client & Record<RpcName, RawMethod>;

/** A bare gRPC client, to see status codes exactly as they travel on the wire. */
export function rawClient(address: string, options: ChannelOptions = {}): RawClient {
  const Constructor = cacheServiceClient();
  return new Constructor(address, credentials.createInsecure(), options) as unknown as RawClient;
}

export function rawCall(client: RawClient, method: RpcName, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => client[method](request, (err, response) => (err ? reject(err) : resolve(response!))));
}

/** A CacheRequest (or IncrementRequest) whose key is exactly these bytes, encoded by protobufjs' writer. */
export function requestWithKeyBytes(key: Buffer, value?: Buffer): Buffer {
  const writer = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(key);
  if (value !== undefined) writer.uint32((2 << 3) | 2).bytes(value);
  return Buffer.from(writer.finish());
}

/** One call whose request bytes are sent as they are: a client that sends what grpcurl cannot. */
export function callWithBytes(client: Client, method: RpcName, request: Buffer): Promise<CacheResponse__Output> {
  const { path, responseDeserialize } = cacheServiceDefinition()[method];
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(path, (bytes: Buffer) => bytes, (bytes: Buffer) => responseDeserialize(bytes) as CacheResponse__Output, request, (err: ServiceError | null, response?: CacheResponse__Output) =>
      err ? reject(err) : resolve(response!),
    ),
  );
}

/** A grpc.health.v1.Health client (statuses as enum names), as a Kubernetes gRPC probe or a mesh uses it. */
export interface HealthClient {
  Check(request: { service: string }, callback: (err: Error | null, response?: { status: string }) => void): void;
  Watch(request: { service: string }): ClientReadableStream<{ status: string }>;
  close(): void;
}

export function healthClient(address: string): HealthClient {
  const proto = loadPackageDefinition(loadSync(healthProtoPath, { enums: String })) as unknown as { grpc: { health: { v1: { Health: ServiceClientConstructor } } } };
  return new proto.grpc.health.v1.Health(address, credentials.createInsecure()) as unknown as HealthClient;
}

/** The status grpc.health.v1.Health reports for `service` ('' for the server), as a Kubernetes gRPC probe asks it. */
export function healthCheck(address: string, service: string): Promise<string> {
  const client = healthClient(address);
  return new Promise((resolve, reject) =>
    client.Check({ service }, (err, response) => {
      client.close();
      if (err) reject(err);
      else resolve(response!.status);
    }),
  );
}
