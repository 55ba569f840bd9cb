import { createServer, type Server } from 'node:http';
import { closeGracefully, createRegistry, type EventPublisher, listen, requestListener, startManagementServer, type ManagementServer, type Registry, type StoreConfig } from '@sp/platform';
import { createGraphRegistry } from '../../src/graph-registry.js';
import { DEFAULT_SCHEMA_CHECKER, type SchemaCheckerOptions } from '../../src/schema-checker.js';
import { DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from '../../src/schema-publisher.js';
import type { GraphStore } from '../../src/graph-store.js';
import { silentLogger as quietLogger } from '../../../../test/support/silent-logger.js';
import { assertDocumented } from './openapi-contract.js';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../../../test/support/redis-server.js';
import { send, type HttpResponse, type RawRequest } from './http-client.js';

export const silentLogger = quietLogger('graph-registry-test');

export const API_KEY = 'test-key-0123456789abcdef';
export const ROTATED_API_KEY = 'test-key-next-fedcba9876543210';

export interface RunningRegistry {
  baseUrl: string;
  managementUrl: string;
  store: GraphStore;
  registry: Registry;
  server: Server;
  management: ManagementServer;
  close(): Promise<void>;
}

/** The registry from its root, createGraphRegistry, as main.ts serves it (HTTP server, management server), on free loopback ports. */
export interface RegistryOptions {
  schemaChecks?: SchemaCheckerOptions;
  schemaPublishing?: SchemaPublishing;
  events?: EventPublisher;
}

export async function startRegistry(store: StoreConfig, apiKeys: readonly string[] = [API_KEY, ROTATED_API_KEY], options: RegistryOptions = {}): Promise<RunningRegistry> {
  const registry = createRegistry('graph-registry');
  const settings = { store, apiKeys, schemaChecker: options.schemaChecks ?? DEFAULT_SCHEMA_CHECKER, schemaPublishing: options.schemaPublishing ?? DEFAULT_SCHEMA_PUBLISHING };
  const graphRegistry = createGraphRegistry(settings, { logger: silentLogger, registry }, options.events === undefined ? {} : { events: options.events });
  const { app, store: graphStore } = graphRegistry;
  const server = createServer(requestListener(app));
  const port = await listen(server, 0, '127.0.0.1');
  const management = await startManagementServer({ port: 0, host: '127.0.0.1', registry, readiness: graphRegistry.readiness, logger: silentLogger });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    managementUrl: `http://127.0.0.1:${management.port}`,
    store: graphStore,
    registry,
    server,
    management,
    close: async () => {
      await closeGracefully(server, 1000);
      await management.close();
      await graphRegistry.close();
    },
  };
}

/** A request to the registry's API whose answer is checked against openapi.yaml before it is returned. */
export async function call(baseUrl: string, request: RawRequest): Promise<HttpResponse> {
  const response = await send(baseUrl, request);
  assertDocumented(request.method, request.path, response);
  return response;
}

/** Requests as a caller holding `key` sends them (no X-Api-Key header at all when key is null). */
export function client(baseUrl: string, key: string | null = API_KEY) {
  const auth = key === null ? {} : { 'x-api-key': key };
  const text = (method: string, path: string, body: string | Buffer, contentType = 'text/plain') =>
    call(baseUrl, { method, path, headers: { ...auth, 'content-type': contentType }, body });
  return {
    get: (path: string) => call(baseUrl, { method: 'GET', path, headers: auth }),
    delete: (path: string) => call(baseUrl, { method: 'DELETE', path, headers: auth }),
    post: text,
    registerGraph: (name: string, url: string) => text('POST', `/${name}`, url),
    storeSchema: (sdl: string, contentType = 'application/graphql') => text('POST', '/schema', sdl, contentType),
    send: (request: Omit<RawRequest, 'headers'> & { headers?: RawRequest['headers'] }) =>
      call(baseUrl, { ...request, headers: { ...auth, ...request.headers } }),
  };
}

export type Client = ReturnType<typeof client>;


/** A registry on a private Redis of its own, with a direct connection to that Redis for assertions. */
export interface RegistryOnRedis {
  registry: RunningRegistry;
  api: Client;
  direct: Redis;
  close(): Promise<void>;
}

export async function startRegistryOnPrivateRedis(options: RegistryOptions = {}): Promise<RegistryOnRedis> {
  const redis = await startPrivateRedis();
  const direct = new Redis(redis.url);
  const registry = await startRegistry({ kind: 'redis', url: redis.url }, undefined, options);
  return {
    registry,
    api: client(registry.baseUrl),
    direct,
    close: async () => {
      await registry.close();
      direct.disconnect();
      await redis.stop();
    },
  };
}
