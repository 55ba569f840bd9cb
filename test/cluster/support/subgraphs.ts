// The user, product and payment subgraph fixtures of the end-to-end suites as a Pod of the cluster,
// behind three Services annotated for the in-cluster graph controller (graph-registry.io/name and
// graph-registry.io/federation: services/graph-controller/README.md): the controller registers
// their cluster URLs, reads their SDL and publishes it, the registry composes the supergraph, and
// the chart's Hive Gateway serves it. One Pod (one process) serves all three, as the fixtures share
// one set of records (a confirmation's client is the user service's).
//
// The fixtures' code (test/support, TypeScript) runs unchanged: esbuild bundles support/subgraph-pod.ts
// with its packages left as imports, and the Pod runs the bundle in the webhooks image, whose
// /app/node_modules holds the same graphql, jose and @sp/http. The bundle and the SDL files it reads
// are mounted from a ConfigMap at the paths they have in the repository, under /app/fixtures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { repoRoot } from '../../deploy/support/service-config.js';
import { queryGateway, servicesToken, type GatewayAnswer } from '../../support/hive-gateway.js';
import { infra } from '../../support/infra.js';
import { SUBGRAPH_NAMES, type SubgraphName } from '../../support/subgraph-fixtures.js';
import { restrictedContainer, type Kube } from './cluster.js';

export const SUBGRAPHS_POD = 'subgraphs';
/** The port of each subgraph in the Pod and on its Service. */
export const SUBGRAPH_PORTS: Readonly<Record<SubgraphName, number>> = { user: 4001, product: 4002, payment: 4003 };
const LABELS = { 'app.kubernetes.io/name': SUBGRAPHS_POD, 'app.kubernetes.io/part-of': 'sp-e2e' };
const MOUNT = '/app/fixtures';
const BUNDLE = 'test/support/subgraph-pod.mjs';
/** Files the bundled modules read, by their path in the repository (relative to the bundle, as in the sources). */
const READ_FILES = [...SUBGRAPH_NAMES.map((name) => `test/support/subgraphs/${name}.graphql`), 'services/webhooks/contract/gateway.graphql'];

/** The Service of one subgraph, annotated as a team would annotate its own. */
export const subgraphServiceName = (name: SubgraphName): string => `${name}-graphql`;

/** support/subgraph-pod.ts and the fixtures it imports as one ES module; the packages stay imports. */
async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [join(import.meta.dirname, 'subgraph-pod.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

/** The Pod's image (the webhooks image) and the Keycloak whose tokens it accepts, at the address pods call it by (the tokens' issuer). */
export interface SubgraphsPodOptions {
  image: string;
  keycloakUrl: string;
}

async function manifests(namespace: string, { image, keycloakUrl }: SubgraphsPodOptions): Promise<unknown[]> {
  const files: Record<string, string> = { [BUNDLE]: await bundle(), ...Object.fromEntries(READ_FILES.map((path) => [path, readFileSync(join(repoRoot, path), 'utf8')])) };
  // ConfigMap keys cannot hold '/': each file under a key of its own, mounted at its path.
  const keys = Object.keys(files).map((path, i) => ({ key: `file-${i}`, path }));
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: SUBGRAPHS_POD, namespace }, data: Object.fromEntries(keys.map(({ key, path }) => [key, files[path]!])) };
  const env = {
    SUBGRAPH_PORTS: SUBGRAPH_NAMES.map((name) => SUBGRAPH_PORTS[name]).join(','),
    KEYCLOAK_URL: keycloakUrl,
    KEYCLOAK_REALM: infra('KEYCLOAK_REALM'),
    KEYCLOAK_SERVICES_CLIENT_ID: infra('KEYCLOAK_SERVICES_CLIENT_ID'),
  };
  const container = {
    name: 'subgraphs',
    image,
    imagePullPolicy: 'Never',
    // Imported rather than run as the main module: scripts/local-platform.ts, bundled in, prints
    // its shell assignments when it is the main module.
    command: ['node', '-e', `import(${JSON.stringify(`${MOUNT}/${BUNDLE}`)})`],
    env: Object.entries(env).map(([name, value]) => ({ name, value })),
    ports: SUBGRAPH_NAMES.map((name) => ({ name, containerPort: SUBGRAPH_PORTS[name] })),
    readinessProbe: { tcpSocket: { port: 'payment' }, periodSeconds: 2 },
    securityContext: restrictedContainer,
    volumeMounts: [{ name: 'fixtures', mountPath: MOUNT, readOnly: true }],
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: SUBGRAPHS_POD, namespace, labels: LABELS },
    spec: { automountServiceAccountToken: false, containers: [container], volumes: [{ name: 'fixtures', configMap: { name: SUBGRAPHS_POD, items: keys } }] },
  };
  const services = SUBGRAPH_NAMES.map((name) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: subgraphServiceName(name), namespace, annotations: { 'graph-registry.io/name': name, 'graph-registry.io/port': 'http', 'graph-registry.io/federation': 'true' } },
    spec: { selector: LABELS, ports: [{ name: 'http', port: SUBGRAPH_PORTS[name], targetPort: name }] },
  }));
  return [configMap, pod, ...services];
}

/** The seeded demo client, as the Pod printed it. */
export interface SubgraphsPod {
  client: { id: string; number: number; name: string; phoneNumber: string | null };
}

/** Starts the Pod and its Services and waits until it serves. */
export async function startSubgraphsPod(cluster: Kube, namespace: string, options: SubgraphsPodOptions): Promise<SubgraphsPod> {
  await cluster.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: await manifests(namespace, options) }));
  await cluster.kubectl(['-n', namespace, 'wait', `pod/${SUBGRAPHS_POD}`, '--for=condition=Ready', '--timeout=120s']).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await cluster.kubectl(['-n', namespace, 'logs', SUBGRAPHS_POD]).catch((logs: Error) => logs.message)}`);
  });
  const line = (await cluster.kubectl(['-n', namespace, 'logs', SUBGRAPHS_POD])).trim().split('\n').at(-1)!;
  return JSON.parse(line) as SubgraphsPod;
}

export interface SubgraphOperation {
  type: 'query' | 'mutation';
  fields: string[];
  variables: Record<string, unknown>;
}

/** The operations the three subgraphs received (of `type` when given), in order: `GET /_operations` through a port-forward. */
export async function subgraphOperations(cluster: Kube, namespace: string, type?: 'query' | 'mutation'): Promise<SubgraphOperation[]> {
  const forward = await cluster.portForward(namespace, `svc/${subgraphServiceName('payment')}`, SUBGRAPH_PORTS.payment);
  try {
    const query = type === undefined ? '' : `?type=${type}`;
    const answer = await fetch(`http://127.0.0.1:${forward.port}/_operations${query}`, { signal: AbortSignal.timeout(10_000) });
    if (!answer.ok) throw new Error(`GET /_operations answered ${answer.status}`);
    return ((await answer.json()) as { operations: SubgraphOperation[] }).operations;
  } finally {
    await forward.close();
  }
}

/** Removes the Pod, its Services and its ConfigMap (the controller then withdraws the subgraphs). */
export async function stopSubgraphsPod(cluster: Kube, namespace: string): Promise<void> {
  const services = SUBGRAPH_NAMES.map((name) => `service/${subgraphServiceName(name)}`);
  await cluster.kubectl(['-n', namespace, 'delete', `pod/${SUBGRAPHS_POD}`, `configmap/${SUBGRAPHS_POD}`, ...services, '--ignore-not-found', '--wait']);
}

/**
 * The egress rule the graph controller needs under its NetworkPolicy (networkPolicy.egress.extra)
 * to read the subgraphs' SDL (`{ _service { sdl } }`) on their ports.
 */
export function subgraphsEgress(): Record<string, unknown> {
  return { to: [{ podSelector: { matchLabels: LABELS } }], ports: SUBGRAPH_NAMES.map((name) => ({ port: SUBGRAPH_PORTS[name], protocol: 'TCP' })) };
}

/** Where a query goes: the gateway's Service (port 4000) in `namespace`, with a token of the Keycloak the subgraphs trust. */
export interface GatewayTarget {
  namespace: string;
  service: string;
  keycloakUrl: string;
}

/** A GraphQL request to the chart's Hive Gateway through `kubectl port-forward`, with a token of the services' client (the subgraphs check it). */
export async function gatewayQuery(cluster: Kube, target: GatewayTarget, query: string, variables: Record<string, unknown> = {}): Promise<GatewayAnswer> {
  const authorization = `Bearer ${await servicesToken(target.keycloakUrl)}`;
  const forward = await cluster.portForward(target.namespace, `svc/${target.service}`, 4000);
  try {
    return await queryGateway(`http://127.0.0.1:${forward.port}/graphql`, query, variables, { authorization });
  } finally {
    await forward.close();
  }
}
