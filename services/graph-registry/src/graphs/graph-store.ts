import type { FederationStore } from '../federation/federation-store.js';
import type { SchemaVersions } from '../schemas/schema-versions.js';

/**
 * Where graph URLs and the schema are kept. Implementations: redis-graph-store (the real one,
 * records `graph:{name}` and `graph:schema`) and memory-graph-store (local runs only).
 * Every method rejects with a 503 AppError when the backend cannot be reached.
 */
export interface GraphStore {
  /** Names the backend in readiness reports and logs. */
  readonly name: string;
  getUrl(name: string): Promise<string | undefined>;
  setUrl(name: string, url: string): Promise<void>;
  /** True when a URL was stored under the name and is now removed. */
  deleteUrl(name: string): Promise<boolean>;
  /**
   * Every registered graph, by name, names ascending, in pages of at most LIST_PAGE_SIZE: a caller
   * can answer page by page, and the URLs (up to 64 KiB each) of every graph are never all in
   * memory at once.
   */
  listUrls(): AsyncIterable<Map<string, string>>;
  /** Number of registered graphs (for metrics). */
  countGraphs(): Promise<number>;
  getSchema(): Promise<string | undefined>;
  /** Sets the current schema without a version (tests and tools; the API publishes through `versions`). */
  setSchema(sdl: string): Promise<void>;
  /** The schema's versions; each append also sets the current schema. */
  readonly versions: SchemaVersions;
  /** The subgraph schemas of the graphs and the supergraph composed from them. */
  readonly federation: FederationStore;
  /** Size of the stored schema in bytes, 0 when none (for metrics). */
  schemaBytes(): Promise<number>;
  /** Readiness: rejects when the backend is unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** Graphs per page of `listUrls`. */
export const LIST_PAGE_SIZE = 100;
