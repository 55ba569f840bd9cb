import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type KubernetesObject, type V1Service } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { applyObjects, ensureNamespace, serviceAccountKubeConfig } from '../../../../test/support/kube-apiserver.js';
import { legacyRecordsName, RECORD_LABEL } from '../../src/ownership/ownership-records.js';
import { MANIFEST_DIR } from './rbac.js';

/** The namespace k8s/graph-controller/clusterrolebinding.yaml names for the controller's ServiceAccount. */
export const CONTROLLER_NAMESPACE = 'platform';

/** The RBAC objects of k8s/graph-controller (everything but the Deployment), as shipped. */
export function controllerRbacObjects(): KubernetesObject[] {
  const dir = join(MANIFEST_DIR, 'graph-controller');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => doc.toJS() as KubernetesObject))
    .filter((object) => object.kind !== 'Deployment');
}

/**
 * Applies k8s/graph-controller's ServiceAccount and RBAC to the API server (in `platform`, the
 * namespace its ClusterRoleBinding names) and returns a KubeConfig holding a token the API server
 * issued for that ServiceAccount: the controller can do exactly what the manifests grant.
 */
export async function controllerKubeConfig(admin: KubeConfig): Promise<KubeConfig> {
  await ensureNamespace(admin, CONTROLLER_NAMESPACE);
  await applyObjects(admin, controllerRbacObjects(), CONTROLLER_NAMESPACE);
  return serviceAccountKubeConfig(admin, CONTROLLER_NAMESPACE, 'graph-controller');
}

/** Removes the Lease and the ownership records between tests (a fresh start). */
export async function resetControllerState(admin: KubeConfig, leaseName = 'graph-controller'): Promise<void> {
  const ignoreMissing = (err: unknown): void => {
    if ((err as { code?: number }).code !== 404) throw err;
  };
  await admin.makeApiClient(CoordinationV1Api).deleteNamespacedLease({ name: leaseName, namespace: CONTROLLER_NAMESPACE }).catch(ignoreMissing);
  const core = admin.makeApiClient(CoreV1Api);
  await core.deleteNamespacedConfigMap({ name: legacyRecordsName(leaseName), namespace: CONTROLLER_NAMESPACE }).catch(ignoreMissing);
  await core.deleteCollectionNamespacedConfigMap({ namespace: CONTROLLER_NAMESPACE, labelSelector: `${RECORD_LABEL}=${leaseName}` });
}

/** A Service with one port (`http`, 8080) and the given annotations. */
export function serviceBody(name: string, annotations: Record<string, string> = {}): V1Service {
  return { metadata: { name, annotations }, spec: { ports: [{ name: 'http', port: 8080 }] } };
}
