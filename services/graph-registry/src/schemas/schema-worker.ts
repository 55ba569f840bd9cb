// The worker thread of schema-checker.ts: checks and compares schemas off the registry's event
// loop. Imports name their .ts sources (rewritten to .js by tsc), so the thread also runs from
// the sources in tests, under Node's type stripping.
import { parentPort } from 'node:worker_threads';
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { SchemaChangeReport } from '@sp/graphs';
import { compareSchemas, emptyReport } from './schema-changes.ts';
import { checkSdl, SchemaTooComplex } from './schema-sdl.ts';
import type { SchemaJob, SchemaJobResult } from './schema-job.ts';
import type * as CompositionModule from '../federation/composition.ts';

type Composition = typeof CompositionModule;

// graphql-js makes one Error per problem it finds; their stack traces are never shown, and
// capturing one per error cost more than the check itself for a schema with many problems.
Error.stackTraceLimit = 0;

/** The stored schema a new one follows; it was checked when stored, so it is built without checks again. */
function previousSchema(sdl: string): GraphQLSchema | undefined {
  try {
    return buildSchema(sdl, { assumeValid: true, assumeValidSDL: true });
  } catch {
    return undefined; // not buildable (written to Redis by hand): the report then lists nothing
  }
}

function reportAgainst(previous: string, schema: GraphQLSchema): SchemaChangeReport {
  const before = previousSchema(previous);
  return before === undefined ? emptyReport() : compareSchemas(before, schema);
}

function check(sdl: string, previous: string | undefined): SchemaJobResult {
  const { schema, problems } = checkSdl(sdl);
  if (schema === undefined || previous === undefined) return { kind: 'checked', problems };
  return { kind: 'checked', problems, report: reportAgainst(previous, schema) };
}

/**
 * The composition library, loaded with the first federation job: it doubles the worker's start
 * (~300 ms more on an idle core), which a registry without subgraphs never needs.
 */
let composition: Promise<Composition> | undefined;
const federation = (): Promise<Composition> => (composition ??= import('../federation/composition.ts'));

async function run(job: SchemaJob): Promise<SchemaJobResult> {
  try {
    if (job.kind === 'compose') return (await federation()).composeSubgraphs(job.subgraphs, job.previousApi, job.checked);
    if (job.kind === 'subgraph-diff') return { kind: 'checked', problems: [], report: (await federation()).subgraphDiff(job.name, job.before, job.after) };
    return check(job.sdl, job.previous);
  } catch (err) {
    if (err instanceof SchemaTooComplex) return { kind: 'too-complex', message: err.message };
    throw err;
  }
}

const port = parentPort;
if (port === null) throw new Error('schema-worker runs as a worker thread only');
// One job at a time (the checker sends the next after this answer), so answers stay in order.
port.on('message', (job: SchemaJob) => void run(job).then((result) => port.postMessage(result)));
port.postMessage({ kind: 'ready' } satisfies SchemaJobResult);
