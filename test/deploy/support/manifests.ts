import type { K8sObject } from './helm.js';

/** Readers of rendered objects, typed only as far as the tests look. */

export interface Container {
  name: string;
  image: string;
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface Probe {
  httpGet?: { path: string; port: string | number };
  grpc?: { port: number; service?: string };
  [field: string]: unknown;
}

export interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken?: boolean;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: Record<string, unknown>; secret?: Record<string, unknown>; configMap?: Record<string, unknown> }[];
}

export interface Deployment extends K8sObject {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec } };
}

export function ofKind<T extends K8sObject = K8sObject>(objects: readonly K8sObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

/** The object of a kind for a component (`app.kubernetes.io/name`), or undefined. */
export function forComponent<T extends K8sObject = K8sObject>(objects: readonly K8sObject[], kind: string, component: string): T | undefined {
  return ofKind<T>(objects, kind).find((object) => object.metadata.labels?.['app.kubernetes.io/name'] === component);
}

export function component(object: K8sObject): string {
  return object.metadata.labels?.['app.kubernetes.io/name'] ?? '';
}

export function configMapOf(objects: readonly K8sObject[], deployment: Deployment): Record<string, string> {
  const name = deployment.spec.template.spec.containers[0]!.envFrom?.[0]?.configMapRef?.name;
  const map = ofKind<K8sObject & { data?: Record<string, string> }>(objects, 'ConfigMap').find((object) => object.metadata.name === name);
  return map?.data ?? {};
}

/** True when every label of the selector is on the object's labels. */
export function selects(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}
