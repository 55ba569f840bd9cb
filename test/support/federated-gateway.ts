import { startRegistryServer, type RegistryServer } from '../../services/graph-controller/test/support/registry-server.js';
import { startHiveGateway, type HiveGateway } from './hive-gateway.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';
import { startSubgraphFixtures, SUBGRAPH_NAMES, subgraphSdl, type SubgraphFixtures, type SubgraphFixturesOptions } from './subgraph-fixtures.js';

const API_KEY = 'federated-gateway-api-key-0123456789';
const CDN_KEY = 'federated-gateway-cdn-key-0123456789';
/** Hive Gateway's shortest polling interval (it refuses less). */
export const POLLING_MS = 10_000;

/** The GraphQL gateway of the platform as it runs federated: Hive Gateway on the registry's supergraph of the three subgraphs. */
export interface FederatedGateway {
  /** The user, product and payment subgraphs and their records. */
  fixtures: SubgraphFixtures;
  registry: RegistryServer;
  gateway: HiveGateway;
  /** Hive Gateway's GraphQL endpoint (GRAPHQL_API_URL). */
  url: string;
  close(): Promise<void>;
}

/** Publishes one subgraph as the graph controller does: its routing URL, then its SDL (the registry composes). */
export async function publishSubgraph(registry: { url: string; apiKey: string }, name: string, url: string, sdl: string): Promise<void> {
  const registryUrl = registry.url;
  const headers = { 'x-api-key': registry.apiKey };
  const registered = await fetch(`${registryUrl}/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: url });
  if (registered.status !== 204) throw new Error(`POST /${name} answered ${registered.status} ${await registered.text()}`);
  const published = await fetch(`${registryUrl}/${name}/schema`, { method: 'POST', headers: { ...headers, 'content-type': 'application/graphql' }, body: sdl });
  if (published.status !== 201) throw new Error(`POST /${name}/schema answered ${published.status} ${await published.text()}`);
}

/**
 * The three subgraph fixtures (tokens checked against the shared Keycloak unless told otherwise),
 * published to a graph registry of this process on a Redis of its own, composed, and served by a
 * Hive Gateway process polling the registry's CDN paths: a real gateway between a service and the
 * subgraphs. The controller's part (Services → publishes) is the federation suite's; here the
 * subgraphs are published directly, as `graph-registry subgraph publish` would.
 */
export async function startFederatedGateway(options: SubgraphFixturesOptions = {}): Promise<FederatedGateway> {
  const started: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of started.reverse()) await close();
  };
  try {
    const redis: PrivateRedis = await startPrivateRedis();
    started.push(() => redis.stop());
    const registry = await startRegistryServer(redis.url, [API_KEY], { cdn: { keys: [CDN_KEY], target: 'default' } });
    started.push(() => registry.close());
    const fixtures = await startSubgraphFixtures(options);
    started.push(() => fixtures.close());
    for (const name of SUBGRAPH_NAMES) await publishSubgraph({ url: registry.url, apiKey: API_KEY }, name, fixtures.servers[name].url, subgraphSdl(name));
    // Hive Gateway exits when its CDN has no supergraph yet, so it starts once there is one.
    const gateway = await startHiveGateway({ registryUrl: registry.url, cdnKey: CDN_KEY, pollingMs: POLLING_MS });
    started.push(() => gateway.stop());
    await gateway.ready();
    return { fixtures, registry, gateway, url: gateway.url, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
