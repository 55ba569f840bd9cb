// Runs in the schema worker (schemas/schema-worker.ts), never on the thread that answers lookups:
// composition costs O(total SDL) and more. Imports name their .ts sources (see the worker).
import { createHash } from 'node:crypto';
import { buildASTSchema, GraphQLError, type DocumentNode, type GraphQLSchema } from 'graphql';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import type { SchemaChangeReport } from '@sp/graphs';
import { compareSchemas, emptyReport } from '../schemas/schema-changes.ts';
import type { CompositionError, SchemaJobResult, SubgraphInput } from '../schemas/schema-job.ts';
import { parseSdl, problemOf, SCHEMA_LIMITS } from '../schemas/schema-sdl.ts';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Quoted words of a message that read as schema coordinates: `"Type"`, `"Type.field"`, `"@dir"`. */
const QUOTED_COORDINATE = /"(@?[_A-Za-z][_0-9A-Za-z]*(?:\.[_A-Za-z][_0-9A-Za-z]*)?)"/g;

/**
 * The coordinate a composition error is about. The library writes it into its messages (`Type of
 * field "Client.id" is incompatible…`, `On type "Plan", for @key(…)`) without returning it: the
 * first quoted `Type.field`, else the first quoted name that is not a subgraph's.
 */
export function coordinateOf(message: string, subgraphNames: ReadonlySet<string>): string | null {
  const words = [...message.matchAll(QUOTED_COORDINATE)].map((match) => match[1]!);
  return words.find((word) => word.includes('.')) ?? words.find((word) => !subgraphNames.has(word)) ?? null;
}

function compositionError(error: GraphQLError, subgraphNames: ReadonlySet<string>): CompositionError {
  const extensions = error.extensions as { code?: unknown; subgraphName?: unknown };
  const subgraph = typeof extensions.subgraphName === 'string' ? extensions.subgraphName : (/^\[([^\]]+)\]/.exec(error.message)?.[1] ?? null);
  return {
    message: error.message,
    code: typeof extensions.code === 'string' ? extensions.code : 'COMPOSITION_ERROR',
    coordinate: coordinateOf(error.message, subgraphNames),
    subgraph: subgraph !== null && subgraphNames.has(subgraph) ? subgraph : null,
  };
}

/** The previous public API schema, built without checks (it was composed before); undefined when it cannot be. */
function previousApiSchema(sdl: string): GraphQLSchema | undefined {
  try {
    return buildASTSchema(parseSdl(sdl), { assumeValid: true, assumeValidSDL: true });
  } catch {
    return undefined;
  }
}

function apiReport(previousApi: string | undefined, api: DocumentNode): SchemaChangeReport {
  const before = previousApi === undefined ? undefined : previousApiSchema(previousApi);
  return before === undefined ? emptyReport() : compareSchemas(before, buildASTSchema(api, { assumeValid: true, assumeValidSDL: true }));
}

/**
 * Parses every subgraph (with the registry's token and definition limits); a syntax error of the
 * subgraph being published (`checked`) is that publish's 400, one of a stored subgraph is
 * reported as a composition error (it was parsed when it was stored, so only a hand edit of
 * the store gets there).
 */
function parseAll(subgraphs: readonly SubgraphInput[], checked: string): { documents: DocumentNode[] } | SchemaJobResult {
  const documents: DocumentNode[] = [];
  for (const subgraph of subgraphs) {
    try {
      documents.push(parseSdl(subgraph.sdl));
    } catch (err) {
      if (!(err instanceof GraphQLError)) throw err;
      if (subgraph.name === checked) return { kind: 'checked', problems: [problemOf(err)] };
      return { kind: 'not-composable', errors: [{ message: `[${subgraph.name}] ${err.message}`, code: 'INVALID_GRAPHQL', coordinate: null, subgraph: subgraph.name }] };
    }
  }
  return { documents };
}

/**
 * Composes the subgraphs into a supergraph with @theguild/federation-composition (Apollo
 * Federation v2, the library Hive uses), and compares its public API with `previousApi`.
 * Errors are capped at SCHEMA_LIMITS.maxProblems. Throws SchemaTooComplex past the parse limits.
 */
export function composeSubgraphs(subgraphs: readonly SubgraphInput[], previousApi: string | undefined, checked: string): SchemaJobResult {
  const parsed = parseAll(subgraphs, checked);
  if (!('documents' in parsed)) return parsed;
  const names = new Set(subgraphs.map((subgraph) => subgraph.name));
  const result = composeServices(subgraphs.map((subgraph, index) => ({ name: subgraph.name, url: subgraph.url, typeDefs: parsed.documents[index]! })));
  if (compositionHasErrors(result)) {
    return { kind: 'not-composable', errors: result.errors.slice(0, SCHEMA_LIMITS.maxProblems).map((error) => compositionError(error, names)) };
  }
  const services = JSON.stringify(subgraphs.map(({ name, sdl, url }) => ({ name, sdl, url })));
  const artifacts = {
    supergraph: result.supergraphSdl,
    sdl: result.publicSdl,
    services,
    sha256: { supergraph: sha256Hex(result.supergraphSdl), sdl: sha256Hex(result.publicSdl), services: sha256Hex(services) },
  };
  return { kind: 'composed', artifacts, report: apiReport(previousApi, result.publicDocumentNode) };
}

/**
 * The changes between two SDLs of one subgraph: each composed on its own (a subgraph's SDL is no
 * schema by itself: federation directives, entity stubs), their public schemas compared. An empty
 * report when either does not compose alone.
 */
export function subgraphDiff(name: string, before: string, after: string): SchemaChangeReport {
  const alone = (sdl: string): DocumentNode | undefined => {
    const result = composeServices([{ name, url: 'http://subgraph', typeDefs: parseSdl(sdl) }]);
    return compositionHasErrors(result) ? undefined : result.publicDocumentNode;
  };
  try {
    const [old, now] = [alone(before), alone(after)];
    if (old === undefined || now === undefined) return emptyReport();
    return compareSchemas(buildASTSchema(old, { assumeValid: true, assumeValidSDL: true }), buildASTSchema(now, { assumeValid: true, assumeValidSDL: true }));
  } catch (err) {
    if (err instanceof GraphQLError) return emptyReport();
    throw err;
  }
}
