// The GraphQL gateway of the end-to-end platform: Hive Gateway (gateway/, a process nobody here
// wrote) on the supergraph the platform's own graph registry composed from the user, product and
// payment subgraph fixtures. Data path of every gateway call of the webhooks service:
// registry (CDN paths) → Hive Gateway → subgraphs.
import type { GatewayData, ReceivedOperation } from '../support/graphql-gateway.js';
import { POLLING_MS, publishSubgraph } from '../support/federated-gateway.js';
import { startHiveGateway, type HiveGateway } from '../support/hive-gateway.js';
import { SUBGRAPH_NAMES, subgraphSdl, type SubgraphFixtures } from '../support/subgraph-fixtures.js';

export interface PlatformGateway {
  /** Hive Gateway's GraphQL endpoint: the webhooks service's GRAPHQL_API_URL. */
  url: string;
  hive: HiveGateway;
  /** The subgraphs behind the gateway; nothing but the gateway calls them. */
  subgraphs: SubgraphFixtures;
  /** The records the subgraphs share, as the gateway's writes left them. */
  data: GatewayData;
  /** The mutations the subgraphs received (of `field` only when given), in order. */
  mutations(field?: string): ReceivedOperation[];
  stop(): Promise<void>;
}

/** The registry the subgraphs are published to and the gateway reads: its base URL, API key (writes) and CDN key (reads). */
export interface GatewayRegistry {
  url: string;
  apiKey: string;
  cdnKey: string;
}

/**
 * Publishes the three subgraphs to the registry (routing URL, then SDL: it composes the
 * supergraph), as the graph controller does from annotated Services, then starts Hive Gateway
 * polling the registry's CDN paths and waits until it serves the supergraph. Hive Gateway exits on
 * a CDN without a supergraph, so it starts only after the publishes.
 */
export async function startPlatformGateway(subgraphs: SubgraphFixtures, registry: GatewayRegistry): Promise<PlatformGateway> {
  for (const name of SUBGRAPH_NAMES) await publishSubgraph(registry, name, subgraphs.servers[name].url, subgraphSdl(name));
  const hive = await startHiveGateway({ registryUrl: registry.url, cdnKey: registry.cdnKey, pollingMs: POLLING_MS });
  try {
    await hive.ready();
  } catch (err) {
    await hive.stop();
    throw err;
  }
  return { url: hive.url, hive, subgraphs, data: subgraphs.data, mutations: (field) => subgraphs.mutations(field), stop: () => hive.stop() };
}
