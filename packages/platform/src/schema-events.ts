import type { PlatformEvent } from './kafka-publisher.js';
import type { SchemaChangeCounts, SchemaVersionInfo } from './schema-versions.js';

/** The graph registry published a new schema version (the SchemaPublishedEvent of docs/asyncapi.yaml): its record, the counts as `changes`. */
export type SchemaPublished = Omit<SchemaVersionInfo, 'counts'> & { changes: SchemaChangeCounts };

/**
 * Key: `graph:schema`, so every version is on one partition, in order. CloudEvents id:
 * `SchemaPublishedEvent:{version}`: a version is published once; a republication after a failure
 * carries the same id.
 */
export function schemaPublishedEvent(data: SchemaPublished): PlatformEvent {
  return { type: 'SchemaPublishedEvent', key: 'graph:schema', id: `SchemaPublishedEvent:${data.version}`, data: { ...data, changes: { ...data.changes } } };
}
