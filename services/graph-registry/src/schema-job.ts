import type { SdlProblem } from './schema-sdl.ts';

/** What the main thread asks a schema worker. */
export interface SchemaJob {
  sdl: string;
}

/** What a schema worker answers: once `ready` when started, then one answer per job, in order. */
export type SchemaJobResult =
  | { kind: 'ready' }
  | { kind: 'checked'; problems: SdlProblem[] }
  /** Past a complexity limit of SCHEMA_LIMITS. */
  | { kind: 'too-complex'; message: string };
