import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { Registry as PromRegistry } from 'prom-client';
import { Redis } from 'ioredis';
import { wireGraphController } from '../../services/graph-controller/src/graph-controller.js';
import { testConfig } from '../../services/graph-controller/test/support/controller-fixture.js';
import { startRegistryServer } from '../../services/graph-controller/test/support/registry-server.js';
import { adminKubeConfig, ensureNamespace, serviceAccountKubeConfig, uniqueName } from '../support/kube-apiserver.js';
import { eventually } from '../support/eventually.js';
import { startPrivateRedis } from '../support/redis-server.js';
import { silentLogger } from '../support/silent-logger.js';
import { infra } from '../support/infra.js';
import { prepareCharts, scenarios, type Charts, type K8sObject } from './support/helm.js';
import { configMapOf, forComponent, ofKind, type Deployment } from './support/manifests.js';

/**
 * Every ci/*-values.yaml scenario of the umbrella chart against the real kube-apiserver
 * (test/infra/kube.sh): installed, upgraded and uninstalled with helm, the rendered objects
 * applied with `kubectl apply --dry-run=server` (helm's own --dry-run=server does not validate
 * objects), and every Pod template admitted under Pod Security `restricted`. The
 * prometheus-operator CRDs come from the pinned Go module test/infra/deploy-tools.sh installs.
 * No node runs here: Deployments are stored, their Pods never scheduled.
 */

const run = promisify(execFile);
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'Namespace']);
const RESTRICTED = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };

let charts: Charts;
let admin: KubeConfig;
let kubeconfig: string;

async function kubectl(args: readonly string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  const child = run(infra('KUBECTL_BIN'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) {
    child.child.stdin!.end(input);
  }
  return child;
}

async function helm(args: readonly string[]): Promise<string> {
  const result = await charts.helm([...args, '--kubeconfig', kubeconfig]);
  if (result.code !== 0) throw new Error(`helm ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const scenarioFiles = (): string[] => scenarios(join(import.meta.dirname, '../../charts/subscription-platform'));

beforeAll(async () => {
  charts = await prepareCharts();
  admin = adminKubeConfig();
  kubeconfig = infra('KUBECONFIG_PATH');
  const crdDir = infra('PROMETHEUS_OPERATOR_CRD_DIR');
  for (const file of readdirSync(crdDir).filter((name) => name.endsWith('.yaml'))) {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(crdDir, file)]);
  }
  await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
}, 120_000);

afterAll(() => charts?.close());

/** The ServiceAccount admission needs the account a Pod names; with no controller-manager here, nothing creates `default`. */
async function withDefaultServiceAccount(namespace: string): Promise<void> {
  await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
}

/** A Pod made from a Deployment's template, as its ReplicaSet would create it. */
function podOf(deployment: Deployment, namespace: string): V1Pod {
  const template = deployment.spec.template as unknown as { metadata: V1Pod['metadata']; spec: V1Pod['spec'] };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name: `${deployment.metadata.name}-probe`, namespace }, spec: template.spec };
}

interface SpreadConstraint {
  labelSelector?: { matchLabels?: Record<string, string> };
}

describe.each(scenarioFiles())('chart scenario %s on the real kube-apiserver', (scenario) => {
  const values = () => join(charts.umbrella, 'ci', scenario);
  let namespace: string;
  let rendered: K8sObject[];

  beforeAll(async () => {
    namespace = uniqueName(scenario.replace(/-values\.yaml$/, ''));
    await ensureNamespace(admin, namespace, RESTRICTED);
    // The chart's test Pods (helm test) run as the namespace's `default` account, which every real namespace has.
    await withDefaultServiceAccount(namespace);
    rendered = await charts.render({ values: [values()], release: 'sp', namespace });
    // Namespaces the scenario reaches into (the controller's watchNamespaces) exist beforehand.
    for (const other of new Set(rendered.map((object) => object.metadata.namespace).filter((name) => name !== undefined && name !== namespace))) {
      await ensureNamespace(admin, other!);
    }
  }, 60_000);

  it('should pass a server-side dry-run apply of every rendered object, without warnings', async () => {
    const manifest = rendered
      .map((object) => (object.metadata.namespace !== undefined || CLUSTER_SCOPED.has(object.kind) ? object : { ...object, metadata: { ...object.metadata, namespace } }))
      .map((object) => JSON.stringify(object))
      .join('\n---\n');
    const { stdout, stderr } = await kubectl(['apply', '--dry-run=server', '-f', '-'], manifest);
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toHaveLength(rendered.length);
  }, 60_000);

  it('should install, upgrade with a changed value, and uninstall with helm', async () => {
    await helm(['install', 'sp', charts.umbrella, '--namespace', namespace, '-f', values()]);
    const core = admin.makeApiClient(CoreV1Api);
    const configMaps = async () => (await core.listNamespacedConfigMap({ namespace, labelSelector: 'app.kubernetes.io/instance=sp' })).items;
    expect((await configMaps()).length).toBeGreaterThan(0);
    await helm(['upgrade', 'sp', charts.umbrella, '--namespace', namespace, '-f', values(), '--set', 'global.imageTag=9.9.9']);
    const deployments = JSON.parse(await kubectl(['get', 'deployments', '--namespace', namespace, '-o', 'json']).then((result) => result.stdout)) as { items: Deployment[] };
    expect(deployments.items.length).toBeGreaterThan(0);
    // The platform's images follow global.imageTag; Hive Gateway's is a third party's, pinned by
    // its own hiveGateway.image.tag, and keeps it.
    const images = deployments.items.flatMap((deployment) => deployment.spec.template.spec.containers.map((container) => container.image));
    expect(images.filter((image) => image.startsWith('ghcr.io/graphql-hive/gateway:'))).toEqual(scenario === 'full-values.yaml' ? ['ghcr.io/graphql-hive/gateway:2.15.1'] : []);
    for (const image of images.filter((image) => !image.startsWith('ghcr.io/graphql-hive/gateway:'))) expect(image).toMatch(/:9\.9\.9$/);
    expect(await helm(['history', 'sp', '--namespace', namespace, '-o', 'json']).then((text) => (JSON.parse(text) as unknown[]).length)).toBe(2);
    await helm(['uninstall', 'sp', '--namespace', namespace, '--wait']);
    expect(await configMaps()).toEqual([]);
  }, 120_000);

  it('should have every Pod template admitted under Pod Security restricted, spreading its own pods', async () => {
    // The ServiceAccounts the pods name must exist (admission checks them): installed for this test.
    await helm(['install', 'sp', charts.umbrella, '--namespace', namespace, '-f', values()]);
    try {
      const core = admin.makeApiClient(CoreV1Api);
      for (const deployment of ofKind<Deployment>(rendered, 'Deployment')) {
        const pod = podOf(deployment, namespace);
        await expect(core.createNamespacedPod({ namespace, body: pod, dryRun: 'All' }).then(() => 'admitted')).resolves.toBe('admitted');
        const labels = deployment.spec.template.metadata.labels;
        for (const constraint of ((pod.spec as { topologySpreadConstraints?: SpreadConstraint[] }).topologySpreadConstraints ?? [])) {
          const selector = constraint.labelSelector?.matchLabels ?? {};
          expect({ deployment: deployment.metadata.name, selects: Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value) }).toEqual({
            deployment: deployment.metadata.name,
            selects: true,
          });
        }
      }
    } finally {
      await helm(['uninstall', 'sp', '--namespace', namespace, '--wait']);
    }
  }, 120_000);
});

describe('Pod Security restricted on the real kube-apiserver', () => {
  it('should reject a Pod that runs as root (the namespace label is enforced, so admissions above mean something)', async () => {
    const namespace = uniqueName('restricted');
    await ensureNamespace(admin, namespace, RESTRICTED);
    await withDefaultServiceAccount(namespace);
    const core = admin.makeApiClient(CoreV1Api);
    const pod: V1Pod = { metadata: { name: 'root' }, spec: { containers: [{ name: 'app', image: 'example/app:1' }] } };
    await expect(core.createNamespacedPod({ namespace, body: pod, dryRun: 'All' })).rejects.toMatchObject({ code: 403, body: expect.stringContaining('violates PodSecurity') });
  });

  it('should reject a Pod naming a PriorityClass that does not exist (why the production scenario names none)', async () => {
    const namespace = uniqueName('priority');
    await ensureNamespace(admin, namespace);
    await withDefaultServiceAccount(namespace);
    const core = admin.makeApiClient(CoreV1Api);
    const pod: V1Pod = { metadata: { name: 'critical' }, spec: { priorityClassName: 'platform-critical', containers: [{ name: 'app', image: 'example/app:1' }] } };
    await expect(core.createNamespacedPod({ namespace, body: pod, dryRun: 'All' })).rejects.toMatchObject({ code: 403, body: expect.stringContaining('no PriorityClass with name platform-critical') });
  });
});

describe('graph controller with the RBAC the chart installs', () => {
  it('should register an annotated Service and keep its ownership records with only the chart\'s permissions', async () => {
    const namespace = uniqueName('rbac');
    const shop = uniqueName('shop');
    await ensureNamespace(admin, namespace);
    await ensureNamespace(admin, shop);
    const values = join(charts.umbrella, 'ci', 'minimal-values.yaml');
    await helm(['install', 'sp', charts.umbrella, '--namespace', namespace, '-f', values]);
    const redis = await startPrivateRedis();
    const registry = await startRegistryServer(redis.url, ['chart-rbac-key-0123456789']);
    const store = new Redis(redis.url);
    try {
      const objects = await charts.render({ values: [values], release: 'sp', namespace });
      const deployment = forComponent<Deployment>(objects, 'Deployment', 'graph-controller')!;
      const leaseName = configMapOf(objects, deployment).Controller__LeaseName!;
      const kube = await serviceAccountKubeConfig(admin, namespace, deployment.spec.template.spec.serviceAccountName);
      const config = testConfig({ kubeConfig: kube, registryUrl: registry.url, apiKey: 'chart-rbac-key-0123456789', namespaces: [shop], leaseNamespace: namespace });
      const controller = wireGraphController(
        { ...config, leaderElection: { ...config.leaderElection, leaseName } },
        { logger: silentLogger(), registry: new PromRegistry(), now: Date.now },
        { kubeConfig: kube },
      );
      controller.start();
      try {
        const core = admin.makeApiClient(CoreV1Api);
        await core.createNamespacedService({ namespace: shop, body: { metadata: { name: 'orders', annotations: { 'graph-registry.io/name': 'orders' } }, spec: { ports: [{ port: 8080 }] } } });
        await eventually(async () => (await store.get('graph:orders')) === `http://orders.${shop}.svc.cluster.local:8080/graphql`, 10_000, 'registered');
        const records = await core.listNamespacedConfigMap({ namespace, labelSelector: `graph-registry.io/ownership-records=${leaseName}` });
        expect(records.items.flatMap((record) => Object.keys(record.data ?? {}))).toEqual(['orders']); // a shard's entries are keyed by graph name
      } finally {
        await controller.stop({ releaseLease: true });
      }
    } finally {
      store.disconnect();
      await registry.close();
      await redis.stop();
      await helm(['uninstall', 'sp', '--namespace', namespace, '--wait']);
    }
  }, 60_000);
});
