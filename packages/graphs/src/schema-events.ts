import type { PlatformEvent } from '@sp/messaging';
import type { SchemaChangeCounts, SchemaVersionInfo } from './schema-versions.js';

/**
 * The graph registry published a new schema version (the SchemaPublishedEvent of
 * docs/asyncapi.yaml): its record, the counts as `changes`; for a subgraph's schema also the
 * graph's name and the supergraph version composed with it.
 */
export type SchemaPublished = Omit<SchemaVersionInfo, 'counts'> & { changes: SchemaChangeCounts; graph?: string; supergraphVersion?: number };

/**
 * Key: `graph:schema` for the registry's own schema, `graph:schema:{graph}` for a subgraph's, so
 * the versions of one schema are on one partition, in order. CloudEvents id:
 * `SchemaPublishedEvent:{version}` (`SchemaPublishedEvent:{graph}:{version}`): a version is
 * published once; a republication after a failure carries the same id.
 */
export function schemaPublishedEvent(data: SchemaPublished): PlatformEvent {
  const subject = data.graph === undefined ? '' : `:${data.graph}`;
  return { type: 'SchemaPublishedEvent', key: `graph:schema${subject}`, id: `SchemaPublishedEvent${subject}:${data.version}`, data: { ...data, changes: { ...data.changes } } };
}
