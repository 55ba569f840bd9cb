// What the in-cluster auth and webhooks services call, reachable from pods the way a user's
// services would be outside the cluster: the shared Keycloak and stripe-mock, a Kafka broker and a
// password-protected Redis of the suite's own, the localization fixture (and, when asked, the
// GraphQL gateway fixture), and
// a Keycloak of the same realm over https with a certificate of a CA the suite makes (auth runs
// in Production, which refuses a plain-http identity provider).
// Each listens on this machine's loopback and is exposed at the node address (cluster.sh expose),
// where the suite calls it too: Keycloak's issuer is the address it was asked on, and Kafka tells
// clients to come back to its advertised one, so pods and the suite must use the same address.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { demoData } from '../../../scripts/local-platform.js';
import { startGraphqlGateway, type GatewayClient, type GraphqlGatewayFixture } from '../../support/graphql-gateway.js';
import { startLocalizationService, type LocalizationServiceFixture } from '../../support/localization-service.js';
import { infra } from '../../support/infra.js';
import { startPrivateKafka, type PrivateKafka } from '../../support/kafka-broker.js';
import { freePort, spawnRedis, type RedisProcess } from '../../support/redis-server.js';
import { repoRoot } from '../../deploy/support/service-config.js';
import { startAll } from '../../support/start-all.js';
import { makeServerCertificate } from './certificate-authority.js';
import { clusterSh, infraSh } from './cluster.js';

/** The gateway fixture with the demo data of `make up` (scripts/local-fixtures.ts), at the node address. */
export interface GatewayFixture {
  fixture: GraphqlGatewayFixture;
  client: GatewayClient;
  url: string;
}

// The GraphQL API the webhooks call is in the cluster (the chart's Hive Gateway on the subgraph
// fixtures' Pod, support/subgraphs.ts), or this gateway fixture for a chart without the gateway.
export interface ClusterDependencies {
  localization: LocalizationServiceFixture;
  /** The gateway fixture, when asked for (`gatewayFixture`). */
  gateway: GatewayFixture | undefined;
  /** Base URLs and addresses as pods (and the suite) reach them. */
  keycloakUrl: string;
  /** The https Keycloak (same realm, its own database) and the PEM of the CA that signed its certificate. */
  keycloakHttps: { url: string; caPem: string };
  stripeApiUrl: string;
  kafkaBrokers: string;
  /** redis://:<password>@<node>:<port>/0, for a Secret. */
  redisUrl: string;
  localizationUrl: string;
  /** The node-address ports, for the NetworkPolicy egress values (apis: localization, stripe-mock and the gateway fixture). */
  ports: { keycloak: number; keycloakHttps: number; kafka: number; redis: number; apis: number[] };
  close(): Promise<void>;
}

const portOf = (url: string): number => Number(new URL(url).port);

/** redis-server on loopback with a password (a non-loopback client of a password-less one is refused by protected mode). */
async function startPasswordRedis(password: string): Promise<RedisProcess> {
  const port = await freePort();
  return spawnRedis(port, ['--bind', '127.0.0.1', '--port', String(port), '--requirepass', password, '--save', '', '--appendonly', 'no']);
}

const keycloakScript = join(repoRoot, 'test/infra/keycloak.sh');
const HTTPS_KEYCLOAK = 'keycloak-cluster-https';

/** keycloak.sh start-https with a certificate for the node address and loopback; its loopback URL. */
async function startHttpsKeycloak(dir: string, nodeIp: string): Promise<{ url: string; caPem: string }> {
  const { caPem, caFile, certFile, keyFile } = await makeServerCertificate(dir, [nodeIp, '127.0.0.1']);
  const started = await infraSh(keycloakScript, ['start-https', HTTPS_KEYCLOAK, certFile, keyFile, caFile]);
  if (started.code !== 0) throw new Error(`keycloak.sh start-https failed: ${started.stderr}`);
  return { url: started.stdout.trim(), caPem };
}

async function expose(ports: readonly number[]): Promise<void> {
  const outcome = await clusterSh(['expose', ...ports.map(String)]);
  if (outcome.code !== 0) throw new Error(`cluster.sh expose failed: ${outcome.stderr}`);
}

/** The gateway fixture, seeded with the demo client, plan and subscribers; it accepts the tokens Keycloak issues to pods, whose issuer names the node address. */
async function startGatewayFixture(keycloakUrl: string): Promise<Omit<GatewayFixture, 'url'>> {
  const fixture = await startGraphqlGateway({ keycloakUrl });
  const client = fixture.addClient({ ...demoData.client });
  fixture.addPlan({ ...demoData.plan, active: true });
  for (const subscriber of demoData.subscribers) fixture.addSubscriber(client.id, subscriber.phoneNumber, subscriber.locale);
  return { fixture, client };
}

/**
 * Starts the dependencies on a running cluster whose node address is `nodeIp` (files under `dir`),
 * the gateway fixture too when `gatewayFixture`; on failure, stops what started.
 */
export async function startClusterDependencies(nodeIp: string, dir: string, options: { gatewayFixture: boolean }): Promise<ClusterDependencies> {
  const keycloakUrl = `http://${nodeIp}:${portOf(infra('KEYCLOAK_URL'))}`;
  const stripeApiUrl = `http://${nodeIp}:${portOf(infra('STRIPE_MOCK_URL'))}`;
  const password = randomBytes(18).toString('base64url');
  let kafka: PrivateKafka | undefined;
  let redis: RedisProcess | undefined;
  let localization: LocalizationServiceFixture | undefined;
  let gateway: Omit<GatewayFixture, 'url'> | undefined;
  let keycloakHttps: { url: string; caPem: string } | undefined;
  const close = async (): Promise<void> => {
    await Promise.all([kafka?.close(), redis?.kill(), localization?.close(), gateway?.fixture.close(), infraSh(keycloakScript, ['stop-https', HTTPS_KEYCLOAK])]);
  };
  try {
    // Each started value is assigned only once all have started: startAll stops those that did
    // when one fails (close() below covers what fails after).
    [kafka, redis, localization, keycloakHttps, gateway] = await startAll<[PrivateKafka, RedisProcess, LocalizationServiceFixture, { url: string; caPem: string }, Omit<GatewayFixture, 'url'> | undefined]>([
      [startPrivateKafka({ advertisedHost: nodeIp }), (started) => started.close()],
      [startPasswordRedis(password), (started) => started.kill()],
      [startLocalizationService(), (started) => started.close()],
      [startHttpsKeycloak(dir, nodeIp), () => infraSh(keycloakScript, ['stop-https', HTTPS_KEYCLOAK])],
      [options.gatewayFixture ? startGatewayFixture(keycloakUrl) : Promise.resolve(undefined), (started) => started?.fixture.close()],
    ]);
    const kafkaPort = Number(kafka.brokers.split(':')[1]);
    const localizationPort = portOf(localization.url);
    const ports = { keycloak: portOf(keycloakUrl), keycloakHttps: portOf(keycloakHttps.url), kafka: kafkaPort, redis: redis.port, apis: [localizationPort, portOf(stripeApiUrl), ...(gateway ? [gateway.fixture.port] : [])] };
    await expose([ports.keycloak, ports.keycloakHttps, ports.kafka, ports.redis, ...ports.apis]);
    const redisUrl = `redis://:${password}@${nodeIp}:${redis.port}/0`;
    const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      if ((await probe.ping()) !== 'PONG') throw new Error('the Redis at the node address does not answer PING');
    } finally {
      probe.disconnect();
    }
    return {
      localization,
      gateway: gateway && { ...gateway, url: `http://${nodeIp}:${gateway.fixture.port}/graphql` },
      keycloakUrl,
      keycloakHttps: { url: `https://${nodeIp}:${ports.keycloakHttps}`, caPem: keycloakHttps.caPem },
      stripeApiUrl,
      kafkaBrokers: kafka.brokers,
      redisUrl,
      localizationUrl: `http://${nodeIp}:${localizationPort}`,
      ports,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
