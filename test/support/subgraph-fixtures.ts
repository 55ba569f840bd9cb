import { readFileSync } from 'node:fs';
import { demoData } from '../../scripts/local-platform.js';
import { infra } from './infra.js';
import {
  createTokenVerifier,
  emptyData,
  type GatewayClient,
  operationLog,
  operationsView,
  rootValue,
  seeding,
  type GatewayData,
  type Seeding,
  type ReceivedOperation,
  type TokenCounts,
} from './graphql-gateway.js';
import { startSubgraphServer, type SubgraphResolvers, type SubgraphServer } from './subgraph-server.js';

/** The subgraphs of the specification's user, product and payment services. */
export const SUBGRAPH_NAMES = ['user', 'product', 'payment'] as const;
export type SubgraphName = (typeof SUBGRAPH_NAMES)[number];

/** A subgraph's SDL as this repository keeps it (test/support/subgraphs/{name}.graphql). */
export const subgraphSdl = (name: string): string => readFileSync(new URL(`./subgraphs/${name}.graphql`, import.meta.url), 'utf8');

/** Which root fields of the contract each service resolves (their SDLs declare the same). */
const ROOT_FIELDS: Readonly<Record<SubgraphName, readonly string[]>> = {
  user: ['clientByProviderCustomerId', 'clientByPhoneNumber', 'clientByNumber', 'subscribers', 'unsubscribe'],
  product: ['planByProviderProductId', 'priceTierByProviderPriceId', 'createPlan', 'updatePlan', 'deletePlan', 'createPriceTier', 'updatePriceTier', 'deletePriceTier'],
  payment: ['paymentConfirmation', 'createPaymentConfirmation', 'createPlanSubscription'],
};

export interface SubgraphFixturesOptions {
  /** Ports of the three servers (make up's fixed ones); free ones by default. */
  ports?: Partial<Record<SubgraphName, number>>;
  /** Check the bearer token the gateway forwards (Keycloak's, as the contract fixture does); on by default. */
  verifyTokens?: boolean;
  /** The Keycloak whose tokens are accepted (its address is the tokens' issuer); the shared one by default. */
  keycloakUrl?: string;
  /** Operations kept (the oldest are dropped); all by default. */
  keepOperations?: number;
  /** The address the servers listen on; loopback by default (`0.0.0.0` in a Pod). */
  host?: string;
}

/** The three subgraph servers over one data set, seeded the way the gateway fixture is. */
export interface SubgraphFixtures extends Seeding {
  servers: Record<SubgraphName, SubgraphServer>;
  /** The records the three services share (one platform's data). */
  data: GatewayData;
  /** Every authorized operation any of them received (not the gateway's `_service`/`_entities` lookups). */
  received: ReceivedOperation[];
  mutations(field?: string): ReceivedOperation[];
  tokens: TokenCounts;
  close(): Promise<void>;
}

/** Resolvers of one service: its root fields of the contract, its entities and reference fields. */
function resolversOf(name: SubgraphName, data: GatewayData, root: Record<string, (args: Record<string, unknown>) => unknown>): SubgraphResolvers {
  const own = Object.fromEntries(Object.entries(root).filter(([field]) => ROOT_FIELDS[name].includes(field)));
  const byId = <T extends { id: string }>(list: readonly T[], id: unknown): T | null => list.find((item) => item.id === id) ?? null;
  const references = {
    client: (source: Record<string, unknown>) => ({ id: source.clientId }),
    plan: (source: Record<string, unknown>) => ({ id: source.planId }),
  };
  if (name === 'user') return { root: own, entities: { Client: (rep) => byId(data.clients, rep.id) } };
  if (name === 'product') return { root: own, entities: { Plan: (rep) => byId(data.plans, rep.id), PriceTier: (rep) => byId(data.priceTiers, rep.id) } };
  return {
    root: { ...own, paymentConfirmation: ({ checkoutSessionId }) => data.paymentConfirmations.find((c) => c.checkoutSessionId === checkoutSessionId) ?? null },
    entities: { Client: (rep) => ({ id: rep.id }) },
    fields: {
      Client: { planSubscriptions: (client) => data.planSubscriptions.filter((subscription) => subscription.clientId === client.id) },
      PaymentConfirmation: references,
      PlanSubscription: references,
    },
  };
}

/**
 * The user, product and payment services as three Apollo Federation subgraphs (graphql-js over
 * HTTP) on one set of records: composed by the graph registry, they serve every operation of the
 * webhooks service's contract (services/webhooks/contract/gateway.graphql) through a real gateway.
 */
export async function startSubgraphFixtures(options: SubgraphFixturesOptions = {}): Promise<SubgraphFixtures> {
  const data = emptyData();
  let counter = 0;
  const nextId = (kind: string): string => `${kind}-${++counter}`;
  const root = rootValue(data, nextId);
  const { received, record, last } = operationLog(options.keepOperations);
  // Every server answers GET /_operations with the log of all three (make up and make demo read it).
  const operations = (params: URLSearchParams): unknown => operationsView(received, last(), params);
  const tokens: TokenCounts = { accepted: 0, refused: 0, distinct: new Set<string>() };
  const verify =
    options.verifyTokens === false
      ? undefined
      : createTokenVerifier({ keycloakUrl: options.keycloakUrl ?? infra('KEYCLOAK_URL'), realm: infra('KEYCLOAK_REALM'), allowed: new Set([infra('KEYCLOAK_SERVICES_CLIENT_ID')]), tokens });
  const authorize =
    verify === undefined
      ? undefined
      : async (req: Parameters<typeof verify>[0]): Promise<boolean> => {
          const ok = await verify(req);
          if (ok) tokens.accepted += 1;
          else tokens.refused += 1;
          return ok;
        };
  // Where each server listens: its port and the host when given (free ports on loopback by default).
  const address = (name: SubgraphName): { port?: number; host?: string } => ({
    ...(options.ports?.[name] === undefined ? {} : { port: options.ports[name] }),
    ...(options.host === undefined ? {} : { host: options.host }),
  });
  const started: SubgraphServer[] = [];
  try {
    for (const name of SUBGRAPH_NAMES) {
      started.push(await startSubgraphServer({ name, sdl: subgraphSdl(name), resolvers: resolversOf(name, data, root), record, operations, ...(authorize === undefined ? {} : { authorize }), ...address(name) }));
    }
  } catch (err) {
    await Promise.all(started.map((server) => server.close()));
    throw err;
  }
  const [user, product, payment] = started as [SubgraphServer, SubgraphServer, SubgraphServer];
  return {
    servers: { user, product, payment },
    data,
    received,
    mutations: (field) => received.filter((op) => op.type === 'mutation' && (field === undefined || op.fields.includes(field))),
    tokens,
    ...seeding(data, nextId),
    close: async () => {
      await Promise.all(started.map((server) => server.close()));
    },
  };
}

/** The demo data of `make up` (scripts/local-platform.ts): its client, active plan and two subscribers; the client's record. */
export function seedDemoData(target: Seeding): GatewayClient {
  const client = target.addClient({ ...demoData.client });
  target.addPlan({ ...demoData.plan, active: true });
  for (const subscriber of demoData.subscribers) target.addSubscriber(client.id, subscriber.phoneNumber, subscriber.locale);
  return client;
}

/**
 * A fourth service over the same records: ratings of plans, an entity field it adds to the product
 * service's Plan (test/support/subgraphs/review.graphql). Every plan is rated 5. Federated, it
 * shows a subgraph's fields reaching the gateway (the federation test, `make demo`).
 */
export function startReviewSubgraph(data: GatewayData, port?: number): Promise<SubgraphServer> {
  return startSubgraphServer({
    name: 'review',
    sdl: subgraphSdl('review'),
    resolvers: { root: { topRatedPlanIds: () => data.plans.map((plan) => plan.id) }, entities: { Plan: (rep) => ({ id: rep.id, rating: 5 }) } },
    ...(port === undefined ? {} : { port }),
  });
}
