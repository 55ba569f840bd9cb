// The platform as the cluster suites install it (cluster.test.ts, upgrade.test.ts): the cluster's
// tier held and the cluster up with the suite's dependencies, the Secrets docs/deployment.md tells
// users to create, the chart's values pointing the services at those dependencies, helm against
// the cluster, and the services reached through `kubectl port-forward` for the user journey.
// The webhooks' GraphQL API is the chart's Hive Gateway on the subgraph fixtures' Pod (federation,
// cluster.test.ts) or, for a chart without the gateway (the previous release the upgrade test
// installs), the gateway fixture on this machine.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { localSecrets, localUrls } from '../../../scripts/local-platform.js';
import { generateSelfSignedCertificate } from '../../../services/auth/src/tls.js';
import { realmClientSecret } from '../../e2e/test-platform.js';
import { DEFAULT_TOPICS, type JourneyTargets } from '../../e2e/journey.js';
import { sharedKeycloakAdmin, type KeycloakAdminSettings } from '../../e2e/journey-support.js';
import { infra } from '../../support/infra.js';
import { prepareCharts, type Charts } from '../../deploy/support/helm.js';
import { clusterSh, holdClusterTier, imageReferences, kube, machineState, restrictedContainer, type Kube, type PortForward } from './cluster.js';
import { startClusterDependencies, type ClusterDependencies } from './dependencies.js';
import { startSubgraphsPod, subgraphsEgress, type SubgraphsPod } from './subgraphs.js';

export const RELEASE = 'sp';
export const COMPONENTS = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller'] as const;
/** The registry's Hive Gateway (graph-registry.hiveGateway): a Deployment of the release besides the five services. */
export const GATEWAY = 'hive-gateway';
/** Where Stripe and Twilio would call the webhooks service; Twilio signs this URL, not the port-forward's. */
export const WEBHOOKS_PUBLIC_URL = 'https://webhooks.sp-e2e.test';
export const ALLOWED_REDIRECT = 'https://app.sp-e2e.test';
/** Labels of the pods the NetworkPolicies let in: a Prometheus scraping the management ports, a client of the cache. */
export const SCRAPER = { 'sp-e2e/scrapes-metrics': 'true' };
export const CACHE_CLIENT = { 'sp-e2e/cache-client': 'true' };
/** Every component's management port only from the scraper (networkPolicy.metricsFrom; empty would admit any pod). */
const metricsFrom = [{ podSelector: { matchLabels: SCRAPER } }];

export interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { containers: Array<{ image: string; ports?: Array<{ name?: string; containerPort: number }> }> };
  status: { phase: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
}

export const ready = (pod: Pod): boolean => pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** The tag images.sh gave an image of the platform's (a service's, or the nginx one) (content key). */
export function imageTag(service: string): string {
  const reference = imageReferences()[`subscription-platform/${service}`];
  if (!reference) throw new Error(`no image for ${service}: run test/infra/images.sh all`);
  return reference.slice(reference.lastIndexOf(':') + 1);
}

/** The cluster's tier, held from the machine's snapshot before it to the `down` after it. */
export interface ClusterTier {
  /** The machine state before any cluster ran (cluster.sh snapshot). */
  before: string[];
  release(): Promise<void>;
}

// The longest another checkout's cluster suite is waited for (its own run takes about 6 minutes).
export const TIER_WAIT_MS = 1_800_000;
/** How long the suites' first beforeAll may take: the cluster install (cold: the longest builds of the project), then the tier. */
export const TIER_TIMEOUT_MS = 5_460_000 + TIER_WAIT_MS;

/**
 * `make test` builds the cluster's commands and images while the other tiers run: this waits for
 * that install (its locks) and finds everything built, or builds what is missing (cold: the
 * longest builds of the project; cached per machine after). Then another checkout's cluster suite
 * on this machine (its `make test` beside this one) runs first.
 */
export async function enterClusterTier(): Promise<ClusterTier> {
  const install = await clusterSh(['install'], 5_400_000);
  if (install.code !== 0) throw new Error(`cluster.sh install failed: ${install.stderr}`);
  const release = await holdClusterTier(TIER_WAIT_MS);
  return { before: await machineState(), release };
}

/** The cluster down, the tier released (when held), the scratch folder removed. */
async function downAndRelease(tier: ClusterTier | undefined, scratch: string): Promise<void> {
  await clusterSh(['down']);
  await tier?.release();
  rmSync(scratch, { recursive: true, force: true });
}

/**
 * A cluster suite's last step, whatever happened before: the platform stopped (its dependencies,
 * then the cluster down and the tier released), or only the latter when it never started.
 */
export async function leaveClusterTier(platform: ClusterPlatform | undefined, tier: ClusterTier | undefined, scratch: string): Promise<void> {
  if (platform !== undefined) return platform.stop(tier);
  return downAndRelease(tier, scratch);
}

/**
 * The components whose chart test `helm test`'s OUTPUT does not report Succeeded (none when all
 * passed): each suite's Phase read within its own block, never the next suite's.
 */
export function chartTestsNotPassed(output: string): string[] {
  return COMPONENTS.filter((component) => !new RegExp(`TEST SUITE:\\s+${RELEASE}-${component}-test\\s(?:(?!TEST SUITE:)[\\s\\S])*?Phase:\\s+Succeeded`).test(output));
}

/** Secrets the user puts in the Secrets the charts name (existingSecret): none of it is a chart value. */
export interface PlatformSecrets {
  registryApiKey: string;
  /** The read-only key the gateway reads the supergraph with (Registry__CdnKeys, HIVE_CDN_KEY). */
  cdnKey: string;
  webhooksApiKey: string;
  /** The X-Api-Key of the webhooks admin API (/api/events), under WEBHOOKS_ADMIN_API_KEY (read when webhooks.adminApi.existingSecretKey names it). */
  webhooksAdminApiKey: string;
  stripeApiKey: string;
  stripeWebhookSecret: string;
  twilioAuthToken: string;
}

/** What a probe script (grpc-health-probe.cjs, session-probe.cjs) prints twice a second. */
export interface ProbeCounts {
  ok: number;
  failed: string[];
}

/** A support script's text (test/cluster/support/NAME), to run with `node -e`. */
export const supportScript = (name: string): string => readFileSync(fileURLToPath(new URL(`./${name}`, import.meta.url)), 'utf8');

/**
 * Where the webhooks' GraphQL API is. `federation`: the chart's Hive Gateway (from the image
 * images.sh built from gateway/) composing the subgraph fixtures' Pod, whose annotated Services
 * the controller publishes (support/subgraphs.ts); started before the release, as Hive Gateway
 * exits (and restarts) until the controller has published them. `fixture`: the gateway fixture on
 * this machine (test/support/graphql-gateway.ts), for a chart that has no hiveGateway.
 */
export type GraphqlApi = 'federation' | 'fixture';

/**
 * Where the components' images come from: the node's own (built here, or imported: `tags` names
 * each that is not this checkout's build; pullPolicy Never), or a registry the node pulls them
 * from (global.imageRegistry, each image's tag the chart's appVersion: a release as pushed).
 */
export type ImageSource = { tags: Partial<Record<string, string>> } | { registry: string };

export interface ClusterPlatform {
  namespace: string;
  cluster: Kube;
  charts: Charts;
  deps: ClusterDependencies;
  /** The subgraph fixtures' Pod (federation only). */
  subgraphs: SubgraphsPod | undefined;
  secrets: PlatformSecrets;
  /** The certificate auth serves (self-signed, from the auth-tls Secret): what the suite trusts for it. */
  authCa: string;
  /** The auth Service's name in the cluster, which its certificate carries: a proxy in the cluster verifies it. */
  authHost: string;
  /** Keycloak's admin API of the realm the in-cluster auth signs in with (the https Keycloak). */
  keycloak: KeycloakAdminSettings;
  /**
   * A values file: every component on, pointing at the suite's dependencies, with `extra` merged
   * over the top level; the images from `images` (default: those built here).
   */
  values(extra?: Record<string, unknown>, images?: ImageSource): string;
  /** helm ARGS against the cluster; throws with helm's stderr when it fails. */
  helm(args: readonly string[]): Promise<string>;
  pods(): Promise<Pod[]>;
  /**
   * `helm test` of the release (the charts' test Pods, platform-lib/templates/_test.tpl): its
   * output; when it fails, an error with the logs of every test Pod left (a failing one stays).
   */
  helmTest(): Promise<string>;
  /** `kubectl port-forward svc/<release>-<service> :port`; closed by closeForwards or stop. */
  forward(service: string, port: number): Promise<string>;
  closeForwards(): Promise<void>;
  /** What the user journey calls, through forwards to auth, the registry and webhooks. */
  journeyTargets(): Promise<JourneyTargets>;
  /** The registry's graphs, asked through a port-forward to its Service. */
  registryGraphs(): Promise<Record<string, string>>;
  /**
   * A pod running one of the support scripts (test/cluster/support/NAME) with node, restricted as
   * the namespace demands: on the cache image built here, or on `image` (any of the platform's
   * images has node) pulled if the node lacks it.
   */
  startScriptPod(name: string, labels: Record<string, string>, script: string, args: readonly string[], env?: Record<string, string>, image?: string): Promise<void>;
  /** A probe pod's counts so far (its last line of output; none before it has started). */
  probeCounts(pod: string): Promise<ProbeCounts>;
  /** The dependencies stopped, the cluster down, the tier released, the charts' copy removed. */
  stop(tier: ClusterTier | undefined): Promise<void>;
}

/** Egress to the node address on these ports: the services' dependencies outside the cluster. */
const toNode = (ports: readonly number[]) => ({ enabled: true, ports, to: [{ ipBlock: { cidr: `${infra('CLUSTER_NODE_IP')}/32` } }] });

/**
 * The cluster up (cluster.sh up), a namespace enforcing Pod Security `restricted`, the suite's
 * dependencies started (this process trusts the https Keycloak's CA: the suite checks the
 * journey's users there too) and the Secrets created. On failure, stops what started.
 */
export async function startClusterPlatform(scratch: string, namespace: string, graphqlApi: GraphqlApi): Promise<ClusterPlatform> {
  let charts: Charts | undefined;
  let deps: ClusterDependencies | undefined;
  const forwards: PortForward[] = [];
  const closeForwards = async (): Promise<void> => {
    await Promise.all(forwards.splice(0).map((opened) => opened.close()));
  };
  const stop = async (tier: ClusterTier | undefined): Promise<void> => {
    await closeForwards();
    await deps?.close();
    charts?.close();
    await downAndRelease(tier, scratch);
  };
  try {
    const up = await clusterSh(['up']);
    if (up.code !== 0) throw new Error(`cluster.sh up failed: ${up.stderr}`);
    const cluster = kube(infra('CLUSTER_KUBECONFIG'));
    charts = await prepareCharts();
    await cluster.kubectl(['create', 'namespace', namespace]);
    await cluster.kubectl(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/enforce-version=latest']);
    deps = await startClusterDependencies(infra('CLUSTER_NODE_IP'), scratch, { gatewayFixture: graphqlApi === 'fixture' });
    setDefaultCACertificates([...getCACertificates('default'), deps.keycloakHttps.caPem]);
    const secrets: PlatformSecrets = {
      registryApiKey: randomUUID(),
      cdnKey: randomBytes(24).toString('base64url'),
      webhooksApiKey: randomBytes(24).toString('base64url'),
      webhooksAdminApiKey: randomBytes(24).toString('base64url'),
      stripeApiKey: `sk_test_${randomBytes(12).toString('hex')}`,
      stripeWebhookSecret: `whsec_${randomBytes(24).toString('base64url')}`,
      twilioAuthToken: randomBytes(16).toString('hex'),
    };
    const authHost = `${RELEASE}-auth.${namespace}.svc.cluster.local`;
    const authCa = await createSecrets({ cluster, namespace, authHost }, deps, secrets);
    const subgraphs =
      graphqlApi === 'federation' ? await startSubgraphsPod(cluster, namespace, { image: `localhost/subscription-platform/webhooks:${imageTag('webhooks')}`, keycloakUrl: deps.keycloakUrl }) : undefined;
    const started = { cluster, charts, deps };
    // Keycloak's admin API of the realm the in-cluster auth signs in with: the https Keycloak.
    const keycloak = { ...sharedKeycloakAdmin(), url: deps.keycloakHttps.url };
    const forward = async (service: string, port: number): Promise<string> => {
      const opened = await cluster.portForward(namespace, `svc/${RELEASE}-${service}`, port);
      forwards.push(opened);
      return `127.0.0.1:${opened.port}`;
    };
    return {
      namespace,
      ...started,
      subgraphs,
      secrets,
      authCa,
      authHost,
      keycloak,
      values: (extra = {}, images = { tags: {} }) => writeValues({ scratch, namespace, deps: started.deps, graphqlApi }, extra, images),
      helm: async (args) => {
        const result = await started.charts.helm([...args, '--kubeconfig', cluster.kubeconfig]);
        if (result.code !== 0) throw new Error(`helm ${args.join(' ')}: ${result.stderr}`);
        return result.stdout;
      },
      pods: async () => (await cluster.json<{ items: Pod[] }>(['-n', namespace, 'get', 'pods'])).items,
      helmTest: async () => {
        const result = await started.charts.helm(['test', RELEASE, '-n', namespace, '--timeout', '180s', '--kubeconfig', cluster.kubeconfig]);
        if (result.code === 0) return result.stdout;
        const logs = await Promise.all(
          COMPONENTS.map(async (component) => `${component}: ${await cluster.kubectl(['-n', namespace, 'logs', `${RELEASE}-${component}-test`]).catch(() => '(no test Pod left)')}`),
        );
        throw new Error(`helm test ${RELEASE}: ${result.stdout}${result.stderr}\n${logs.join('\n')}`);
      },
      forward,
      closeForwards,
      journeyTargets: async () => {
        const [auth, registry, webhooks] = await Promise.all([forward('auth', 5555), forward('graph-registry', 5145), forward('webhooks', 5000)]);
        return {
          auth: { url: `https://${auth}`, ca: authCa },
          registry: { url: `http://${registry}`, apiKey: secrets.registryApiKey },
          webhooks: { url: `http://${webhooks}`, publicBaseUrl: WEBHOOKS_PUBLIC_URL, apiKey: secrets.webhooksApiKey, stripeWebhookSecret: secrets.stripeWebhookSecret, twilioAuthToken: secrets.twilioAuthToken, twilioAccountSid: localSecrets.twilioAccountSid },
          stripe: { apiUrl: started.deps.stripeApiUrl, apiKey: secrets.stripeApiKey },
          kafka: { brokers: [started.deps.kafkaBrokers], topics: DEFAULT_TOPICS },
          keycloak,
        };
      },
      registryGraphs: async () => {
        const opened = await cluster.portForward(namespace, `svc/${RELEASE}-graph-registry`, 5145);
        try {
          const answer = await fetch(`http://127.0.0.1:${opened.port}/`, { headers: { 'x-api-key': secrets.registryApiKey } });
          if (answer.status !== 200) throw new Error(`the registry answered ${answer.status} to GET /`);
          return ((await answer.json()) as { graphs: Record<string, string> }).graphs;
        } finally {
          await opened.close();
        }
      },
      startScriptPod: async (name, labels, script, args, env = {}, image) => {
        const container = {
          name: 'probe',
          image: image ?? `localhost/subscription-platform/cache:${imageTag('cache')}`,
          imagePullPolicy: image === undefined ? 'Never' : 'IfNotPresent',
          command: ['node', '-e', supportScript(script), ...args],
          env: Object.entries(env).map(([key, value]) => ({ name: key, value })),
          // A CPU request, as any client Deployment has: a pod without one is BestEffort (CPU
          // shares 2 against the services' 51–102), and while a roll starts five Node processes on
          // the two cores it got no CPU for over a second — its own 2 s timer fired 3.16 s after
          // the check began, failing a check the cache may well have answered.
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
          securityContext: restrictedContainer,
        };
        const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { restartPolicy: 'Never', containers: [container] } };
        await cluster.kubectl(['apply', '-f', '-'], JSON.stringify(pod));
      },
      probeCounts: async (pod) => {
        const line = (await cluster.kubectl(['-n', namespace, 'logs', pod, '--tail', '1'])).trim();
        return line === '' ? { ok: 0, failed: [] } : (JSON.parse(line) as ProbeCounts);
      },
      stop,
    };
  } catch (error) {
    await stop(undefined);
    throw error;
  }
}

/** The Secrets docs/deployment.md tells users to create before installing, under the keys the charts name; the certificate auth serves. */
async function createSecrets(where: { cluster: Kube; namespace: string; authHost: string }, deps: ClusterDependencies, secrets: PlatformSecrets): Promise<string> {
  const { cluster, namespace, authHost } = where;
  const { cert, key } = await generateSelfSignedCertificate([authHost]);
  const secret = (name: string, stringData: Record<string, string>, type = 'Opaque') => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type, stringData });
  // One Redis, a database each: the cache's entries (auth's sessions), the registry's graphs, the webhooks' event log and drafts.
  const redis = (database: number): string => deps.redisUrl.replace(/\/0$/, `/${database}`);
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      secret('cache-secrets', { REDIS_URL: redis(1) }),
      secret('graph-registry-secrets', { MONITOR_API_KEY: secrets.registryApiKey, STORE_URL: redis(2), CDN_KEYS: secrets.cdnKey, HIVE_CDN_KEY: secrets.cdnKey }),
      secret('auth-secrets', { Oidc__ClientSecret: realmClientSecret('platform-auth'), Oidc__AdminCredentials__Password: infra('KEYCLOAK_ADMIN_PASSWORD') }),
      secret('auth-tls', { 'tls.crt': cert, 'tls.key': key }, 'kubernetes.io/tls'),
      secret('keycloak-ca', { 'ca.crt': deps.keycloakHttps.caPem }),
      secret('webhooks-secrets', {
        WEBHOOKS_API_KEY: secrets.webhooksApiKey,
        WEBHOOKS_ADMIN_API_KEY: secrets.webhooksAdminApiKey,
        PAYMENT_PROVIDER_API_KEY: secrets.stripeApiKey,
        PAYMENT_PROVIDER_WEBHOOKS_SECRET: secrets.stripeWebhookSecret,
        SMS_PROVIDER_AUTH_TOKEN: secrets.twilioAuthToken,
        Oidc__ClientSecret: infra('KEYCLOAK_SERVICES_CLIENT_SECRET'),
        STORE_URL: deps.redisUrl,
      }),
    ],
  };
  await cluster.kubectl(['apply', '-f', '-'], JSON.stringify(list));
  return cert;
}

/** `over` merged into `base`: objects key by key, anything else (lists too) replaced. */
function merged(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const result = { ...base };
  for (const [key, value] of Object.entries(over)) result[key] = isObject(value) && isObject(result[key]) ? merged(result[key], value) : value;
  return result;
}

/** What the values depend on: the scratch folder they are written to, the namespace, the dependencies, the GraphQL API. */
interface ValuesContext {
  scratch: string;
  namespace: string;
  deps: ClusterDependencies;
  graphqlApi: GraphqlApi;
}

function writeValues({ scratch, namespace, deps, graphqlApi }: ValuesContext, extra: Record<string, unknown>, images: ImageSource): string {
  const fromRegistry = 'registry' in images;
  const image = (service: string) =>
    fromRegistry ? { image: { pullPolicy: 'IfNotPresent' } } : { image: { tag: images.tags[service] ?? imageTag(service), pullPolicy: 'Never' } };
  const { ports } = deps;
  const federation = graphqlApi === 'federation';
  // The chart's Hive Gateway (global.imageRegistry `localhost` names its image as the services'),
  // polling the registry every 10 s, the shortest.
  const hiveGateway = { enabled: true, image: { repository: `subscription-platform/${GATEWAY}`, tag: imageTag(GATEWAY), pullPolicy: 'Never' }, replicaCount: 1, pollingInterval: '10s' };
  const oidc = { serverUrl: deps.keycloakUrl, realm: infra('KEYCLOAK_REALM') };
  const base = {
    global: { imageRegistry: fromRegistry ? images.registry : 'localhost' },
    cache: { ...image('cache'), logLevel: 'info', networkPolicy: { metricsFrom, extraIngressFrom: [{ podSelector: { matchLabels: CACHE_CLIENT } }] } },
    'graph-registry': {
      enabled: true,
      ...image('graph-registry'),
      networkPolicy: { metricsFrom },
      existingSecret: 'graph-registry-secrets',
      store: { url: 'memory://' },
      service: { graphAnnotations: { enabled: true, name: 'graph-registry', port: 'http', path: '/', scheme: 'http' } },
      ...(federation ? { cdn: { existingSecretKey: 'CDN_KEYS' }, hiveGateway } : {}),
    },
    'graph-controller': {
      enabled: true,
      ...image('graph-controller'),
      // With federation, the subgraphs' SDL is read from their Pod ({ _service { sdl } }).
      networkPolicy: { metricsFrom, ...(federation ? { egress: { extra: [subgraphsEgress()] } } : {}) },
      existingSecret: 'graph-registry-secrets',
      watchNamespaces: [namespace],
    },
    auth: {
      enabled: true,
      ...image('auth'),
      existingSecret: 'auth-secrets',
      // Production: Keycloak over https, its certificate signed by the suite's CA, which auth
      // trusts through the caBundle Secret (NODE_EXTRA_CA_CERTS).
      environment: 'Production',
      publicBaseUrl: 'https://auth.sp-e2e.test',
      allowedRedirectUris: [ALLOWED_REDIRECT],
      oidc: { ...oidc, serverUrl: deps.keycloakHttps.url, clientId: 'platform-auth', adminUsername: infra('KEYCLOAK_ADMIN_USERNAME') },
      caBundle: { secretName: 'keycloak-ca' },
      kafka: { brokers: [deps.kafkaBrokers] },
      tls: { existingSecret: 'auth-tls' },
      networkPolicy: { metricsFrom, egress: { destinations: { kafka: toNode([ports.kafka]), keycloak: toNode([ports.keycloakHttps]) } } },
    },
    webhooks: {
      enabled: true,
      ...image('webhooks'),
      existingSecret: 'webhooks-secrets',
      publicBaseUrl: WEBHOOKS_PUBLIC_URL,
      paymentProvider: { apiUrl: deps.stripeApiUrl },
      smsProvider: { accountSid: localSecrets.twilioAccountSid },
      // The chart's Hive Gateway (docs/deployment.md, "Federation"), or the fixture.
      graphqlApiUrl: federation ? `http://${RELEASE}-${GATEWAY}:4000/graphql` : deps.gateway!.url,
      localizationApiUrl: deps.localizationUrl,
      store: { existingSecretKey: 'STORE_URL' },
      kafka: { brokers: [deps.kafkaBrokers] },
      links: { accountUrl: localUrls.account, billingPortalUrl: localUrls.billingPortal, clientLinkBaseUri: localUrls.clientBase },
      oidc: { ...oidc, clientId: infra('KEYCLOAK_SERVICES_CLIENT_ID') },
      networkPolicy: {
        metricsFrom,
        egress: {
          ...(federation ? { toComponents: [{ component: 'cache', port: 7777 }, { component: GATEWAY, port: 4000 }] } : {}),
          destinations: { kafka: toNode([ports.kafka]), keycloak: toNode([ports.keycloak]), redis: toNode([ports.redis]), apis: toNode(ports.apis) },
        },
      },
    },
  };
  const file = join(scratch, `values-${randomUUID().slice(0, 6)}.yaml`);
  writeFileSync(file, stringify(merged(base, extra)));
  return file;
}

/**
 * Values that keep the platform's state in Redis (the suite's, a database each; the Secrets
 * above): the cache's entries, so auth's sessions outlive the cache pods, and the registry's
 * graphs. What an installation that is upgraded in place runs (docs/deployment.md).
 */
export function persistentStores(platform: ClusterPlatform): Record<string, unknown> {
  const redis = toNode([platform.deps.ports.redis]);
  return {
    cache: { backend: 'redis', existingSecret: 'cache-secrets', redis: { existingSecretKey: 'REDIS_URL' }, networkPolicy: { egress: { destinations: { redis } } } },
    'graph-registry': { store: { url: '', existingSecretKey: 'STORE_URL' }, networkPolicy: { egress: { destinations: { redis } } } },
  };
}
