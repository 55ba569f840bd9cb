import type { Server } from 'node:https';
import { Writable } from 'node:stream';
import { createCacheClient, jsonSerializer, type CacheClient } from '@sp/cache-client';
import { createLogger, createRegistry, type Logger, type Registry } from '@sp/observability';
import { closeGracefully, listen, startManagementServer, type ManagementServer } from '@sp/http';
import { infra } from '../../../../test/support/infra.js';
import { freePort } from '../../../../test/support/redis-server.js';
import { silentLogger } from '../../../../test/support/silent-logger.js';
import { wireAuth, type AuthOverrides, type AuthParts } from '../../src/auth.js';
import { loadConfig, type AuthConfig } from '../../src/config.js';
import { createAuthServer } from '../../src/server.js';
import { generateSelfSignedCertificate, type TlsCredentials } from '../../src/tls.js';
import { httpsClient, type HttpsClient } from './https-client.js';
import { authClient, keycloakUrl } from './keycloak.js';

export const ALLOWED_ORIGIN = 'https://app.example.test';

let certificate: Promise<TlsCredentials> | undefined;
/** One self-signed certificate per test file, which the test clients trust. */
export const testCertificate = (): Promise<TlsCredentials> => (certificate ??= generateSelfSignedCertificate());

/** The environment of a test instance: the real shared Kafka and Keycloak, the given cache service. */
export function testEnvironment(cacheAddress: string, overrides: Record<string, string> = {}): Record<string, string> {
  const client = authClient();
  return {
    Oidc__Realm: infra('KEYCLOAK_REALM'),
    Oidc__ServerUrl: keycloakUrl(),
    Oidc__ClientId: client.clientId,
    Oidc__ClientSecret: client.secret,
    Oidc__AdminCredentials__Username: infra('KEYCLOAK_ADMIN_USERNAME'),
    Oidc__AdminCredentials__Password: infra('KEYCLOAK_ADMIN_PASSWORD'),
    MessageBroker__BrokerList: infra('KAFKA_BROKERS'),
    Cache__Url: cacheAddress,
    Auth__AllowedRedirectUris: `${ALLOWED_ORIGIN},https://other.example.test/app/`,
    // Each test sends its own X-Forwarded-For, so per-IP limits of one test never meet another's.
    Auth__TrustProxy: 'true',
    // Production, as deployed; the test serves its own certificate (testCertificate), not files.
    Tls__TerminatedUpstream: 'true',
    MessageBroker__PublishTimeoutMs: '4000',
    Log__Level: 'silent',
    ...overrides,
  };
}

export interface RunningAuth {
  baseUrl: string;
  managementUrl: string;
  config: AuthConfig;
  registry: Registry;
  client: HttpsClient;
  /** A client of the cache service the instance uses, to look at its records. */
  cache: CacheClient<unknown>;
  close(): Promise<void>;
}

/**
 * Creates an instance for a free loopback port (its public base URL names the port) and listens on
 * it; a port taken meanwhile costs another try, and the instance made for it is closed.
 */
async function listenOnFreePort<T extends { auth: AuthParts }>(build: (port: number) => { instance: T; server: Server }): Promise<{ instance: T; server: Server; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const { instance, server } = build(port);
    try {
      return { instance, server, port: await listen(server, port, '127.0.0.1') };
    } catch (err) {
      await instance.auth.close();
      if (attempt >= 3) throw err;
    }
  }
}

/** A debug-level logger whose lines go to `lines`, to check what the service logs. */
export function capturingLogger(lines: string[]): Logger {
  return createLogger({
    service: 'auth',
    level: 'debug',
    destination: new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        lines.push(chunk.toString());
        callback();
      },
    }),
  });
}

/** How a test instance differs from the service as deployed, besides its environment. */
export interface TestAuthOptions {
  /** Its logger; silent unless told. */
  logger?: Logger;
  /** The service's clock (a test's manualClock or runningClock: test/support/test-clock.ts). */
  now?: () => number;
  /** Adapters the test brings itself (wireAuth's overrides); the test closes them. */
  overrides?: AuthOverrides;
}

/**
 * The service from its root's wiring, wireAuth, on a test environment (`env` on top of testEnvironment),
 * without listening: for tests that drive what the endpoints share below HTTP.
 */
export function createTestAuth(cacheAddress: string, env: Record<string, string> = {}, options: TestAuthOptions = {}): { auth: AuthParts; config: AuthConfig; registry: Registry } {
  const config = loadConfig(testEnvironment(cacheAddress, env));
  const registry = createRegistry('auth');
  const runtime = { logger: options.logger ?? silentLogger('auth'), registry, ...(options.now === undefined ? {} : { now: options.now }) };
  return { auth: wireAuth(config, runtime, options.overrides), config, registry };
}

/**
 * The auth service as main.ts serves it: created by its root (createTestAuth), the HTTPS server
 * and the management server on free loopback ports, against the real dependencies.
 */
export async function startAuth(cacheAddress: string, env: Record<string, string> = {}, logger: Logger = silentLogger('auth'), options: Omit<TestAuthOptions, 'logger'> = {}): Promise<RunningAuth> {
  const credentials = await testCertificate();
  const { instance, server, port } = await listenOnFreePort((candidate) => {
    const instance = createTestAuth(cacheAddress, { Auth__PublicBaseUrl: `https://127.0.0.1:${candidate}`, ...env }, { ...options, logger });
    return { instance, server: createAuthServer(instance.auth.listener, credentials) };
  });
  const { auth, config, registry } = instance;
  const management: ManagementServer = await startManagementServer({ port: 0, host: '127.0.0.1', registry, readiness: auth.readiness, logger });
  const baseUrl = `https://127.0.0.1:${port}`;
  const client = httpsClient(baseUrl, credentials.cert);
  const cache = createCacheClient<unknown>({ address: cacheAddress }, jsonSerializer);
  return {
    baseUrl,
    managementUrl: `http://127.0.0.1:${management.port}`,
    config,
    registry,
    client,
    cache,
    close: async () => {
      await client.close();
      await closeGracefully(server, 1000);
      await management.close();
      await auth.close();
      cache.close();
    },
  };
}

/** The value of one counter series in the registry, 0 when absent. */
export async function counterValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  return values.filter((value) => Object.entries(labels).every(([key, expected]) => value.labels[key] === expected)).reduce((sum, value) => sum + value.value, 0);
}
