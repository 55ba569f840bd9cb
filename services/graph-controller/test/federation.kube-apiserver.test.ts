import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { adminKubeConfig, ensureNamespace, uniqueName } from '../../../test/support/kube-apiserver.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { eventually, sleep } from '../../../test/support/eventually.js';
import { startHiveGateway, type HiveGateway } from '../../../test/support/hive-gateway.js';
import { startReviewSubgraph, startSubgraphFixtures, SUBGRAPH_NAMES, subgraphSdl, type SubgraphFixtures } from '../../../test/support/subgraph-fixtures.js';
import type { SubgraphServer } from '../../../test/support/subgraph-server.js';
import { startController, type RunningController } from './support/controller-fixture.js';
import { controllerKubeConfig, resetControllerState, serviceBody } from './support/real-cluster.js';
import { startRegistryServer, type RegistryServer } from './support/registry-server.js';

/**
 * Federation end to end, with nothing written here on the path of a query: Services annotated
 * `graph-registry.io/federation: "true"` on the real kube-apiserver → the controller reads each
 * subgraph's SDL and publishes it → the registry composes the supergraph (Redis) → Hive Gateway
 * 2.15.1 (a process, its `hive` supergraph source polling the registry's CDN paths) → the three
 * subgraph fixtures of the specification's user, product and payment services. The subgraphs run
 * on loopback ports, so each Service registers its URL through `graph-registry.io/url`.
 */

const API_KEY = 'controller-key-0123456789';
const CDN_KEY = 'gateway-cdn-key-0123456789';
/** Hive Gateway's polling interval: its shortest (it refuses less than 10 s). */
const GATEWAY_POLL_MS = 10_000;
/** The controller's re-read of federated Services' schemas (Controller__SubgraphPollSeconds; 60 s by default). */
const POLL_MS = 1000;
/** The bound: a change reaches the gateway within its poll interval plus 5 s (plus the controller's poll, for a schema change it has to notice). */
const WITHIN_MS = GATEWAY_POLL_MS + 5000 + POLL_MS;

/** Every subgraph, the spanning query and what it answers. */
const SPANNING = '{ clientByNumber(number: 7) { name planSubscriptions { checkoutSessionId plan { name active } } } }';
const SPANNING_ANSWER = { clientByNumber: { name: 'Bakery', planSubscriptions: [{ checkoutSessionId: 'cs_test_span', plan: { name: 'Gold', active: true } }] } };
const RATED = '{ planByProviderProductId(providerProductId: "prod_gold") { name rating } }';

let redis: PrivateRedis;
let registry: RegistryServer;
let admin: KubeConfig;
let core: CoreV1Api;
let namespace: string;
let fixtures: SubgraphFixtures;
let review: SubgraphServer;
let gateway: HiveGateway;
let controller: RunningController;

const service = (name: string, url: string) =>
  core.createNamespacedService({ namespace, body: serviceBody(`${name}-graphql`, { 'graph-registry.io/name': name, 'graph-registry.io/url': url, 'graph-registry.io/federation': 'true' }) });
const refusals = async (): Promise<CoreV1Event[]> => (await core.listNamespacedEvent({ namespace })).items.filter((event) => event.reason === 'SubgraphSchemaRefused');
const answers = async (query: string, expected: unknown, timeoutMs = WITHIN_MS): Promise<void> => {
  await eventually(async () => JSON.stringify((await gateway.query(query).catch(() => undefined))?.body.data) === JSON.stringify(expected), timeoutMs, `the gateway answering ${query}`);
};

beforeAll(async () => {
  redis = await startPrivateRedis();
  registry = await startRegistryServer(redis.url, [API_KEY], { cdn: { keys: [CDN_KEY], target: 'default' } });
  admin = adminKubeConfig();
  core = admin.makeApiClient(CoreV1Api);
  namespace = uniqueName('fed');
  await ensureNamespace(admin, namespace);
  fixtures = await startSubgraphFixtures({ verifyTokens: false });
  const client = fixtures.addClient({ number: 7, name: 'Bakery' });
  const plan = fixtures.addPlan({ name: 'Gold', providerProductId: 'prod_gold' });
  fixtures.data.planSubscriptions.push({ id: 'ps-span', clientId: client.id, planId: plan.id, checkoutSessionId: 'cs_test_span', providerSubscriptionId: null });
  // A fourth service: ratings of plans, an entity field on the product service's Plan.
  review = await startReviewSubgraph(fixtures.data);
  controller = startController({ kubeConfig: await controllerKubeConfig(admin), registryUrl: registry.url, apiKey: API_KEY, namespaces: [namespace], subgraphs: { pollMs: POLL_MS, timeoutMs: 2000, maxBytes: 1024 * 1024 } });
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await gateway?.stop();
  await review?.close();
  await fixtures?.close();
  await resetControllerState(admin);
  await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  await registry?.close();
  await redis?.stop();
});

describe('Hive Gateway on the supergraph the controller and the registry make', () => {
  it('should answer a query spanning the three annotated subgraphs', async () => {
    for (const name of SUBGRAPH_NAMES) await service(name, fixtures.servers[name].url);
    const composed = async (): Promise<boolean> => {
      const res = await fetch(`${registry.url}/supergraph/versions?limit=1`, { headers: { 'x-api-key': API_KEY } });
      const body = (await res.json()) as { versions?: Array<{ subgraphs: unknown[] }> };
      return body.versions?.[0]?.subgraphs.length === 3;
    };
    await eventually(composed, 15_000, 'a supergraph of the three subgraphs');
    // Hive Gateway exits when its CDN has no supergraph yet (404), as it does against Hive's own
    // CDN: in a cluster it is restarted until there is one. So it starts once there is.
    gateway = await startHiveGateway({ registryUrl: registry.url, cdnKey: CDN_KEY, pollingMs: GATEWAY_POLL_MS });
    await answers(SPANNING, SPANNING_ANSWER, 5000);
  }, 90_000);

  it("should serve a fourth annotated Service's fields without a restart, and drop them when its Service is deleted", async () => {
    await service('review', review.url);
    await answers(RATED, { planByProviderProductId: { name: 'Gold', rating: 5 } });
    await core.deleteNamespacedService({ name: 'review-graphql', namespace });
    await eventually(async () => (await gateway.query(RATED)).body.errors?.some((error) => error.message.includes('rating')), WITHIN_MS, 'rating gone from the gateway');
    await answers(SPANNING, SPANNING_ANSWER, 1000);
  }, 60_000);

  it('should refuse a subgraph schema that breaks composition with a Warning Event naming the errors, while the gateway keeps serving', async () => {
    const before = (await fetch(`${registry.url}/supergraph/versions?limit=1`, { headers: { 'x-api-key': API_KEY } }).then((res) => res.json())) as { versions: Array<{ version: number }> };
    // The product service deploys a Plan keyed by a field it does not have.
    fixtures.servers.product.setSdl(subgraphSdl('product').replace('type Plan @key(fields: "id")', 'type Plan @key(fields: "sku")'));
    const [warning] = await eventually(async () => ((await refusals()).length > 0 ? refusals() : undefined), WITHIN_MS, 'a SubgraphSchemaRefused Event');
    expect(warning).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Service', name: 'product-graphql' }, message: expect.stringContaining('KEY_INVALID_FIELDS') });
    expect(await controller.metric('graph_controller_subgraphs_refused')).toBe(1);
    await sleep(3 * POLL_MS); // polls that read the same refused schema again report nothing new
    expect(await refusals()).toHaveLength(1);
    const after = (await fetch(`${registry.url}/supergraph/versions?limit=1`, { headers: { 'x-api-key': API_KEY } }).then((res) => res.json())) as { versions: Array<{ version: number }> };
    expect(after.versions[0]!.version).toBe(before.versions[0]!.version);
    await answers(SPANNING, SPANNING_ANSWER, 1000);
    // A conflicting field type: the payment service declares Client.number as a String.
    fixtures.servers.product.setSdl(subgraphSdl('product'));
    fixtures.servers.payment.setSdl(subgraphSdl('payment').replace('planSubscriptions: [PlanSubscription!]!', 'planSubscriptions: [PlanSubscription!]!\n  number: String'));
    await eventually(async () => (await refusals()).some((event) => event.message?.includes('FIELD_TYPE_MISMATCH')), WITHIN_MS, 'a refusal naming FIELD_TYPE_MISMATCH');
    await answers(SPANNING, SPANNING_ANSWER, 1000);
    fixtures.servers.payment.setSdl(subgraphSdl('payment'));
    await eventually(async () => (await controller.metric('graph_controller_subgraphs_refused')) === 0, WITHIN_MS, 'no refused subgraph left');
  }, 60_000);

  it('should keep serving while the registry is down and take the next change after it is back', async () => {
    await registry.stop();
    await sleep(GATEWAY_POLL_MS + 1000); // a poll failed
    await answers(SPANNING, SPANNING_ANSWER, 1000);
    await registry.start();
    await service('review', review.url);
    await answers(RATED, { planByProviderProductId: { name: 'Gold', rating: 5 } });
  }, 60_000);
});
