import type { V1Service } from '@kubernetes/client-node';
import type { KubeObject } from '../../../../test/support/fake-kube-api.js';

export interface ServiceInput {
  name: string;
  namespace?: string;
  annotations?: Record<string, string>;
  /** Default: one port named `http`, 8080. */
  ports?: Array<{ name?: string; port: number }>;
  /** creationTimestamp (RFC 3339); default 2026-01-01T00:00:00Z. */
  created?: string;
  clusterIP?: string;
  type?: string;
}

/** A Service as the informer's list hands it over (creationTimestamp deserialized to a Date). */
export function service(input: ServiceInput): V1Service {
  return {
    metadata: {
      name: input.name,
      namespace: input.namespace ?? 'default',
      uid: `uid-${input.namespace ?? 'default'}-${input.name}`,
      creationTimestamp: new Date(input.created ?? '2026-01-01T00:00:00Z'),
      annotations: input.annotations,
    },
    spec: {
      type: input.type ?? 'ClusterIP',
      clusterIP: input.clusterIP,
      ports: input.ports ?? [{ name: 'http', port: 8080 }],
    },
  };
}

/** The same Service as JSON, as a watch event carries it and as the fake API server stores it. */
export function serviceObject(input: ServiceInput): KubeObject {
  const object = JSON.parse(JSON.stringify(service(input))) as KubeObject;
  if (input.created === undefined) delete object.metadata.creationTimestamp; // the API server sets it
  delete object.metadata.uid;
  return object;
}

/** The graph annotation set, for brevity. */
export function graph(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'graph-registry.io/name': name, ...extra };
}
