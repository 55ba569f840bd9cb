import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/platform';

/** A version with its SDL and its change report against `previousVersion`. */
export interface StoredSchemaVersion extends SchemaVersionInfo {
  sdl: string;
  report: SchemaChangeReport;
}

/** The newest version, or the schema stored before versions existed (version 0), or nothing. */
export interface LatestSchema {
  version: number;
  sdl?: string;
}

/**
 * A schema's history as it is read: the registry's own schema (`/schema`) and each subgraph's
 * (`/{name}/schema`, whose versions are appended together with the supergraph's: federation/).
 */
export interface SchemaHistory {
  latest(): Promise<LatestSchema>;
  /** Up to `limit` versions older than `before` (all when undefined), newest first. */
  list(before: number | undefined, limit: number): Promise<SchemaVersionInfo[]>;
  get(version: number): Promise<StoredSchemaVersion | undefined>;
}

/**
 * The registry's own schema history, beside the current schema (`graph:schema`, which every
 * append also sets). Implementations: redis-schema-versions (one Lua script per append, so
 * concurrent publishes on every replica get consecutive numbers) and memory-schema-versions
 * (local runs).
 */
export interface SchemaVersions extends SchemaHistory {
  /**
   * Stores `entry` as version `expected + 1`, sets the current schema, and drops the oldest
   * versions beyond `keep`, all at once; false (nothing written) when the newest version is no
   * longer `expected`, because another publish came first.
   */
  append(expected: number, entry: StoredSchemaVersion, keep: number): Promise<boolean>;
}

/** The fields of a stored version that its listing shows. */
export function infoOf(entry: StoredSchemaVersion): SchemaVersionInfo {
  const { version, sha256, publishedAt, publisher, previousVersion, rollbackOf, counts } = entry;
  return { version, sha256, publishedAt, publisher, previousVersion, rollbackOf, counts };
}
