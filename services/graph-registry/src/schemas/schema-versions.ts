import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/graphs';

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
 * A numbered log whose entries' SchemaPublishedEvents are sent in order by an announcer
 * (schema-announcer.ts): the registry's own schema versions, and the supergraph versions (whose
 * subgraph publishes are announced). Entries stored before this was recorded count as sent.
 */
export interface AnnouncementLog {
  /** `announced`: the highest entry whose event was sent (or that had none to send); `last`: the highest stored. */
  announcement(): Promise<{ announced: number; last: number }>;
  /**
   * Records that the events of the entries after `from` up to `to` were sent, when `from` is
   * the number recorded and `token` holds the announcer's lease; false (nothing written) otherwise.
   */
  markAnnounced(token: string, from: number, to: number): Promise<boolean>;
  /** Takes the announcer's lease for `ttlMs`, or extends it when `token` holds it; false while another holder has it. */
  leaseAnnouncer(token: string, ttlMs: number): Promise<boolean>;
  releaseAnnouncer(token: string): Promise<void>;
}

/**
 * The registry's own schema history, beside the current schema (`graph:schema`, which every
 * append also sets), and how far its SchemaPublishedEvents were sent. Implementations:
 * redis-schema-versions (one Lua script per append, so concurrent publishes on every replica get
 * consecutive numbers) and memory-schema-versions (local runs).
 */
export interface SchemaVersions extends SchemaHistory, AnnouncementLog {
  /**
   * Stores `entry` as version `expected + 1`, sets the current schema, and drops the oldest
   * versions beyond `keep`, all at once; false (nothing written) when the newest version is no
   * longer `expected`, because another publish came first. `eventPending`: its event is still to
   * be sent (an announcer will); otherwise (no broker configured) it counts as sent when nothing
   * before it is pending.
   */
  append(expected: number, entry: StoredSchemaVersion, keep: number, eventPending: boolean): Promise<boolean>;
}

/** The fields of a stored version that its listing shows. */
export function infoOf(entry: StoredSchemaVersion): SchemaVersionInfo {
  const { version, sha256, publishedAt, publisher, previousVersion, rollbackOf, counts } = entry;
  return { version, sha256, publishedAt, publisher, previousVersion, rollbackOf, counts };
}
