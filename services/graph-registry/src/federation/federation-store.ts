import type { SchemaChangeCounts, SchemaChangeReport } from '@sp/graphs';
import type { AnnouncementLog, SchemaHistory, StoredSchemaVersion } from '../schemas/schema-versions.js';

/** A subgraph as a supergraph version was composed from it. */
export interface SubgraphMember {
  name: string;
  /** The subgraph's schema version (`/{name}/schema/versions/{version}`). */
  version: number;
  /** Its routing URL: the graph's URL when the supergraph was composed. */
  url: string;
  /** SHA-256 of that version's SDL. */
  sha256: string;
}

/** The artifacts of a supergraph version, as Hive's CDN names them. */
export const ARTIFACT_KINDS = ['supergraph', 'sdl', 'services', 'metadata'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** What made a supergraph version: a subgraph's schema published (or rolled back), a subgraph removed, or a subgraph's URL changed. */
export interface SupergraphCause {
  kind: 'publish' | 'remove' | 'url';
  subgraph: string;
}

/** What the history keeps of a supergraph version, without its artifacts (`GET /supergraph/versions`). */
export interface SupergraphVersionInfo {
  /** 1, 2, 3…: consecutive, never reused, one line across every replica. */
  version: number;
  /** A UUID: the `x-hive-schema-version-id` of its artifacts and the `{versionId}` of their versioned paths. */
  id: string;
  /** SHA-256 of the supergraph SDL. */
  sha256: string;
  composedAt: string;
  /** Fingerprint of the API key whose request composed it. */
  publisher: string;
  previousVersion: number | null;
  cause: SupergraphCause;
  /** The subgraphs it was composed from, by name. */
  subgraphs: SubgraphMember[];
  /** Changes of the public API schema against `previousVersion`, by class. */
  counts: SchemaChangeCounts;
  /** The ETag of each artifact (a quoted SHA-256 of its bytes), computed when composed. */
  etags: Record<ArtifactKind, string>;
}

/** A supergraph version with its report and its artifacts' text. */
export interface StoredSupergraphVersion extends SupergraphVersionInfo {
  report: SchemaChangeReport;
  artifacts: Record<ArtifactKind, string>;
}

/** A subgraph change stored together with the supergraph version it leads to. */
export type SubgraphChange =
  /** Version `expected + 1` of the subgraph's schema. */
  | { kind: 'publish'; name: string; expected: number; entry: StoredSchemaVersion; keep: number }
  /** The subgraph leaves: its history is dropped (its last number is kept, so numbers are never reused). */
  | { kind: 'remove'; name: string }
  /** Only the supergraph changes (a subgraph's URL). */
  | { kind: 'none' };

/** One composition's writes, all or nothing. */
export interface FederationCommit {
  /** The supergraph version this one follows (0: none yet). */
  expected: number;
  supergraph: StoredSupergraphVersion;
  subgraph: SubgraphChange;
  /** Supergraph versions kept. */
  keep: number;
  /** A SchemaPublishedEvent is to be sent for it (a subgraph publish, with an announcer): see AnnouncementLog. */
  eventPending: boolean;
}

/**
 * Subgraph schemas and the supergraph composed from them. Implementations:
 * redis-federation-store (every key in one hash slot, `{graph:federation}`, so one script writes a
 * subgraph version and the supergraph version it leads to at once, also on a Redis Cluster) and
 * memory-federation-store (local runs). Every method rejects with a 503 AppError when the backend
 * cannot be reached. Its announcement log is the supergraph versions': a subgraph publish's
 * SchemaPublishedEvent is sent in supergraph version order (schemas/schema-announcer.ts).
 */
export interface FederationStore extends AnnouncementLog {
  /** The schema history of the subgraph `name`. */
  subgraph(name: string): SchemaHistory;
  /** The SDL of each subgraph at its version (undefined where it is no longer kept). */
  subgraphSdls(members: readonly Pick<SubgraphMember, 'name' | 'version'>[]): Promise<Array<string | undefined>>;
  /** The number of the newest supergraph version, 0 when none: one read, for the CDN's hot path. */
  lastSupergraph(): Promise<number>;
  supergraphInfo(version: number): Promise<SupergraphVersionInfo | undefined>;
  /** Up to `limit` supergraph versions older than `before` (all when undefined), newest first. */
  listSupergraphs(before: number | undefined, limit: number): Promise<SupergraphVersionInfo[]>;
  supergraphReport(version: number): Promise<SchemaChangeReport | undefined>;
  artifact(version: number, kind: ArtifactKind): Promise<string | undefined>;
  /** The version whose `id` this is, when it is kept. */
  versionOfId(id: string): Promise<number | undefined>;
  /**
   * Stores the supergraph version `commit.expected + 1` and the subgraph change at once; false
   * (nothing written) when the newest supergraph version is no longer `expected`, or the subgraph's
   * newest version no longer the one it follows: another composition came first.
   */
  commit(commit: FederationCommit): Promise<boolean>;
  /** The composer's lease: one composition at a time across replicas (`token` holds it for `ttlMs`). */
  acquireComposer(token: string, ttlMs: number): Promise<boolean>;
  releaseComposer(token: string): Promise<void>;
}

/** The listing's fields of a stored supergraph version. */
export function supergraphInfoOf(stored: StoredSupergraphVersion): SupergraphVersionInfo {
  const { version, id, sha256, composedAt, publisher, previousVersion, cause, subgraphs, counts, etags } = stored;
  return { version, id, sha256, composedAt, publisher, previousVersion, cause, subgraphs, counts, etags };
}

