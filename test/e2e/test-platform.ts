// The whole platform for the end-to-end suite: the four services as child processes from their
// builds on free ports; the GraphQL gateway as in `make up`: Hive Gateway on the supergraph the
// platform's graph registry composed from the user, product and payment subgraph fixtures (in this
// process, with the demo data of `make up`); the localization fixture; against the shared Redis,
// Kafka, Keycloak and stripe-mock. As under
// `make up`, the auth service's certificate is signed by the local CA Keycloak trusts, and its
// Keycloak client (a copy of platform-auth of the suite's own) posts back-channel Logout Tokens to it.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { localSecrets, localUrls } from '../../scripts/local-platform.js';
import { createAuthClientCopy } from '../../services/auth/test/support/keycloak.js';
import type { GatewayClient } from '../support/graphql-gateway.js';
import { infra } from '../support/infra.js';
import { startLocalizationService, type LocalizationServiceFixture } from '../support/localization-service.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startAll } from '../support/start-all.js';
import { seedDemoData, startSubgraphFixtures, type SubgraphFixtures, type SubgraphFixturesOptions } from '../support/subgraph-fixtures.js';
import { startPlatformGateway, type PlatformGateway } from './platform-gateway.js';
import { DEFAULT_TOPICS, type JourneyTargets } from './journey.js';
import { sharedKeycloakAdmin } from './journey-support.js';
import { stopServices, type ServiceExit, type ServiceProcess } from '../support/service-process.js';
import { startPlatformService, type ServiceName } from './platform-service.js';
import { issueLocalCertificate, localCaCertificate, type IssuedCertificate } from './local-tls.js';

/** The four services of the platform's API (the graph controller runs in a cluster, or beside them in `make up`). */
export type PlatformServiceName = Exclude<ServiceName, 'graph-controller'>;

export const ALLOWED_REDIRECT = 'https://app.example.test';

export interface TestPlatform {
  services: Record<PlatformServiceName, ServiceProcess>;
  /** Hive Gateway on the registry's supergraph, and the subgraphs behind it. */
  gateway: PlatformGateway;
  localization: LocalizationServiceFixture;
  /** The demo client as the user subgraph has it. */
  client: GatewayClient;
  /** The registry's read-only key of its CDN paths (Registry__CdnKeys), which the gateway polls with. */
  registryCdnKey: string;
  /**
   * Where the graph registry keeps its records: a redis-server of this platform's own, since the
   * subgraphs' and the supergraph's keys have fixed names and several platforms run side by side.
   */
  registryStoreUrl: string;
  /** The Keycloak client the auth service logs in through (azp of its tokens). */
  authClientId: string;
  targets: JourneyTargets;
  /** Stops the services with SIGTERM (how each exited), then the fixtures; safe to call twice. */
  stop(): Promise<Record<string, ServiceExit>>;
}

const realmFile = fileURLToPath(new URL('../infra/keycloak/realm.json', import.meta.url));

/** The secret realm.json gives a confidential client of the shared Keycloak. */
export function realmClientSecret(clientId: string): string {
  const realm = JSON.parse(readFileSync(realmFile, 'utf8')) as { clients: Array<{ clientId: string; secret?: string }> };
  const secret = realm.clients.find((client) => client.clientId === clientId)?.secret;
  if (secret === undefined) throw new Error(`realm.json has no secret for ${clientId}`);
  return secret;
}

const oidc = (clientId: string, clientSecret: string): Record<string, string> => ({
  Oidc__ServerUrl: infra('KEYCLOAK_URL'),
  Oidc__Realm: infra('KEYCLOAK_REALM'),
  Oidc__ClientId: clientId,
  Oidc__ClientSecret: clientSecret,
});

export interface Fixtures {
  /** The user, product and payment services as subgraphs (the gateway's backends). */
  subgraphs: SubgraphFixtures;
  localization: LocalizationServiceFixture;
  client: GatewayClient;
  close(): Promise<void>;
}

/** The subgraph and localization fixtures with the demo data of `make up` (scripts/local-fixtures.ts). */
export async function startFixtures(subgraphOptions: SubgraphFixturesOptions = {}): Promise<Fixtures> {
  const [subgraphs, localization] = await startAll<[SubgraphFixtures, LocalizationServiceFixture]>([
    [startSubgraphFixtures(subgraphOptions), (started) => started.close()],
    [startLocalizationService(), (started) => started.close()],
  ]);
  const client = seedDemoData(subgraphs);
  return { subgraphs, localization, client, close: async () => void (await Promise.all([subgraphs.close(), localization.close()])) };
}

type AuthClient = Awaited<ReturnType<typeof createAuthClientCopy>>;

function authEnv(cacheAddress: string, tls: IssuedCertificate, client: AuthClient, brokers: string): (port: number) => Record<string, string> {
  return (port) => ({
    // NODE_ENV unset: Production, so the code travels only in the SMS event.
    Auth__Host: '127.0.0.1',
    Auth__PublicBaseUrl: `https://127.0.0.1:${port}`,
    Auth__AllowedRedirectUris: ALLOWED_REDIRECT,
    Tls__CertPath: tls.certPath,
    Tls__KeyPath: tls.keyPath,
    ...oidc(client.clientId, client.secret),
    Oidc__AdminCredentials__Username: infra('KEYCLOAK_ADMIN_USERNAME'),
    Oidc__AdminCredentials__Password: infra('KEYCLOAK_ADMIN_PASSWORD'),
    MessageBroker__BrokerList: brokers,
    Cache__Url: cacheAddress,
  });
}

function webhooksEnv(cacheAddress: string, apis: { gateway: string; localization: string }, brokers: string): (port: number) => Record<string, string> {
  return (port) => ({
    Webhooks__Host: '127.0.0.1',
    Webhooks__PublicBaseUrl: `http://127.0.0.1:${port}`,
    WEBHOOKS_API_KEY: localSecrets.webhooksApiKey,
    PAYMENT_PROVIDER_API_KEY: localSecrets.stripeApiKey,
    PAYMENT_PROVIDER_API_URL: infra('STRIPE_MOCK_URL'),
    PAYMENT_PROVIDER_WEBHOOKS_SECRET: localSecrets.stripeWebhookSecret,
    SMS_PROVIDER_ACCOUNT_SID: localSecrets.twilioAccountSid,
    SMS_PROVIDER_AUTH_TOKEN: localSecrets.twilioAuthToken,
    GRAPHQL_API_URL: apis.gateway,
    LOCALIZATION_API_URL: apis.localization,
    STORE_URL: infra('REDIS_URL'),
    Cache__Url: cacheAddress,
    MessageBroker__BrokerList: brokers,
    ...oidc(infra('KEYCLOAK_SERVICES_CLIENT_ID'), infra('KEYCLOAK_SERVICES_CLIENT_SECRET')),
    AccountUrl: localUrls.account,
    BillingPortalUrl: localUrls.billingPortal,
    ClientLinkBaseUri: localUrls.clientBase,
  });
}

/**
 * Starts the platform. `otlpEndpoint` goes to every service as `Otlp__Endpoint`; `kafkaBrokers`
 * (default: the shared broker) is where auth and webhooks publish, e.g. a test's own broker it
 * may stop; `settings` adds to (or overrides) a service's environment. On a failed start,
 * whatever started is stopped again before the error is thrown.
 */
export async function startTestPlatform(
  options: { otlpEndpoint?: string; kafkaBrokers?: string; settings?: Partial<Record<PlatformServiceName, Record<string, string>>> } = {},
): Promise<TestPlatform> {
  const brokers = options.kafkaBrokers ?? infra('KAFKA_BROKERS');
  const common = { Log__Level: 'info', Shutdown__GracePeriodMs: '5000', ...(options.otlpEndpoint === undefined ? {} : { Otlp__Endpoint: options.otlpEndpoint }) };
  const withCommon = (env: (port: number) => Record<string, string>, name: PlatformServiceName) => (port: number) => ({ ...common, ...env(port), ...options.settings?.[name] });
  const started: ServiceProcess[] = [];
  const keep = (service: ServiceProcess): ServiceProcess => {
    started.push(service);
    return service;
  };
  let fixtures: Fixtures | undefined;
  let registryRedis: PrivateRedis | undefined;
  let gateway: PlatformGateway | undefined;
  const tls = await issueLocalCertificate();
  // Back-channel logout to nowhere until the auth service listens (not to `make up`'s 5555 of the template).
  const authClient = await createAuthClientCopy(`platform-auth-e2e-${randomUUID().slice(0, 8)}`, { 'backchannel.logout.url': '' });
  try {
    [fixtures, registryRedis] = await startAll<[Fixtures, PrivateRedis]>([
      [startFixtures(), (started) => started.close()],
      [startPrivateRedis(), (started) => started.stop()],
    ]);
    const cacheService = keep(await startPlatformService({ name: 'cache', env: withCommon(() => ({ Cache__Host: '127.0.0.1', Cache__Backend: 'memory' }), 'cache') }));
    const cacheAddress = `127.0.0.1:${cacheService.port}`;
    const registryEnv = withCommon(
      () => ({ Registry__Host: '127.0.0.1', STORE_URL: registryRedis!.url, MONITOR_API_KEY: localSecrets.registryApiKey, Registry__CdnKeys: localSecrets.registryCdnKey }),
      'graph-registry',
    );
    const [registry, auth] = await Promise.all([
      startPlatformService({ name: 'graph-registry', env: registryEnv }).then(keep),
      startPlatformService({ name: 'auth', env: withCommon(authEnv(cacheAddress, tls, authClient, brokers), 'auth') }).then(keep),
    ]);
    // The webhooks service's readiness asks the gateway, so the gateway serves before it starts.
    gateway = await startPlatformGateway(fixtures.subgraphs, { url: `http://127.0.0.1:${registry.port}`, apiKey: localSecrets.registryApiKey, cdnKey: localSecrets.registryCdnKey });
    const apis = { gateway: gateway.url, localization: fixtures.localization.url };
    const webhooks = keep(await startPlatformService({ name: 'webhooks', env: withCommon(webhooksEnv(cacheAddress, apis, brokers), 'webhooks') }));
    await authClient.setAttributes({ 'backchannel.logout.url': `https://localhost:${auth.port}/backchannel-logout` });
    const backing = { gateway, fixtures, registryRedis, authClient };
    return platformOf({ cache: cacheService, 'graph-registry': registry, auth, webhooks }, backing, brokers);
  } catch (err) {
    await stopServices(started, 5000);
    await Promise.all([gateway?.stop(), fixtures?.close(), registryRedis?.stop(), authClient.remove()]);
    throw err;
  } finally {
    // The auth service reads its certificate and key at start only.
    tls.remove();
  }
}

/** What the platform's services stand on in this process: stopped after them. */
interface Backing {
  gateway: PlatformGateway;
  fixtures: Fixtures;
  registryRedis: PrivateRedis;
  authClient: AuthClient;
}

function platformOf(services: Record<PlatformServiceName, ServiceProcess>, backing: Backing, brokers: string): TestPlatform {
  const { gateway, fixtures, registryRedis, authClient } = backing;
  const webhooksUrl = `http://127.0.0.1:${services.webhooks.port}`;
  let stopped: Promise<Record<string, ServiceExit>> | undefined;
  return {
    services,
    gateway,
    localization: fixtures.localization,
    client: fixtures.client,
    registryCdnKey: localSecrets.registryCdnKey,
    registryStoreUrl: registryRedis.url,
    authClientId: authClient.clientId,
    targets: {
      auth: { url: `https://127.0.0.1:${services.auth.port}`, ca: localCaCertificate() },
      registry: { url: `http://127.0.0.1:${services['graph-registry'].port}`, apiKey: localSecrets.registryApiKey },
      webhooks: {
        url: webhooksUrl,
        publicBaseUrl: webhooksUrl,
        apiKey: localSecrets.webhooksApiKey,
        stripeWebhookSecret: localSecrets.stripeWebhookSecret,
        twilioAuthToken: localSecrets.twilioAuthToken,
        twilioAccountSid: localSecrets.twilioAccountSid,
      },
      stripe: { apiUrl: infra('STRIPE_MOCK_URL'), apiKey: localSecrets.stripeApiKey },
      kafka: { brokers: brokers.split(','), topics: DEFAULT_TOPICS },
      keycloak: sharedKeycloakAdmin(),
      backchannelLogout: true,
    },
    stop() {
      stopped ??= (async () => {
        const exits = await stopServices(Object.values(services));
        await Promise.all([gateway.stop(), fixtures.close(), registryRedis.stop(), authClient.remove()]);
        return exits;
      })();
      return stopped;
    },
  };
}
