// The charts on a real single-node cluster (test/infra/cluster.sh): the images built from the one
// Dockerfile, `helm install` of the umbrella chart into a namespace that enforces Pod Security
// `restricted`, the services reached through `kubectl port-forward` as docs/deployment.md tells
// users to debug (an OTP login against auth in Production, whose Keycloak speaks https with a
// certificate of the suite's own CA, a registry lookup, a signed Stripe event and an SMS command), the
// forward-auth through a Pod of Debian's nginx running docs/forward-auth/nginx.conf in front of auth
// and an application, the in-cluster graph controller registering annotated Services, federation
// through the chart's Hive Gateway (an image built from gateway/) to the subgraph fixtures' Pod whose
// annotated Services the controller publishes — the webhooks' GraphQL calls among them —, the
// chart's NetworkPolicies enforced
// (kube-network-policies, test/infra/cluster.sh), `helm upgrade` and `helm uninstall`; and the
// machine put back as it was, after the suite and after an `up` interrupted with Ctrl-C.
// One cluster runs per machine, so this one file does it all in order.
import { spawn } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request } from 'undici';
import { demoData, localSecrets } from '../../scripts/local-platform.js';
import { generateSelfSignedCertificate } from '../../services/auth/src/tls.js';
import { deleteUsersNamed } from '../../services/auth/test/support/keycloak.js';
import { runJourney, stepRecord, SMS_WEBHOOK_PATH, PAYMENT_WEBHOOK_PATH, type JourneyPlan, type JourneyRecord } from '../e2e/journey.js';
import { http } from '../e2e/journey-support.js';
import { gatewayQuery, stopSubgraphsPod, subgraphOperations, type GatewayTarget } from './support/subgraphs.js';
import { eventually, sleep } from '../support/eventually.js';
import { API, BROWSER, forged, identityAt, PAGE_PATH } from '../forward-auth/client-requests.js';
import type { SeenRequest } from '../forward-auth/demo-upstream.js';
import { gatewayContractSdl } from '../support/graphql-gateway.js';
import { infra } from '../support/infra.js';
import { clusterScript, clusterSh, grpcHealth, machineState, type PortForward } from './support/cluster.js';
import { PROXY, PROXY_LABELS, PROXY_PORT, startForwardAuthProxy, stopForwardAuthProxy } from './support/forward-auth-proxy.js';
import {
  ALLOWED_REDIRECT,
  CACHE_CLIENT,
  COMPONENTS,
  enterClusterTier,
  leaveClusterTier,
  chartTestsNotPassed,
  GATEWAY,
  imageTag,
  ready,
  RELEASE,
  SCRAPER,
  startClusterPlatform,
  supportScript,
  TIER_TIMEOUT_MS,
  type ClusterPlatform,
  type ClusterTier,
  type Pod,
  type ProbeCounts,
} from './support/platform.js';

const namespace = `sp-e2e-${randomUUID().slice(0, 8)}`;
const run = randomUUID().slice(0, 8);
const plan: JourneyPlan = {
  // A fresh valid German mobile number (libphonenumber refuses the 555 numbers), so runs never meet.
  phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
  graph: { name: `cluster-journey-${run}`, url: 'http://graphql.sp-e2e.test/graphql', schema: `# registered through kubectl port-forward ${run}\n${gatewayContractSdl}` },
  client: demoData.client,
  subscribers: demoData.subscribers,
  announcement: `Demo Fitness: the cluster run ${run} moves yoga to 7 pm`,
};

let platform: ClusterPlatform | undefined;
let tier: ClusterTier | undefined;
let scratch: string;
const cluster = (): ClusterPlatform['cluster'] => platform!.cluster;
const deps = (): ClusterPlatform['deps'] => platform!.deps;
const helm = (args: readonly string[]): Promise<string> => platform!.helm(args);
const pods = (): ReturnType<ClusterPlatform['pods']> => platform!.pods();
const registryGraphs = (): Promise<Record<string, string>> => platform!.registryGraphs();

/**
 * The suite's values: auth behind the forward-auth proxy, under /sso/ of the application's host
 * (docs/forward-auth.md), trusting the proxy's forwarding headers and letting the proxy's Pod in.
 */
const values = (): string =>
  platform!.values({
    auth: { publicBaseUrl: `${ALLOWED_REDIRECT}/sso`, trustProxy: true, networkPolicy: { extraIngressFrom: [{ podSelector: { matchLabels: PROXY_LABELS } }] } },
  });

/** The gateway's Service, and the Keycloak whose tokens the subgraphs accept. */
const gatewayTarget = (): GatewayTarget => ({ namespace, service: `${RELEASE}-${GATEWAY}`, keycloakUrl: deps().keycloakUrl });

/** A confirmation as the gateway composes it from the three subgraphs: payment's record, user's client, payment's subscriptions of it, product's plans. */
const CONFIRMATION = `query ($checkoutSessionId: String!) {
  paymentConfirmation(checkoutSessionId: $checkoutSessionId) { id clientId amount plan { name } client { name planSubscriptions { checkoutSessionId plan { name } } } }
}`;

/** The cache's gRPC health check through `kubectl port-forward svc/<release>-cache`, as a user debugging it runs it. */
async function expectCacheServingThroughForward(): Promise<void> {
  const forward = await cluster().portForward(namespace, `svc/${RELEASE}-cache`, 7777);
  try {
    expect(await grpcHealth(`127.0.0.1:${forward.port}`)).toBe('SERVING');
  } finally {
    await forward.close();
  }
}

const PROBE = 'health-probe';
/** A client of the cache inside the cluster: grpc-health-probe.cjs checking ADDRESS by its Service name. */
async function startHealthProbe(address: string): Promise<void> {
  await platform!.startScriptPod(PROBE, CACHE_CLIENT, 'grpc-health-probe.cjs', [], { ADDRESS: address });
}

/** host:port → "connected", "timeout" (a policy dropped the SYN) or an error code, as tcp-probe.cjs prints it. */
type Reach = Record<string, string>;

/** What a new pod with these labels reaches of the targets (tcp-probe.cjs in a pod of its own). */
async function reachFromPod(name: string, labels: Record<string, string>, targets: readonly string[]): Promise<Reach> {
  await platform!.startScriptPod(name, labels, 'tcp-probe.cjs', [JSON.stringify(targets)]);
  try {
    await cluster().kubectl(['-n', namespace, 'wait', `pod/${name}`, '--for=jsonpath={.status.phase}=Succeeded', '--timeout=120s']);
    return JSON.parse(await cluster().kubectl(['-n', namespace, 'logs', name])) as Reach;
  } finally {
    await cluster().kubectl(['-n', namespace, 'delete', 'pod', name, '--ignore-not-found', '--wait']);
  }
}

/** What a component's own pod reaches of the targets (tcp-probe.cjs through kubectl exec). */
async function reachFromComponent(component: string, targets: readonly string[]): Promise<Reach> {
  const output = await cluster().kubectl(['-n', namespace, 'exec', `deploy/${RELEASE}-${component}`, '--', 'node', '-e', supportScript('tcp-probe.cjs'), JSON.stringify(targets)]);
  return JSON.parse(output) as Reach;
}

const outcomes = (targets: readonly string[], outcome: string): Reach => Object.fromEntries(targets.map((target) => [target, outcome]));

/** The probe's counts so far (its last line of output; none before it has started). */
async function probeCounts(): Promise<ProbeCounts> {
  return platform!.probeCounts(PROBE);
}

/** Retries a check of expectations once a second (each try may start a port-forward) until it passes. */
async function settles(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  await eventually(
    async () => {
      try {
        await check();
        return true;
      } catch (error) {
        await sleep(1000);
        throw error;
      }
    },
    timeoutMs,
  );
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sp-cluster-'));
  tier = await enterClusterTier();
}, TIER_TIMEOUT_MS);

afterAll(async () => {
  // Whatever happened above, nothing of the cluster stays running.
  await deleteUsersNamed([plan.phoneNumber]).catch(() => undefined);
  await leaveClusterTier(platform, tier, scratch);
}, 120_000);

describe('an `up` interrupted with Ctrl-C', () => {
  it('should stop, and leave sysctls, iptables rules, mounts, network namespaces and the bridge as they were', async () => {
    // Its own process group, as a terminal's foreground job: Ctrl-C signals the whole group.
    const child = spawn('bash', [clusterScript, 'up'], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Once the control plane runs, the bridge, the iptables chains and the sysctls have changed.
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('stage control plane')) resolve();
      });
      void exited.then(() => reject(new Error(`cluster.sh up ended before the control plane ran: ${stderr}`)));
    });
    expect(await machineState()).not.toEqual(tier!.before);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('up interrupted or failed: restoring the machine');
    expect(await machineState()).toEqual(tier!.before);
  }, 600_000);
});

describe('the umbrella chart on the cluster', () => {
  beforeAll(async () => {
    // The subgraph fixtures' Pod starts with the platform: Hive Gateway exits (and restarts) until the controller has published them.
    platform = await startClusterPlatform(scratch, namespace, 'federation');
    await helm(['install', RELEASE, platform.charts.umbrella, '-n', namespace, '-f', values(), '--wait', '--timeout', '300s']);
  }, 900_000);

  it('should refuse a second cluster on the same machine, naming the one that runs', async () => {
    const second = await clusterSh(['up']);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/another cluster runs on this machine/);
    expect(await cluster().kubectl(['get', 'node', '-o', 'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}'])).toBe('True');
  }, 120_000);

  it('should run every component Ready under Pod Security restricted, from the images built here', async () => {
    const running = (await pods()).filter((pod) => pod.metadata.labels?.['app.kubernetes.io/instance'] === RELEASE);
    const names = new Set(running.map((pod) => pod.metadata.labels?.['app.kubernetes.io/name']));
    expect([...names].sort()).toEqual([...COMPONENTS, GATEWAY].sort());
    for (const pod of running) {
      expect({ pod: pod.metadata.name, ready: ready(pod) }).toEqual({ pod: pod.metadata.name, ready: true });
      const component = pod.metadata.labels!['app.kubernetes.io/name']!;
      expect(pod.spec.containers[0]!.image).toBe(`localhost/subscription-platform/${component}:${imageTag(component)}`);
    }
    const label = await cluster().kubectl(['get', 'namespace', namespace, '-o', 'jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}']);
    expect(label).toBe('restricted');
  });

  it('should pass its chart tests (helm test): every component ready and answering one real request through its Service', async () => {
    const output = await platform!.helmTest();
    expect(chartTestsNotPassed(output)).toEqual([]);
    // A passing test Pod is deleted (helm.sh/hook-delete-policy hook-succeeded): nothing stays for helm uninstall to leave behind.
    expect((await pods()).filter((pod) => pod.metadata.name.endsWith('-test'))).toEqual([]);
  }, 300_000);

  it('should refuse a pod without the restricted securityContext in that namespace: the policy is enforced, not just labelled', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'unrestricted', namespace }, spec: { containers: [{ name: 'c', image: 'localhost/pause:static-1' }] } };
    await expect(cluster().kubectl(['apply', '-f', '-'], JSON.stringify(pod))).rejects.toThrow(/violates PodSecurity "restricted:latest"/);
  });

  it('should answer the gRPC health check of the cache through kubectl port-forward', async () => {
    await expectCacheServingThroughForward();
  }, 60_000);

  it('should register and look up a graph in the registry through kubectl port-forward, refusing a wrong key', async () => {
    const forward = await cluster().portForward(namespace, `svc/${RELEASE}-graph-registry`, 5145);
    try {
      const base = `http://127.0.0.1:${forward.port}`;
      const name = `e2e-${randomUUID().slice(0, 8)}`;
      const put = await fetch(`${base}/${name}`, { method: 'POST', headers: { 'x-api-key': platform!.secrets.registryApiKey, 'content-type': 'text/plain' }, body: 'http://example.test/graphql' });
      expect(put.status).toBe(204);
      const got = await fetch(`${base}/${name}`, { headers: { 'x-api-key': platform!.secrets.registryApiKey } });
      expect(got.status).toBe(200);
      expect(await got.text()).toContain('http://example.test/graphql');
      expect((await fetch(`${base}/${name}`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    } finally {
      await forward.close();
    }
  }, 60_000);

  describe("federation through the chart's Hive Gateway", () => {
    it('should have the controller publish the annotated subgraph Services, and the gateway answer a query that spans the user, payment and product subgraphs', async () => {
      await settles(async () => {
        const graphs = await registryGraphs();
        for (const name of ['user', 'product', 'payment']) expect(graphs[name]).toMatch(new RegExp(`^http://${name}-graphql\\.${namespace}\\..*:400[1-3]/graphql$`));
      }, 90_000);
      // Within the gateway's poll interval once all three are composed: the client (user), its subscriptions (payment), a plan (product).
      const query = `{ clientByPhoneNumber(phoneNumber: "${demoData.client.phoneNumber}") { name planSubscriptions { id } } planByProviderProductId(providerProductId: "${demoData.plan.providerProductId}") { name } }`;
      await settles(async () => {
        const answer = await gatewayQuery(cluster(), gatewayTarget(), query);
        expect(answer.body).toEqual({ data: { clientByPhoneNumber: { name: demoData.client.name, planSubscriptions: [] }, planByProviderProductId: { name: demoData.plan.name } } });
      }, 60_000);
    }, 240_000);
  });

  describe('a user journey through kubectl port-forward', () => {
    let record: JourneyRecord;
    let webhooksAddress: string;

    beforeAll(async () => {
      const targets = await platform!.journeyTargets();
      webhooksAddress = new URL(targets.webhooks.url).host;
      record = await runJourney(targets, plan);
    }, 180_000);

    afterAll(async () => {
      await platform!.closeForwards();
    });

    it('should run auth in Production against the https Keycloak', async () => {
      const config = await cluster().json<{ data: Record<string, string> }>(['-n', namespace, 'get', 'configmap', `${RELEASE}-auth`]);
      expect(config.data).toMatchObject({ ASPNETCORE_ENVIRONMENT: 'Production', Oidc__ServerUrl: deps().keycloakHttps.url });
    });

    it('should complete every step, or name the pods whose logs tell why', async () => {
      const failures = record.failures.map(({ step, title, error }) => `${step}. ${title}: ${error.message}`);
      if (failures.length > 0) {
        for (const component of ['auth', 'webhooks', GATEWAY]) {
          failures.push(`${component}: ${await cluster().kubectl(['-n', namespace, 'logs', `deploy/${RELEASE}-${component}`, '--tail', '15']).catch((error: Error) => error.message)}`);
        }
      }
      expect(failures).toEqual([]);
    });

    it('should log in with the code of the SMS event, set the TokenId cookie and provision the Keycloak user', () => {
      const login = stepRecord(record, 'login');
      expect(JSON.parse(login.otp.text)).toEqual({}); // the code travels only in the event
      expect(login.smsEvent.value).toEqual({ phoneNumber: plan.phoneNumber, resourceKey: 'Otp.LoginCode', code: login.code, locale: 'en' });
      expect(login.cookie.name).toBe('TokenId');
      expect(login.cookie.attributes).toMatchObject({ httponly: true, secure: true });
      expect(login.keycloakUser!.groups).toEqual(['clients']);
      expect(login.loggedInEvent.value).toEqual({ phoneNumber: plan.phoneNumber, locale: 'en', userId: login.keycloakUser!.id, method: 'otp', role: 'client' });
      expect(stepRecord(record, 'forwardAuth').answer.status).toBe(200);
    });

    it('should keep the graph and schema registered through the forward', () => {
      const registry = stepRecord(record, 'registry');
      expect(registry.graphs[plan.graph.name]).toBe(plan.graph.url);
      expect(registry.schema).toBe(plan.graph.schema);
    });

    it("should take a signed Stripe event: one PaymentConfirmation and one PlanSubscription through the chart's Hive Gateway to the subgraph Pod, PaymentConfirmedEvent on Kafka", async () => {
      const payment = stepRecord(record, 'payment');
      expect((await subgraphOperations(cluster(), namespace, 'mutation')).map((operation) => operation.fields)).toEqual([['createPaymentConfirmation'], ['createPlanSubscription']]);
      // What the subgraphs keep, read back through the gateway: payment's confirmation, user's client, payment's subscriptions, product's plans.
      const answer = await gatewayQuery(cluster(), gatewayTarget(), CONFIRMATION, { checkoutSessionId: payment.checkoutSessionId });
      expect(answer.body.errors).toBeUndefined();
      const confirmation = answer.body.data!.paymentConfirmation as { id: string };
      const plan = { name: demoData.plan.name };
      expect(confirmation).toEqual({ id: expect.any(String), clientId: platform!.subgraphs!.client.id, amount: 1000, plan, client: { name: demoData.client.name, planSubscriptions: [{ checkoutSessionId: payment.checkoutSessionId, plan }] } });
      expect(payment.paymentConfirmedEvent.value).toMatchObject({ checkoutSessionId: payment.checkoutSessionId, clientId: platform!.subgraphs!.client.id, paymentConfirmationId: confirmation.id });
    }, 60_000);

    it('should refuse, through the same forward, a Stripe event signed with another secret and an SMS signed with another token', async () => {
      const webhooks = `http://${webhooksAddress}`;
      const query = `?code=${encodeURIComponent(platform!.secrets.webhooksApiKey)}`;
      const forged = await http(`${webhooks}${PAYMENT_WEBHOOK_PATH}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${randomBytes(32).toString('hex')}` },
        body: JSON.stringify({ id: `evt_${run}`, object: 'event', type: 'checkout.session.completed', data: { object: {} } }),
      });
      expect(forged.status).toBe(400);
      const sms = await http(`${webhooks}${SMS_WEBHOOK_PATH}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': randomBytes(20).toString('base64') },
        body: new URLSearchParams({ From: demoData.client.phoneNumber, Body: 'CONFIRM', AccountSid: localSecrets.twilioAccountSid, MessageSid: `SM${run}` }).toString(),
      });
      expect(sms.status).toBe(403);
      expect(await subgraphOperations(cluster(), namespace, 'mutation')).toHaveLength(2);
    }, 60_000);

    it('should run the SMS announcement command: drafted, confirmed and sent to both subscribers in their locales', () => {
      const announcement = stepRecord(record, 'announcement');
      expect(announcement.draftReply).toMatch(/Text CONFIRM to send it/);
      expect(announcement.confirmReply).toBe('Your announcement was sent to 2 subscribers.');
      expect(announcement.notifications.map((event) => [event.key, event.value.locale]).sort()).toEqual(demoData.subscribers.map(({ phoneNumber, locale }) => [phoneNumber, locale]));
    });

    describe('and through the nginx Pod of docs/forward-auth/nginx.conf, by kubectl port-forward to it', () => {
      const UPSTREAM = 'forward-auth-upstream';
      const appHost = new URL(ALLOWED_REDIRECT).host;
      const page = `${ALLOWED_REDIRECT}${PAGE_PATH}`;
      const signIn = (rd: string): string => `${ALLOWED_REDIRECT}/sso/signin?rd=${encodeURIComponent(rd)}`;
      let proxy: PortForward;
      let dispatcher: Agent;

      /** A request to the proxy for the application's host (the Host a browser sends; X-Original-URL is made of it), its status and Location. */
      const send = async (path: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; location: string | null }> => {
        const answer = await request(`https://127.0.0.1:${proxy.port}${path}`, { method, headers: { ...headers, host: appHost }, dispatcher });
        await answer.body.dump();
        const location = answer.headers.location;
        return { status: answer.statusCode, location: typeof location === 'string' ? location : null };
      };
      /** Every request that reached the application, oldest first (one line of its log each). */
      const reached = async (): Promise<SeenRequest[]> =>
        (await cluster().kubectl(['-n', namespace, 'logs', UPSTREAM]))
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as SeenRequest);
      /** The requests that reached the application after the first `before`, once `count` have. */
      const reachedSince = async (before: number, count: number): Promise<SeenRequest[]> => {
        let since: SeenRequest[] = [];
        await settles(async () => {
          since = (await reached()).slice(before);
          expect(since.length).toBeGreaterThanOrEqual(count);
        }, 30_000);
        return since;
      };
      /** Nothing but the public sign-in page, asked for last, reached the application since `before`: the requests before it stopped at the proxy. */
      const expectNothingReachedSince = async (before: number): Promise<void> => {
        expect(await send('/sign-in', API)).toEqual({ status: 200, location: null });
        expect((await reachedSince(before, 1)).map(({ url }) => url)).toEqual(['/sign-in']);
      };

      beforeAll(async () => {
        const { cert, key } = await generateSelfSignedCertificate([appHost]);
        dispatcher = new Agent({ connect: { ca: cert } });
        await platform!.startScriptPod(UPSTREAM, {}, 'echo-upstream.cjs', []);
        await cluster().kubectl(['-n', namespace, 'wait', `pod/${UPSTREAM}`, '--for=condition=Ready', '--timeout=120s']);
        const upstream = await cluster().json<Pod>(['-n', namespace, 'get', 'pod', UPSTREAM]);
        await startForwardAuthProxy(cluster(), {
          namespace,
          image: `localhost/subscription-platform/nginx:${imageTag('nginx')}`,
          authHost: platform!.authHost,
          authPort: 5555,
          upstream: `${upstream.status.podIP}:8080`,
          tls: { cert, key, authCa: platform!.authCa },
        });
        proxy = await cluster().portForward(namespace, `pod/${PROXY}`, PROXY_PORT);
        // The application's own sign-in page passes the proxy without a session: once it answers, both are up.
        await settles(async () => void expect((await send('/sign-in', API)).status).toBe(200), 60_000);
      }, 300_000);

      afterAll(async () => {
        await proxy?.close();
        await dispatcher?.close();
        await stopForwardAuthProxy(cluster(), namespace);
        await cluster().kubectl(['-n', namespace, 'delete', 'pod', UPSTREAM, '--ignore-not-found', '--wait']);
      }, 120_000);

      it('should answer an API client without a session with 401, whatever identity or forwarding headers it forges, and send nothing to the application', async () => {
        const before = (await reached()).length;
        for (const headers of [API, { accept: '*/*' }, { ...API, ...forged(page), authorization: 'Bearer forged' }]) {
          expect(await send(PAGE_PATH, headers)).toEqual({ status: 401, location: null });
        }
        await expectNothingReachedSince(before);
      }, 60_000);

      it('should send a browser without a session to /sso/signin?rd=<page> and on to Keycloak with …/sso/redirect, never to a foreign page', async () => {
        const before = (await reached()).length;
        for (const headers of [BROWSER, { ...BROWSER, ...forged(page) }]) {
          expect(await send(PAGE_PATH, headers)).toEqual({ status: 302, location: signIn(page) });
        }
        await expectNothingReachedSince(before);
        const signin = await send(`/sso/signin?rd=${encodeURIComponent(page)}`, BROWSER);
        expect(signin.status).toBe(302);
        const keycloak = new URL(signin.location!);
        expect(`${keycloak.origin}${keycloak.pathname}`).toBe(`${deps().keycloakHttps.url}/realms/${infra('KEYCLOAK_REALM')}/protocol/openid-connect/auth`);
        expect(keycloak.searchParams.get('client_id')).toBe('platform-auth');
        expect(keycloak.searchParams.get('redirect_uri')).toBe(`${ALLOWED_REDIRECT}/sso/redirect`);
        expect(await send(`/sso/signin?rd=${encodeURIComponent('https://evil.example/')}`, BROWSER)).toEqual({ status: 400, location: null });
      }, 60_000);

      it("should hand the application the journey's session: its identity headers and a Bearer token, whatever the client forged", async () => {
        const login = stepRecord(record, 'login');
        const cookie = `TokenId=${login.cookie.value}`;
        const before = (await reached()).length;
        expect(await send(PAGE_PATH, { ...API, ...forged(page), cookie, authorization: 'Bearer forged' })).toEqual({ status: 200, location: null });
        const [seen, ...more] = await reachedSince(before, 1);
        expect(more).toEqual([]);
        expect(seen!.url).toBe(PAGE_PATH);
        expect(identityAt(seen)).toEqual({ user: login.keycloakUser!.id, phone: plan.phoneNumber, groups: 'clients', role: 'client', bearer: true, underscored: [] });
        // Headers that rewrite the path in some frameworks: a client's never reach the application.
        expect([seen!.headers['x-original-url'], seen!.headers['x-rewrite-url']]).toEqual([undefined, undefined]);
        // With the session, the sign-in entry sends the browser straight back to the page.
        expect(await send(`/sso/signin?rd=${encodeURIComponent(page)}`, { ...BROWSER, cookie })).toEqual({ status: 302, location: page });
      }, 60_000);

      it('should refuse that session through the proxy at once once it logged out through the proxy', async () => {
        const cookie = `TokenId=${stepRecord(record, 'login').cookie.value}`;
        expect((await send('/sso/logout', { cookie }, 'POST')).status).toBe(204);
        const before = (await reached()).length;
        for (let i = 0; i < 3; i++) expect(await send(PAGE_PATH, { ...API, cookie })).toEqual({ status: 401, location: null });
        expect(await send(PAGE_PATH, { ...BROWSER, cookie })).toEqual({ status: 302, location: signIn(page) });
        await expectNothingReachedSince(before);
      }, 60_000);
    });
  });

  describe('the NetworkPolicies, enforced', () => {
    it('should let only the labelled pods in: the cache to its clients, every management port to the scraper, the registry to neither', async () => {
      const services = (await pods()).filter((pod) => (COMPONENTS as readonly string[]).includes(pod.metadata.labels?.['app.kubernetes.io/name'] ?? ''));
      const management = services.map((pod) => `${pod.status.podIP}:${pod.spec.containers[0]!.ports!.find((port) => port.name === 'management')!.containerPort}`);
      expect(management).toHaveLength(COMPONENTS.length);
      const cache = `${RELEASE}-cache:7777`;
      const registry = `${RELEASE}-graph-registry:5145`;
      const targets = [cache, registry, ...management];
      const [outsider, insider] = await Promise.all([reachFromPod('outsider', {}, targets), reachFromPod('insider', { ...SCRAPER, ...CACHE_CLIENT }, targets)]);
      expect(outsider).toEqual(outcomes(targets, 'timeout'));
      expect(insider).toEqual({ ...outcomes([cache, ...management], 'connected'), [registry]: 'timeout' });
    }, 300_000);

    it("should keep auth's egress to the destinations listed for it: Kafka, the https Keycloak and the cache, not the plain-http Keycloak, Redis, the APIs or the registry", async () => {
      const { ports } = deps();
      const atNode = (port: number): string => `${infra('CLUSTER_NODE_IP')}:${port}`;
      const listed = [atNode(ports.kafka), atNode(ports.keycloakHttps), `${RELEASE}-cache:7777`];
      const unlisted = [atNode(ports.keycloak), atNode(ports.redis), ...ports.apis.map(atNode), `${RELEASE}-graph-registry:5145`];
      expect(await reachFromComponent('auth', [...listed, ...unlisted])).toEqual({ ...outcomes(listed, 'connected'), ...outcomes(unlisted, 'timeout') });
    }, 120_000);
  });

  it("should have the in-cluster graph controller register the registry's own annotated Service", async () => {
    await settles(async () => void expect(Object.keys(await registryGraphs())).toContain('graph-registry'), 60_000);
  }, 90_000);

  it('should register an annotated example Service, and remove the registration when the Service is deleted', async () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'example-graph', namespace, annotations: { 'graph-registry.io/name': 'example-graph', 'graph-registry.io/port': '4000' } },
      spec: { selector: { app: 'example-graph' }, ports: [{ name: 'http', port: 4000 }] },
    };
    await cluster().kubectl(['apply', '-f', '-'], JSON.stringify(service));
    try {
      await settles(async () => void expect((await registryGraphs())['example-graph']).toMatch(/^http:\/\/example-graph\..*:4000\/graphql$/), 60_000);
    } finally {
      await cluster().kubectl(['-n', namespace, 'delete', 'service', 'example-graph', '--ignore-not-found']);
    }
    await settles(async () => void expect(Object.keys(await registryGraphs())).not.toContain('example-graph'), 60_000);
  }, 180_000);

  it('should roll the pods on a helm upgrade with a changed value and keep serving, not one check of a client in the cluster failing', async () => {
    const cacheBefore = (await pods()).filter((pod) => pod.metadata.labels?.['app.kubernetes.io/name'] === 'cache').map((pod) => pod.metadata.name);
    await startHealthProbe(`${RELEASE}-cache:7777`);
    try {
      await settles(async () => void expect((await probeCounts()).ok).toBeGreaterThan(0), 60_000);
      await helm(['upgrade', RELEASE, platform!.charts.umbrella, '-n', namespace, '-f', values(), '--set', 'cache.logLevel=debug', '--wait', '--timeout', '180s']);
      await settles(async () => {
        const cacheAfter = (await pods()).filter((pod) => pod.metadata.labels?.['app.kubernetes.io/name'] === 'cache');
        expect(cacheAfter.map((pod) => pod.metadata.name).some((name) => cacheBefore.includes(name))).toBe(false);
        expect(cacheAfter.every(ready)).toBe(true);
      }, 120_000);
      // Past the old pod's preStop pause and termination: the checks from then on reach the new pod only.
      const rolled = (await probeCounts()).ok;
      await settles(async () => void expect((await probeCounts()).ok).toBeGreaterThan(rolled + 20), 60_000);
      expect((await probeCounts()).failed).toEqual([]);
    } finally {
      await cluster().kubectl(['-n', namespace, 'delete', 'pod', PROBE, '--ignore-not-found', '--wait']);
    }
    await expectCacheServingThroughForward();
  }, 300_000);

  it("should leave nothing of the release after helm uninstall but the user's Secrets and the controller's records the docs name", async () => {
    // The suite's own subgraph fixtures go first: what stays is the release's.
    await stopSubgraphsPod(cluster(), namespace);
    await helm(['uninstall', RELEASE, '-n', namespace, '--wait', '--timeout', '120s']);
    await settles(async () => void expect(await pods()).toEqual([]), 60_000);
    const left = await cluster().kubectl(['-n', namespace, 'get', 'all,configmap,secret,serviceaccount,role,rolebinding,lease,networkpolicy,poddisruptionbudget', '-o', 'name']);
    // kube-root-ca.crt and the default ServiceAccount belong to the namespace; the Lease and the
    // ownership records (up to 64 shards `<lease>-owners-NN`) are the graph controller's own
    // (docs/deployment.md, "Try it on a local cluster").
    const records = `configmap/${RELEASE}-graph-controller-owners-`;
    const names = left.trim().split('\n').filter((line) => line !== '' && !line.startsWith(records));
    expect(names.sort()).toEqual(
      [
        'configmap/kube-root-ca.crt',
        `lease.coordination.k8s.io/${RELEASE}-graph-controller`,
        'secret/auth-secrets',
        'secret/auth-tls',
        'secret/cache-secrets',
        'secret/graph-registry-secrets',
        'secret/keycloak-ca',
        'secret/webhooks-secrets',
        'serviceaccount/default',
      ].sort(),
    );
    const clusterScoped = await cluster().kubectl(['get', 'clusterrole,clusterrolebinding', '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'name']);
    expect(clusterScoped.trim()).toBe('');
  }, 180_000);
});

describe('after cluster.sh down', () => {
  it('should leave sysctls, iptables rules, mounts, network namespaces and the bridge as they were', async () => {
    const down = await clusterSh(['down']);
    expect(down.code).toBe(0);
    expect(await machineState()).toEqual(tier!.before);
  }, 120_000);
});
