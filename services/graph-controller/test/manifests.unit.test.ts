import { describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import { parseGraphAnnotations } from '../src/reconcile/annotations.js';
import { loadConfig, SERVICE_ACCOUNT_NAMESPACE_FILE } from '../src/config.js';
import { recordName } from '../src/ownership/ownership-records.js';
import { allows, manifests, type K8sDoc, type PolicyRule } from './support/rbac.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  ports: Array<{ name: string; containerPort: number }>;
  env: EnvVar[];
  securityContext: Record<string, unknown>;
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
}
type Deployment = K8sDoc & { spec: { replicas: number; template: { spec: { serviceAccountName: string; automountServiceAccountToken: boolean; securityContext: Record<string, unknown>; containers: Container[] } } } };
type Role = K8sDoc & { rules: PolicyRule[] };
type Binding = K8sDoc & { roleRef: { kind: string; name: string }; subjects: Array<{ kind: string; name: string; namespace?: string }> };

const objects = manifests('graph-controller');
const one = <T extends K8sDoc>(kind: string): T => {
  const found = objects.filter((object) => object.kind === kind);
  expect(found).toHaveLength(1);
  return found[0] as T;
};
const deployment = one<Deployment>('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0]!;

/** The container's environment as the kubelet would give it, with the pod in namespace `platform`. */
function resolvedEnv(): Record<string, string> {
  const env: Record<string, string> = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
  for (const variable of container.env) {
    const field = variable.valueFrom?.fieldRef?.fieldPath;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (field) env[variable.name] = field === 'metadata.namespace' ? 'platform' : 'graph-controller-5d8f-x2k';
    else if (variable.valueFrom?.secretKeyRef) env[variable.name] = 'api-key-from-secret';
  }
  return env;
}

describe('k8s/graph-controller', () => {
  it('should configure the controller with variables its configuration accepts', () => {
    const inCluster = { fileExists: (path: string) => path === SERVICE_ACCOUNT_NAMESPACE_FILE, readFile: () => 'platform', hostname: () => 'pod', homedir: () => '/home/node' };
    const config = loadConfig(resolvedEnv(), inCluster);
    expect(config).toMatchObject({
      registry: { url: 'http://graph-registry:5145', apiKey: 'api-key-from-secret' },
      namespaces: [],
      kubeSource: 'in-cluster',
      leaderElection: { leaseName: 'graph-controller', leaseNamespace: 'platform', identity: 'graph-controller-5d8f-x2k' },
      managementPort: container.ports[0]!.containerPort,
    });
    expect(container.env.find((variable) => variable.name === 'Registry__ApiKey')!.valueFrom!.secretKeyRef).toEqual({ name: 'graph-registry', key: 'MONITOR_API_KEY' });
  });

  it('should probe the management port and run non-root on a read-only filesystem', () => {
    expect(container.ports).toEqual([{ name: 'management', containerPort: 9464, protocol: 'TCP' }]);
    expect([container.startupProbe, container.livenessProbe, container.readinessProbe].map((probe) => probe.httpGet)).toEqual([
      { path: '/livez', port: 'management' },
      { path: '/livez', port: 'management' },
      { path: '/readyz', port: 'management' },
    ]);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
  });

  it('should grant list/watch on Services, create/patch on Events, the Lease and its ownership records, nothing more', () => {
    expect(one<Role>('ClusterRole').rules).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    const leaseName = container.env.find((variable) => variable.name === 'Controller__LeaseName')!.value!;
    const lease = one<Role>('Role').rules;
    expect(allows(lease, { group: 'coordination.k8s.io', resource: 'leases', verb: 'create' })).toBe(true);
    for (const verb of ['get', 'update']) {
      expect(allows(lease, { group: 'coordination.k8s.io', resource: 'leases', verb, name: leaseName })).toBe(true);
      expect(allows(lease, { group: 'coordination.k8s.io', resource: 'leases', verb, name: 'someone-elses-lease' })).toBe(false);
    }
    expect(allows(lease, { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', name: leaseName })).toBe(false);
    // One record per name, names unknown in advance: list, create, update and delete in the namespace.
    for (const verb of ['list', 'create']) expect(allows(lease, { group: '', resource: 'configmaps', verb })).toBe(true);
    for (const verb of ['update', 'delete']) expect(allows(lease, { group: '', resource: 'configmaps', verb, name: recordName(leaseName, 'orders') })).toBe(true);
    // get only of the single ConfigMap of records older versions kept (moved over once).
    expect(allows(lease, { group: '', resource: 'configmaps', verb: 'get', name: `${leaseName}-registrations` })).toBe(true);
    expect(allows(lease, { group: '', resource: 'configmaps', verb: 'get', name: 'someone-elses-config' })).toBe(false);
    for (const verb of ['watch', 'patch', 'deletecollection']) expect(allows(lease, { group: '', resource: 'configmaps', verb })).toBe(false);
    expect(allows(lease, { group: '', resource: 'secrets', verb: 'list' })).toBe(false);
  });

  it('should bind both roles to the Deployment\'s ServiceAccount', () => {
    const account = one<K8sDoc & { automountServiceAccountToken: boolean }>('ServiceAccount');
    expect(pod.serviceAccountName).toBe(account.metadata.name);
    expect(pod.automountServiceAccountToken).toBe(true);
    const clusterBinding = one<Binding>('ClusterRoleBinding');
    expect(clusterBinding.roleRef).toMatchObject({ kind: 'ClusterRole', name: one('ClusterRole').metadata.name });
    expect(clusterBinding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: 'platform' }]);
    const binding = one<Binding>('RoleBinding');
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: one('Role').metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name }]); // the binding's own namespace
  });

  it('should set no namespace on namespaced objects, so they apply to any namespace', () => {
    expect(objects.filter((object) => object.metadata.namespace !== undefined)).toEqual([]);
  });
});

describe('k8s/examples/annotated-service.yaml', () => {
  it('should be a Service the controller registers', () => {
    const [example] = manifests('examples').filter((object) => object.kind === 'Service') as unknown as V1Service[];
    expect(parseGraphAnnotations({ ...example!, metadata: { ...example!.metadata, namespace: 'shop' } })).toEqual({
      kind: 'graph',
      name: 'orders',
      url: 'http://orders-graphql.shop.svc.cluster.local:8080/graphql',
    });
  });
});
