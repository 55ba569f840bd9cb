// The worker thread of schema-checker.ts: checks schemas off the registry's event loop. Imports
// name their .ts sources (rewritten to .js by tsc), so the thread also runs from the sources in
// tests, under Node's type stripping.
import { parentPort } from 'node:worker_threads';
import { checkSdl, SchemaTooComplex } from './schema-sdl.ts';
import type { SchemaJob, SchemaJobResult } from './schema-job.ts';

// graphql-js makes one Error per problem it finds; their stack traces are never shown, and
// capturing one per error cost more than the check itself for a schema with many problems.
Error.stackTraceLimit = 0;

function run(job: SchemaJob): SchemaJobResult {
  try {
    return { kind: 'checked', problems: checkSdl(job.sdl).problems };
  } catch (err) {
    if (err instanceof SchemaTooComplex) return { kind: 'too-complex', message: err.message };
    throw err;
  }
}

const port = parentPort;
if (port === null) throw new Error('schema-worker runs as a worker thread only');
port.on('message', (job: SchemaJob) => port.postMessage(run(job)));
port.postMessage({ kind: 'ready' } satisfies SchemaJobResult);
