import type { SchemaChangeReport } from '@sp/platform';
import type { SdlProblem } from './schema-sdl.ts';

/** What the main thread asks a schema worker: check `sdl` and, when valid, compare it with `previous`. */
export interface SchemaJob {
  sdl: string;
  /** The SDL `sdl` would follow (already checked when it was stored). */
  previous?: string;
}

/** What a schema worker answers: once `ready` when started, then one answer per job, in order. */
export type SchemaJobResult =
  | { kind: 'ready' }
  /** `report` only when the schema is valid and a previous one was given. */
  | { kind: 'checked'; problems: SdlProblem[]; report?: SchemaChangeReport }
  /** Past a complexity limit of SCHEMA_LIMITS. */
  | { kind: 'too-complex'; message: string };
