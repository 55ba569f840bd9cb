// The charts on a real single-node cluster (test/infra/cluster.sh): the images built from the one
// Dockerfile, `helm install` of the umbrella chart into a namespace that enforces Pod Security
// `restricted`, the services reached through `kubectl port-forward` as docs/deployment.md tells
// users to debug, the in-cluster graph controller registering annotated Services, `helm upgrade`
// and `helm uninstall`; and the machine put back as it was, after the suite and after an `up`
// interrupted with Ctrl-C. One cluster runs per machine, so this one file does it all in order.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import { eventually, sleep } from '../support/eventually.js';
import { infra } from '../support/infra.js';
import { prepareCharts, type Charts } from '../deploy/support/helm.js';
import { clusterScript, clusterSh, grpcHealth, imageReferences, kube, machineState, type Kube } from './support/cluster.js';

const RELEASE = 'sp';
const namespace = `sp-e2e-${randomUUID().slice(0, 8)}`;
const registryApiKey = randomUUID();
const COMPONENTS = ['cache', 'graph-registry', 'graph-controller'] as const;

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { containers: Array<{ image: string }> };
  status: { phase: string; conditions?: Array<{ type: string; status: string }> };
}

let before: string[];
let cluster: Kube | undefined;
let charts: Charts | undefined;
let scratch: string;

/** The tag images.sh gave a service's image (content key). */
function imageTag(service: string): string {
  const reference = imageReferences()[`subscription-platform/${service}`];
  if (!reference) throw new Error(`no image for ${service}: run test/infra/images.sh services`);
  return reference.slice(reference.lastIndexOf(':') + 1);
}

function values(extra: Record<string, unknown> = {}): string {
  const image = (service: string) => ({ image: { tag: imageTag(service), pullPolicy: 'Never' } });
  const file = join(scratch, `values-${randomUUID().slice(0, 6)}.yaml`);
  writeFileSync(
    file,
    stringify({
      global: { imageRegistry: 'localhost' },
      cache: { ...image('cache'), logLevel: 'info' },
      'graph-registry': {
        enabled: true,
        ...image('graph-registry'),
        existingSecret: 'graph-registry-secrets',
        store: { url: 'memory://' },
        service: { graphAnnotations: { enabled: true, name: 'graph-registry', port: 'http', path: '/', scheme: 'http' } },
      },
      'graph-controller': { enabled: true, ...image('graph-controller'), existingSecret: 'graph-registry-secrets', watchNamespaces: [namespace] },
      ...extra,
    }),
  );
  return file;
}

async function helm(args: readonly string[]): Promise<string> {
  const result = await charts!.helm([...args, '--kubeconfig', cluster!.kubeconfig]);
  if (result.code !== 0) throw new Error(`helm ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function pods(): Promise<Pod[]> {
  return (await cluster!.json<{ items: Pod[] }>(['-n', namespace, 'get', 'pods'])).items;
}

const ready = (pod: Pod): boolean => pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** The registry's graphs, asked through a port-forward to its Service. */
async function registryGraphs(): Promise<Record<string, string>> {
  const forward = await cluster!.portForward(namespace, `svc/${RELEASE}-graph-registry`, 5145);
  try {
    const answer = await fetch(`http://127.0.0.1:${forward.port}/`, { headers: { 'x-api-key': registryApiKey } });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { graphs: Record<string, string> }).graphs;
  } finally {
    await forward.close();
  }
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
  before = await machineState();
}, 60_000);

afterAll(async () => {
  // Whatever happened above, nothing of the cluster stays running.
  await clusterSh(['down']);
  charts?.close();
  rmSync(scratch, { recursive: true, force: true });
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
    expect(await machineState()).not.toEqual(before);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('up interrupted or failed: restoring the machine');
    expect(await machineState()).toEqual(before);
  }, 600_000);
});

describe('the umbrella chart on the cluster', () => {
  beforeAll(async () => {
    const up = await clusterSh(['up']);
    if (up.code !== 0) throw new Error(`cluster.sh up failed: ${up.stderr}`);
    cluster = kube(infra('CLUSTER_KUBECONFIG'));
    charts = await prepareCharts();
    await cluster.kubectl(['create', 'namespace', namespace]);
    await cluster.kubectl(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/enforce-version=latest']);
    await cluster.kubectl(['-n', namespace, 'create', 'secret', 'generic', 'graph-registry-secrets', `--from-literal=MONITOR_API_KEY=${registryApiKey}`]);
    await helm(['install', RELEASE, charts.umbrella, '-n', namespace, '-f', values(), '--wait', '--timeout', '180s']);
  }, 900_000);

  it('should refuse a second cluster on the same machine, naming the one that runs', async () => {
    const second = await clusterSh(['up']);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/another cluster runs on this machine/);
    expect(await cluster!.kubectl(['get', 'node', '-o', 'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}'])).toBe('True');
  }, 120_000);

  it('should run every component Ready under Pod Security restricted, from the images built here', async () => {
    const running = await pods();
    const names = new Set(running.map((pod) => pod.metadata.labels?.['app.kubernetes.io/name']));
    expect([...names].sort()).toEqual([...COMPONENTS].sort());
    for (const pod of running) {
      expect({ pod: pod.metadata.name, ready: ready(pod) }).toEqual({ pod: pod.metadata.name, ready: true });
      const component = pod.metadata.labels!['app.kubernetes.io/name']!;
      expect(pod.spec.containers[0]!.image).toBe(`localhost/subscription-platform/${component}:${imageTag(component)}`);
    }
    const label = await cluster!.kubectl(['get', 'namespace', namespace, '-o', 'jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}']);
    expect(label).toBe('restricted');
  });

  it('should refuse a pod without the restricted securityContext in that namespace: the policy is enforced, not just labelled', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'unrestricted', namespace }, spec: { containers: [{ name: 'c', image: 'localhost/pause:static-1' }] } };
    await expect(cluster!.kubectl(['apply', '-f', '-'], JSON.stringify(pod))).rejects.toThrow(/violates PodSecurity "restricted:latest"/);
  });

  it('should answer the gRPC health check of the cache through kubectl port-forward', async () => {
    const forward = await cluster!.portForward(namespace, `svc/${RELEASE}-cache`, 7777);
    try {
      expect(await grpcHealth(`127.0.0.1:${forward.port}`)).toBe('SERVING');
    } finally {
      await forward.close();
    }
  }, 60_000);

  it('should register and look up a graph in the registry through kubectl port-forward, refusing a wrong key', async () => {
    const forward = await cluster!.portForward(namespace, `svc/${RELEASE}-graph-registry`, 5145);
    try {
      const base = `http://127.0.0.1:${forward.port}`;
      const name = `e2e-${randomUUID().slice(0, 8)}`;
      const put = await fetch(`${base}/${name}`, { method: 'POST', headers: { 'x-api-key': registryApiKey, 'content-type': 'text/plain' }, body: 'http://example.test/graphql' });
      expect(put.status).toBe(204);
      const got = await fetch(`${base}/${name}`, { headers: { 'x-api-key': registryApiKey } });
      expect(got.status).toBe(200);
      expect(await got.text()).toContain('http://example.test/graphql');
      expect((await fetch(`${base}/${name}`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    } finally {
      await forward.close();
    }
  }, 60_000);

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
    await cluster!.kubectl(['apply', '-f', '-'], JSON.stringify(service));
    try {
      await settles(async () => void expect((await registryGraphs())['example-graph']).toMatch(/^http:\/\/example-graph\..*:4000\/graphql$/), 60_000);
    } finally {
      await cluster!.kubectl(['-n', namespace, 'delete', 'service', 'example-graph', '--ignore-not-found']);
    }
    await settles(async () => void expect(Object.keys(await registryGraphs())).not.toContain('example-graph'), 60_000);
  }, 180_000);

  it('should roll the pods on a helm upgrade with a changed value and keep serving', async () => {
    const cacheBefore = (await pods()).filter((pod) => pod.metadata.labels?.['app.kubernetes.io/name'] === 'cache').map((pod) => pod.metadata.name);
    await helm(['upgrade', RELEASE, charts!.umbrella, '-n', namespace, '-f', values({}), '--set', 'cache.logLevel=debug', '--wait', '--timeout', '180s']);
    await settles(async () => {
      const cacheAfter = (await pods()).filter((pod) => pod.metadata.labels?.['app.kubernetes.io/name'] === 'cache');
      expect(cacheAfter.map((pod) => pod.metadata.name).some((name) => cacheBefore.includes(name))).toBe(false);
      expect(cacheAfter.every(ready)).toBe(true);
    }, 120_000);
    const forward = await cluster!.portForward(namespace, `svc/${RELEASE}-cache`, 7777);
    try {
      expect(await grpcHealth(`127.0.0.1:${forward.port}`)).toBe('SERVING');
    } finally {
      await forward.close();
    }
  }, 300_000);

  it("should leave nothing of the release after helm uninstall but the user's Secret and the controller's records the docs name", async () => {
    await helm(['uninstall', RELEASE, '-n', namespace, '--wait', '--timeout', '120s']);
    await settles(async () => void expect(await pods()).toEqual([]), 60_000);
    const left = await cluster!.kubectl(['-n', namespace, 'get', 'all,configmap,secret,serviceaccount,role,rolebinding,lease,networkpolicy,poddisruptionbudget', '-o', 'name']);
    const names = left.trim().split('\n').filter((line) => line !== '');
    // kube-root-ca.crt and the default ServiceAccount belong to the namespace; the Lease and the
    // ownership ConfigMap are the graph controller's own records (docs/deployment.md, "Try it on a local cluster").
    expect(names.sort()).toEqual(
      [
        'configmap/kube-root-ca.crt',
        `configmap/${RELEASE}-graph-controller-registrations`,
        `lease.coordination.k8s.io/${RELEASE}-graph-controller`,
        'secret/graph-registry-secrets',
        'serviceaccount/default',
      ].sort(),
    );
    const clusterScoped = await cluster!.kubectl(['get', 'clusterrole,clusterrolebinding', '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'name']);
    expect(clusterScoped.trim()).toBe('');
  }, 180_000);
});

describe('after cluster.sh down', () => {
  it('should leave sysctls, iptables rules, mounts, network namespaces and the bridge as they were', async () => {
    const down = await clusterSh(['down']);
    expect(down.code).toBe(0);
    expect(await machineState()).toEqual(before);
  }, 120_000);
});
