import { createServer, type Server } from 'node:http';
import type { StoreConfig } from '@sp/core';
import { createRegistry, type Registry } from '@sp/observability';
import { closeGracefully, listen, requestListener, startManagementServer, type ManagementServer } from '@sp/http';
import type { EventPublisher } from '@sp/messaging';
import { wireGraphRegistry } from '../../src/graph-registry.js';
import { DEFAULT_SCHEMA_CHECKER, type SchemaCheckerOptions } from '../../src/schemas/schema-checker.js';
import { DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from '../../src/schemas/schema-publisher.js';
import type { GraphStore } from '../../src/graphs/graph-store.js';
import type { CdnSettings } from '../../src/cdn/artifact-handler.js';
import type { FederationSettings } from '../../src/federation/supergraph-composer.js';
import { silentLogger as quietLogger } from '../../../../test/support/silent-logger.js';
import { assertDocumented } from './openapi-contract.js';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../../../test/support/redis-server.js';
import { send, type HttpResponse, type RawRequest } from './http-client.js';
import { npmStart, startService } from '../../../../test/support/service-process.js';
import { serviceEnv } from '../../../../test/deploy/support/service-env.js';

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

/** The registry from its root's wiring, wireGraphRegistry, as main.ts serves it (HTTP server, management server), on free loopback ports. */
export interface RegistryOptions {
  schemaChecks?: SchemaCheckerOptions;
  schemaPublishing?: SchemaPublishing;
  events?: EventPublisher;
  federation?: FederationSettings;
  cdn?: CdnSettings;
}

export async function startRegistry(store: StoreConfig, apiKeys: readonly string[] = [API_KEY, ROTATED_API_KEY], options: RegistryOptions = {}): Promise<RunningRegistry> {
  const registry = createRegistry('graph-registry');
  const settings = {
    // The root's api is not served here (the test serves `app` itself); these are its listener settings all the same.
    port: 0,
    host: '127.0.0.1',
    store,
    apiKeys,
    schemaChecker: options.schemaChecks ?? DEFAULT_SCHEMA_CHECKER,
    schemaPublishing: options.schemaPublishing ?? DEFAULT_SCHEMA_PUBLISHING,
    ...(options.federation === undefined ? {} : { federation: options.federation }),
    ...(options.cdn === undefined ? {} : { cdn: options.cdn }),
  };
  const graphRegistry = wireGraphRegistry(settings, { logger: silentLogger, registry }, options.events === undefined ? {} : { events: options.events });
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

/**
 * Requests as a caller holding `key` sends them (no X-Api-Key header at all when key is null), each
 * failing after `timeoutMs` without an answer (send's 5 s unless given).
 */
export function client(baseUrl: string, key: string | null = API_KEY, timeoutMs?: number) {
  const auth = key === null ? {} : { 'x-api-key': key };
  const bound = timeoutMs === undefined ? {} : { timeoutMs };
  const text = (method: string, path: string, body: string | Buffer, contentType = 'text/plain') =>
    call(baseUrl, { method, path, headers: { ...auth, 'content-type': contentType }, body, ...bound });
  return {
    get: (path: string) => call(baseUrl, { method: 'GET', path, headers: auth, ...bound }),
    delete: (path: string) => call(baseUrl, { method: 'DELETE', path, headers: auth, ...bound }),
    post: text,
    registerGraph: (name: string, url: string) => text('POST', `/${name}`, url),
    storeSchema: (sdl: string, contentType = 'application/graphql') => text('POST', '/schema', sdl, contentType),
    send: (request: Omit<RawRequest, 'headers'> & { headers?: RawRequest['headers'] }) =>
      call(baseUrl, { ...bound, ...request, headers: { ...auth, ...request.headers } }),
  };
}

export type Client = ReturnType<typeof client>;


/**
 * The registry's build as its container runs it (`npm start`), in a process of its own, on the
 * store at `storeUrl`. For the checks of what other callers see while one request is costly: the
 * registry then has its own event loop and heap, not the test process's, which after a hundred
 * suites collects garbage of its own in the middle of a measurement.
 */
export interface RegistryProcess {
  baseUrl: string;
  managementUrl: string;
  /** Its process id: to stop (SIGSTOP) or kill it as a test of its callers needs. */
  pid: number;
  close(): Promise<void>;
}

export async function startRegistryProcess(storeUrl: string, env: Record<string, string> = {}): Promise<RegistryProcess> {
  const child = await startService({
    name: 'graph-registry',
    ...npmStart('graph-registry'),
    env: { ...serviceEnv('graph-registry', {}), STORE_URL: storeUrl, MONITOR_API_KEY: API_KEY, ...env },
    ready: true,
  });
  return {
    baseUrl: `http://127.0.0.1:${child.port}`,
    managementUrl: `http://127.0.0.1:${child.managementPort}`,
    pid: child.pid,
    close: async () => {
      const exit = await child.stop(5000);
      if (exit.code !== 0) throw new Error(`graph-registry exited with ${exit.code ?? exit.signal}: ${child.logTail()}`);
    },
  };
}

/** Runs `work` against a registry process of its own on `storeUrl`, stopped after. */
export async function withRegistryProcess<T>(storeUrl: string, work: (baseUrl: string) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const registry = await startRegistryProcess(storeUrl, env);
  try {
    return await work(registry.baseUrl);
  } finally {
    await registry.close();
  }
}

/** A registry on a private Redis of its own, with a direct connection to that Redis for assertions. */
export interface RegistryOnRedis<R extends { baseUrl: string; close(): Promise<void> } = RunningRegistry> {
  registry: R;
  api: Client;
  direct: Redis;
  /** The private Redis's URL, for another registry (or a process of its own) on the same store. */
  redisUrl: string;
  close(): Promise<void>;
}

async function onPrivateRedis<R extends { baseUrl: string; close(): Promise<void> }>(start: (url: string) => Promise<R>): Promise<RegistryOnRedis<R>> {
  const redis = await startPrivateRedis();
  const direct = new Redis(redis.url);
  const registry = await start(redis.url);
  return {
    registry,
    api: client(registry.baseUrl),
    direct,
    redisUrl: redis.url,
    close: async () => {
      await registry.close();
      direct.disconnect();
      await redis.stop();
    },
  };
}

export function startRegistryOnPrivateRedis(options: RegistryOptions = {}): Promise<RegistryOnRedis> {
  return onPrivateRedis((url) => startRegistry({ kind: 'redis', url }, undefined, options));
}

/** The same with the registry in a process of its own (startRegistryProcess), configured by `env`. */
export function startRegistryProcessOnPrivateRedis(env: Record<string, string> = {}): Promise<RegistryOnRedis<RegistryProcess>> {
  return onPrivateRedis((url) => startRegistryProcess(url, env));
}
