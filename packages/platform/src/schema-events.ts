import type { PlatformEvent } from './kafka-publisher.js';

/** Changes of a schema version against the one it followed, by class. */
export interface SchemaChangeCounts {
  breaking: number;
  dangerous: number;
  safe: number;
}

/** The graph registry published a new schema version (the SchemaPublishedEvent of docs/asyncapi.yaml). */
export interface SchemaPublished {
  version: number;
  /** SHA-256 of the SDL, hex. */
  sha256: string;
  previousVersion: number | null;
  /** The version whose SDL a rollback published again. */
  rollbackOf: number | null;
  publishedAt: string;
  /** Fingerprint of the publishing API key. */
  publisher: string;
  changes: SchemaChangeCounts;
}

/**
 * Key: `graph:schema`, so every version is on one partition, in order. CloudEvents id:
 * `SchemaPublishedEvent:{version}`: a version is published once; a republication after a failure
 * carries the same id.
 */
export function schemaPublishedEvent(data: SchemaPublished): PlatformEvent {
  return { type: 'SchemaPublishedEvent', key: 'graph:schema', id: `SchemaPublishedEvent:${data.version}`, data: { ...data, changes: { ...data.changes } } };
}
