import type { V1Service } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../reconcile/annotations.js';

const GRAPH_ANNOTATION_PREFIX = 'graph-registry.io/';

/**
 * The part of a Service the controller reads: its identity, its graph annotations and, when it
 * opts in, the ports and type that resolve `graph-registry.io/port`. The informers keep this
 * instead of the whole object (managedFields, other annotations, selectors, status…), so the cache
 * of a large cluster stays small. The resourceVersion stays: the informer resumes from it.
 * Annotations live in the metadata, but the port needs `spec.ports`, so Services are watched
 * whole and trimmed on arrival rather than watched as metadata and read again on every change.
 */
export function projectService(raw: V1Service): V1Service {
  const { metadata = {}, spec } = raw;
  const identity = { name: metadata.name, namespace: metadata.namespace, resourceVersion: metadata.resourceVersion };
  const annotations = Object.entries(metadata.annotations ?? {}).filter(([key]) => key.startsWith(GRAPH_ANNOTATION_PREFIX));
  if (!annotations.some(([key]) => key === ANNOTATIONS.name)) return { metadata: identity };
  return {
    metadata: { ...identity, uid: metadata.uid, creationTimestamp: metadata.creationTimestamp, annotations: Object.fromEntries(annotations) },
    spec: { type: spec?.type, clusterIP: spec?.clusterIP, ports: spec?.ports?.map(({ name, port }) => ({ name, port })) },
  };
}
