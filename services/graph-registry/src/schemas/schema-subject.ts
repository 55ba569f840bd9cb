import type { SchemaChangeReport } from '@sp/graphs';
import type { SchemaAnnouncer } from './schema-announcer.js';
import { schemaChecksBusy, type SchemaChecker } from './schema-checker.js';
import type { CompositionError } from './schema-job.js';
import type { SdlProblem } from './schema-sdl.js';
import type { LatestSchema, SchemaHistory, SchemaVersions, StoredSchemaVersion } from './schema-versions.js';

/** The supergraph version a subgraph publish composed (federation/). */
export interface ComposedRef {
  version: number;
  id: string;
}

/** What checking a schema against its subject found, before anything is written. */
export type Evaluation =
  | { kind: 'invalid'; problems: SdlProblem[] }
  /** A subgraph's schema that does not compose with the others. */
  | { kind: 'not-composable'; errors: CompositionError[] }
  | {
      kind: 'valid';
      /** Changes of what clients see: the schema's own, or the supergraph's public API for a subgraph. */
      report: SchemaChangeReport;
      /** Stores the version (and what goes with it); undefined when another publish came first. */
      store(entry: StoredSchemaVersion): Promise<{ composed?: ComposedRef } | undefined>;
    };

/**
 * A schema with versions: the registry's own (`/schema`) or a subgraph's (`/{name}/schema`). The
 * publisher (schema-publisher.ts) runs one flow for both — unchanged, checked, compared, dry run,
 * policy, append with compare-and-set, event — and asks the subject only what differs.
 */
export interface SchemaSubject {
  /** The graph whose schema this is; null for the registry's own. */
  graph: string | null;
  /** Where its versions are served (`/schema`, `/{name}/schema`). */
  path: string;
  history: SchemaHistory;
  /** Checks `sdl` off the event loop and compares it with `latest` (a subgraph's: composes it with the others). */
  evaluate(sdl: string, latest: LatestSchema, publisher: string): Promise<Evaluation>;
  /** The changes from one SDL of this subject to another (`GET …/diff`), off the event loop. */
  diff(before: string, after: string): Promise<SchemaChangeReport>;
  /** Runs `task` when no other publish it could race with runs. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /** Sends the SchemaPublishedEvent of the stored version `version` (and those before it not sent yet), in order. */
  announce(version: number, composed: ComposedRef | undefined): Promise<void>;
}

/** Publishes waiting for this process' previous ones; past it a publish is answered 503. */
const MAX_WAITING = 64;

/** Runs tasks one at a time in arrival order; at most MAX_WAITING wait (then 503). */
export function createTurns(): <T>(task: () => Promise<T>) => Promise<T> {
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  return <T>(task: () => Promise<T>): Promise<T> => {
    if (waiting >= MAX_WAITING) return Promise.reject(schemaChecksBusy());
    waiting += 1;
    const result = queue.then(task).finally(() => (waiting -= 1));
    queue = result.catch(() => undefined);
    return result;
  };
}

/** The registry's own schema: checked and compared by graphql-js in the worker, appended to its history; its events sent by `announcer` (none: no events). */
export function ownSchemaSubject(versions: SchemaVersions, checker: SchemaChecker, keep: number, announcer?: SchemaAnnouncer): SchemaSubject {
  return {
    graph: null,
    path: '/schema',
    history: versions,
    async evaluate(sdl, latest) {
      const { problems, report } = await checker.compare(sdl, latest.sdl);
      if (problems.length > 0) return { kind: 'invalid', problems };
      return { kind: 'valid', report, store: async (entry) => ((await versions.append(latest.version, entry, keep, announcer !== undefined)) ? {} : undefined) };
    },
    diff: async (before, after) => (await checker.compare(after, before)).report,
    exclusive: createTurns(),
    announce: async (version) => announcer?.announceThrough(version),
  };
}
