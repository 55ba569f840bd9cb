import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import { parseManifests, prepareCharts, type Charts, type K8sObject } from './support/helm.js';
import { kubernetesValidator, kubernetesVersions, prometheusOperatorValidators, schemaProblems } from './support/k8s-schemas.js';
import { configMapOf, forComponent, ofKind, type Container, type Deployment } from './support/manifests.js';
import { configVariables, repoRoot } from './support/service-config.js';
import { parseGraphAnnotations } from '../../services/graph-controller/src/reconcile/annotations.js';

/**
 * The plain manifests in k8s/ (the controller's RBAC and Deployment, an example annotated
 * Service) against the chart: both must ask for the same permissions, run the controller the same
 * secure way, set only variables it reads, and annotate Services the way the controller parses.
 */

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
type Role = K8sObject & { rules: Rule[] };

function k8sObjects(dir: string): K8sObject[] {
  const base = join(repoRoot, 'k8s', dir);
  return readdirSync(base)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) => parseManifests(readFileSync(join(base, file), 'utf8')));
}

/** Rules as comparable sets: one entry per group/resource/verb/name. */
function permissions(rules: readonly Rule[]): string[] {
  return rules
    .flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource} ${verb}${rule.resourceNames ? ` [${rule.resourceNames.join(',')}]` : ''}`))))
    .sort();
}

let charts: Charts;
let chart: K8sObject[];
const plain = k8sObjects('graph-controller');
const examples = k8sObjects('examples');

beforeAll(async () => {
  charts = await prepareCharts();
  chart = await charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], release: 'sp' });
}, 60_000);

afterAll(() => charts?.close());

describe('k8s/ manifests', () => {
  it('should validate against the Kubernetes OpenAPI schemas', () => {
    const validators = { kubernetes: kubernetesVersions.map((version) => kubernetesValidator(version)), crds: prometheusOperatorValidators() };
    expect(plain.map((object) => object.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Role', 'RoleBinding', 'ServiceAccount']);
    expect(schemaProblems([...plain, ...examples], validators)).toEqual([]);
  });

  it('should grant the controller the same permissions as the chart', () => {
    const clusterRole = (objects: K8sObject[]): string[] => permissions(ofKind<Role>(objects, 'ClusterRole').flatMap((role) => role.rules));
    expect(clusterRole(plain)).toEqual(clusterRole(chart));
    const leaseRules = (objects: K8sObject[], leaseName: string): string[] =>
      permissions(ofKind<Role>(objects, 'Role').flatMap((role) => role.rules)).map((entry) => entry.replace(`[${leaseName}]`, '[<lease>]').replace(`[${leaseName}-registrations]`, '[<lease>-registrations]'));
    const lease = (objects: K8sObject[]): string => {
      const deployment = ofKind<Deployment>(objects, 'Deployment').find((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'graph-controller')!;
      const env = deployment.spec.template.spec.containers[0]!.env ?? [];
      return env.find((e) => e.name === 'Controller__LeaseName')?.value ?? configMapOf(objects, deployment).Controller__LeaseName ?? '';
    };
    expect(leaseRules(plain, lease(plain))).toEqual(leaseRules(chart, lease(chart)));
  });

  it('should run the controller as securely as the chart does, with the same probes', () => {
    const plainPod = ofKind<Deployment>(plain, 'Deployment')[0]!.spec.template.spec;
    const chartPod = forComponent<Deployment>(chart, 'Deployment', 'graph-controller')!.spec.template.spec;
    expect(plainPod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(plainPod.automountServiceAccountToken).toBe(chartPod.automountServiceAccountToken);
    const plainContainer: Container = plainPod.containers[0]!;
    const chartContainer: Container = chartPod.containers[0]!;
    expect(plainContainer.securityContext).toMatchObject(chartContainer.securityContext!);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
      expect({ probe, handler: plainContainer[probe]?.httpGet }).toEqual({ probe, handler: chartContainer[probe]?.httpGet });
    }
    expect(plainContainer.ports?.find((p) => p.name === 'management')?.containerPort).toBe(chartContainer.ports?.find((p) => p.name === 'management')?.containerPort);
  });

  it('should set only variables the controller reads, its required ones, and its API key from the same Secret key as the chart', async () => {
    const known = await configVariables('graph-controller');
    const plainEnv = ofKind<Deployment>(plain, 'Deployment')[0]!.spec.template.spec.containers[0]!.env ?? [];
    const names = plainEnv.map((e) => e.name);
    expect(names.filter((name) => !known.all.has(name))).toEqual([]);
    expect([...known.required].filter((name) => !names.includes(name))).toEqual([]);
    const chartDeployment = forComponent<Deployment>(chart, 'Deployment', 'graph-controller')!;
    const chartKey = chartDeployment.spec.template.spec.containers[0]!.env?.find((e) => e.name === 'Registry__ApiKey')?.valueFrom?.secretKeyRef?.key;
    expect(plainEnv.find((e) => e.name === 'Registry__ApiKey')?.valueFrom?.secretKeyRef?.key).toBe(chartKey);
  });

  it('should annotate the example Service the way the controller parses and the chart renders', async () => {
    const service = ofKind(examples, 'Service')[0]! as unknown as V1Service;
    expect(parseGraphAnnotations({ ...service, metadata: { ...service.metadata, namespace: 'shop' } })).toEqual({
      kind: 'graph',
      name: 'orders',
      url: 'http://orders-graphql.shop.svc.cluster.local:8080/graphql',
    });
    const annotated = await charts.render({ set: ['cache.service.graphAnnotations.enabled=true', 'cache.service.graphAnnotations.name=orders', 'cache.service.graphAnnotations.port=grpc'] });
    const keys = (annotations: Record<string, string> | undefined): string[] => Object.keys(annotations ?? {}).filter((key) => key.startsWith('graph-registry.io/')).sort();
    expect(keys(forComponent(annotated, 'Service', 'cache')!.metadata.annotations)).toEqual(keys(service.metadata?.annotations));
  });
});
