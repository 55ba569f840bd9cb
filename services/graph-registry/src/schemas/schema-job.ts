import type { SchemaChangeReport } from '@sp/graphs';
import type { SdlProblem } from './schema-sdl.ts';

/** A subgraph as composition takes it: its name, routing URL and SDL. */
export interface SubgraphInput {
  name: string;
  url: string;
  sdl: string;
}

/** One reason a set of subgraphs does not compose (the composition library's error, made plain). */
export interface CompositionError {
  message: string;
  /** The library's code, e.g. `FIELD_TYPE_MISMATCH`, `KEY_INVALID_FIELDS`. */
  code: string;
  /** The schema coordinate the error is about (`Client.id`, `Plan`), when its message names one. */
  coordinate: string | null;
  /** The subgraph the error is located in, when the library says. */
  subgraph: string | null;
}

/** What a composition produced: the artifacts a gateway reads, each with the SHA-256 (hex) of its UTF-8 bytes. */
export interface ComposedArtifacts {
  /** The supergraph SDL (what Hive Gateway and Apollo Router read). */
  supergraph: string;
  /** The public API schema: what clients of the gateway see. */
  sdl: string;
  /** `[{"name","sdl","url"}, …]`, as Hive's CDN serves `services`. */
  services: string;
  sha256: { supergraph: string; sdl: string; services: string };
}

/**
 * What the main thread asks a schema worker:
 * - `check`: check `sdl` and, when valid, compare it with `previous`;
 * - `compose`: compose the subgraphs into a supergraph and compare its public API with `previousApi`;
 * - `subgraph-diff`: the changes between two SDLs of one subgraph, each composed on its own.
 */
export type SchemaJob =
  | { kind: 'check'; sdl: string; previous?: string }
  | { kind: 'compose'; subgraphs: SubgraphInput[]; previousApi?: string; checked: string }
  | { kind: 'subgraph-diff'; name: string; before: string; after: string };

/** What a schema worker answers: once `ready` when started, then one answer per job, in order. */
export type SchemaJobResult =
  | { kind: 'ready' }
  /** `report` only when the schema is valid and a previous one was given. */
  | { kind: 'checked'; problems: SdlProblem[]; report?: SchemaChangeReport }
  /** Past a complexity limit of SCHEMA_LIMITS. */
  | { kind: 'too-complex'; message: string }
  | { kind: 'composed'; artifacts: ComposedArtifacts; report: SchemaChangeReport }
  | { kind: 'not-composable'; errors: CompositionError[] };
