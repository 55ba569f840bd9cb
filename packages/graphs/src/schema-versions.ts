/**
 * The graph registry's records of schema versions, as its HTTP API answers them
 * (services/graph-registry/openapi.yaml: SchemaVersionInfo, ChangeReport) and its events carry
 * them: one definition for the registry, its events and the registry CLI (type-only there).
 */

export type SchemaChangeClass = 'breaking' | 'dangerous' | 'safe';

/** One difference between two schemas, as the change report lists it. */
export interface SchemaChangeEntry {
  class: SchemaChangeClass;
  /** graphql-js' change type, e.g. `FIELD_REMOVED`. */
  kind: string;
  /** The schema coordinate changed, e.g. `Query.user(id:)`; null when graphql-js' message names none. */
  coordinate: string | null;
  message: string;
}

/** Changes of a schema version against the one it followed, by class. */
export interface SchemaChangeCounts {
  breaking: number;
  dangerous: number;
  safe: number;
}

export interface SchemaChangeReport {
  changes: SchemaChangeEntry[];
  counts: SchemaChangeCounts;
}

/** What the history keeps of a published schema, without its text (GET /schema/versions). */
export interface SchemaVersionInfo {
  /** 1, 2, 3…: consecutive, never reused, also after old versions were dropped. */
  version: number;
  /** SHA-256 of the SDL's UTF-8 bytes, hex. */
  sha256: string;
  publishedAt: string;
  /** Fingerprint of the API key that published it (never the key). */
  publisher: string;
  /** The version this one followed and was compared with; null for the first. */
  previousVersion: number | null;
  /** The version whose SDL a rollback published again; null otherwise. */
  rollbackOf: number | null;
  counts: SchemaChangeCounts;
}
