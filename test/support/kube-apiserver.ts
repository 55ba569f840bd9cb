import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { get } from 'node:https';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { infra } from './infra.js';
import { eventually } from './eventually.js';
import { exitOf, processProgress } from './progress.js';
import { freePort } from './redis-server.js';

/**
 * The real kube-apiserver (+ etcd) that test/infra/kube.sh builds and starts (`make test` does):
 * RBAC on, ServiceAccount tokens signed by it, admission (Pod Security, Priority, schemas) its own.
 */

const KUBE_SH = fileURLToPath(new URL('../infra/kube.sh', import.meta.url));

/** A KubeConfig of the admin (system:masters) of the shared apiserver. */
export function adminKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(infra('KUBECONFIG_PATH'));
  return kubeConfig;
}

/** A DNS label unique to this run, for namespaces and other cluster-wide names tests create. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Creates the namespaces (labels optional); an existing one is left as it is. */
export async function ensureNamespace(kubeConfig: KubeConfig, name: string, labels?: Record<string, string>): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name, labels } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/**
 * Creates or replaces each object (server-side apply, as `kubectl apply --server-side --force-conflicts`),
 * as field manager `manager`.
 */
export async function applyObjects(kubeConfig: KubeConfig, objects: readonly KubernetesObject[], namespace?: string, manager = 'platform-tests'): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const object of objects) {
    const body = { ...object, metadata: { ...object.metadata, ...(namespace && !isClusterScoped(object) ? { namespace } : {}) } };
    await client.patch(body, undefined, undefined, manager, true, 'application/apply-patch+yaml');
  }
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'CustomResourceDefinition']);
const isClusterScoped = (object: KubernetesObject): boolean => CLUSTER_SCOPED.has(object.kind ?? '');

/**
 * A KubeConfig that authenticates as the ServiceAccount with a token the API server issues
 * (TokenRequest), so every request is authorized by the RBAC bound to that account, nothing else.
 */
export async function serviceAccountKubeConfig(admin: KubeConfig, namespace: string, name: string): Promise<KubeConfig> {
  const core = admin.makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name, namespace } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const request = await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const token = request.status?.token;
  if (!token) throw new Error(`no token issued for ${namespace}/${name}`);
  const cluster = admin.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: `${namespace}-${name}`, token }],
    contexts: [{ name: 'sa', cluster: cluster.name, user: `${namespace}-${name}` }],
    currentContext: 'sa',
  });
  return kubeConfig;
}

/** Whether `user` may do `verb` on `resource` (a SubjectAccessReview, as `kubectl auth can-i --as`). */
export async function canI(admin: KubeConfig, user: string, attributes: { verb: string; resource: string; group?: string; namespace?: string; name?: string }): Promise<boolean> {
  const review = await admin.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: { spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { ...attributes, group: attributes.group ?? '' } } },
  });
  return review.status?.allowed === true;
}

/**
 * One more kube-apiserver of this checkout, on the shared etcd under a private key prefix, that a
 * test may SIGKILL and start again on the same port (a SIGTERM'd apiserver drains watches for 60 s).
 */
export interface PrivateApiserver {
  url: string;
  /** Admin KubeConfig of this apiserver. */
  admin: KubeConfig;
  kill(): void;
  /** Starts it again (same port, same data) and waits for /readyz. */
  start(): Promise<void>;
  close(): void;
}

/** GET /readyz answers 200. The serving certificate is the apiserver's own self-signed one: only this probe skips verifying it. */
function readyz(url: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(`${url}/readyz`, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

/** Until the apiserver `child` (run-apiserver execs it) is ready, for as long as it runs and makes progress (progress.ts). */
async function waitReady(url: string, token: string, child: ChildProcess): Promise<void> {
  await eventually(() => readyz(url, token), { progress: processProgress(child.pid), gone: () => exitOf(child) }, `private kube-apiserver at ${url} ready`);
}

export async function startPrivateApiserver(): Promise<PrivateApiserver> {
  const dir = mkdtempSync(join(tmpdir(), 'kube-apiserver-'));
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const prefix = `/registry-${randomBytes(4).toString('hex')}`;
  const shared = adminKubeConfig();
  const token = shared.getCurrentUser()!.token!;
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn('bash', [KUBE_SH, 'run-apiserver', dir, String(port), infra('KUBE_ETCD_URL'), prefix], { stdio: 'ignore' });
    await waitReady(url, token, child);
  };
  await launch();
  const admin = new KubeConfig();
  admin.loadFromOptions({
    clusters: [{ name: 'private', server: url, caFile: join(dir, 'certs', 'apiserver.crt') }],
    users: [{ name: 'admin', token }],
    contexts: [{ name: 'private', cluster: 'private', user: 'admin' }],
    currentContext: 'private',
  });
  return {
    url,
    admin,
    kill() {
      child?.kill('SIGKILL');
      child = undefined;
    },
    start: launch,
    close() {
      child?.kill('SIGKILL');
      child = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
