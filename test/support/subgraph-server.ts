import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { json } from 'node:stream/consumers';
import { buildSchema, defaultFieldResolver, execute, Kind, parse, visit, type DocumentNode, type GraphQLFieldResolver, type GraphQLSchema, type GraphQLTypeResolver } from 'graphql';
import { listen } from '@sp/http';
import { createPreparer, describe, sendJson, type ReceivedOperation } from './graphql-gateway.js';

/** A representation of an entity as a gateway sends it to `_entities`: its type and key fields. */
export type Representation = { __typename: string } & Record<string, unknown>;

/** What a subgraph resolves: root fields, entities by representation, and fields of its types. */
export interface SubgraphResolvers {
  /** Query and Mutation fields, by name. */
  root: Record<string, (args: Record<string, unknown>) => unknown>;
  /** `_entities`: the object for a representation of each entity type this subgraph resolves (null when unknown). */
  entities?: Record<string, (representation: Representation) => unknown>;
  /** Fields of object types whose value is not a property of the record (`PaymentConfirmation.client`). */
  fields?: Record<string, Record<string, (source: Record<string, unknown>) => unknown>>;
}

export interface SubgraphServerOptions {
  name: string;
  /** The subgraph's SDL, as `{ _service { sdl } }` answers it (Apollo Federation v2). */
  sdl: string;
  resolvers: SubgraphResolvers;
  /** Checks a request before it runs (the forwarded bearer token); false: 401. The schema read `{ _service { sdl } }` alone needs no check. */
  authorize?(req: IncomingMessage): Promise<boolean>;
  /** Every authorized operation but the gateway's `_service` and `_entities` lookups. */
  record?(operation: Omit<ReceivedOperation, 'seq' | 'receivedAt'>): void;
  /** The answer to `GET /_operations` (the query's parameters given); without it that path is 404. */
  operations?(params: URLSearchParams): unknown;
  port?: number;
  /** The address listened on: loopback, as every fixture, unless a Pod serves it to a cluster (`0.0.0.0`). */
  host?: string;
}

export interface SubgraphServer {
  name: string;
  url: string;
  port: number;
  /** Serves another SDL from now on (its resolvers stay): a subgraph deployed with a new schema. */
  setSdl(sdl: string): void;
  sdl(): string;
  /** `_service { sdl }` requests answered. */
  sdlReads(): number;
  /** Stops listening and cuts every connection: the service is down. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The federation definitions a subgraph's SDL uses without defining them, for graphql-js to build and run it. */
const FEDERATION_DEFINITIONS = `
scalar _Any
scalar federation__FieldSet
scalar link__Import
directive @key(fields: federation__FieldSet!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE
directive @link(url: String, import: [link__Import]) repeatable on SCHEMA
directive @shareable repeatable on OBJECT | FIELD_DEFINITION
directive @external on OBJECT | FIELD_DEFINITION
type _Service { sdl: String }
`;

/** Names of the entity types of a subgraph: object types with `@key`. */
function entityTypes(document: DocumentNode): string[] {
  const names: string[] = [];
  visit(document, {
    ObjectTypeDefinition(node) {
      if (node.directives?.some((directive) => directive.name.value === 'key')) names.push(node.name.value);
    },
  });
  return names;
}

/**
 * The executable schema of a subgraph SDL, as Apollo Federation's subgraph libraries build it:
 * the SDL without its `extend schema @link(…)`, the federation directives and scalars, and
 * `Query._service` and `Query._entities` (over the union `_Entity` of its entity types).
 */
export function subgraphSchema(sdl: string): GraphQLSchema {
  const document = parse(sdl);
  const definitions = document.definitions.filter((definition) => definition.kind !== Kind.SCHEMA_EXTENSION);
  const entities = entityTypes(document);
  const additions = `${FEDERATION_DEFINITIONS}
${entities.length > 0 ? `union _Entity = ${entities.join(' | ')}` : ''}
extend type Query {
  _service: _Service!
  ${entities.length > 0 ? '_entities(representations: [_Any!]!): [_Entity]!' : ''}
}`;
  return buildSchema(`${additions}\n${definitions.map((definition) => sdl.slice(definition.loc!.start, definition.loc!.end)).join('\n')}`);
}

/**
 * A real Apollo Federation v2 subgraph on graphql-js over HTTP (`POST /graphql`): what Hive
 * Gateway queries (`_entities` for entity references, root fields) and what the graph
 * controller reads (`{ _service { sdl } }`). Stands in for the specification's user, product and
 * payment services (test/support/subgraph-fixtures.ts).
 */
export async function startSubgraphServer(options: SubgraphServerOptions): Promise<SubgraphServer> {
  let sdl = options.sdl;
  let schema = subgraphSchema(sdl);
  let prepare = createPreparer(schema);
  let sdlReads = 0;
  const { resolvers } = options;
  const rootValue = {
    ...resolvers.root,
    _service: () => {
      sdlReads += 1;
      return { sdl };
    },
    _entities: ({ representations }: { representations: Representation[] }) =>
      representations.map((representation) => {
        const found = resolvers.entities?.[representation.__typename]?.(representation);
        return found === null || found === undefined ? null : { __typename: representation.__typename, ...found };
      }),
  };
  const fieldResolver: GraphQLFieldResolver<Record<string, unknown>, unknown> = (source, args, context, info) => {
    const own = resolvers.fields?.[info.parentType.name]?.[info.fieldName];
    return own === undefined ? defaultFieldResolver(source, args, context, info) : own(source);
  };
  const typeResolver: GraphQLTypeResolver<{ __typename?: string }, unknown> = (value) => value.__typename;

  const requestOf = (body: Record<string, unknown>): { query: string; operationName: string | undefined; variables: Record<string, unknown> } => ({
    query: typeof body.query === 'string' ? body.query : '',
    operationName: typeof body.operationName === 'string' ? body.operationName : undefined,
    variables: (body.variables ?? {}) as Record<string, unknown>,
  });

  /** Answers what is not a GraphQL request (`GET /_operations`, 404); false for `POST /graphql`. */
  const answeredOtherwise = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://subgraph');
    if (req.method === 'GET' && url.pathname === '/_operations' && options.operations !== undefined) sendJson(res, 200, options.operations(url.searchParams));
    else if (req.method !== 'POST' || url.pathname !== '/graphql') sendJson(res, 404, { errors: [{ message: 'not found' }] });
    else return false;
    return true;
  };

  /**
   * Whether the request may run: `{ _service { sdl } }` alone is the federation's schema read, which
   * the graph controller and gateways make without a caller's token (like introspection); every
   * other operation needs `authorize`.
   */
  const allowed = async (req: IncomingMessage, described: ReturnType<typeof describe>): Promise<boolean> => {
    const schemaRead = described?.type === 'query' && described.fields.length > 0 && described.fields.every((field) => field === '_service');
    return schemaRead || options.authorize === undefined || options.authorize(req);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (answeredOtherwise(req, res)) return;
    const { query, operationName, variables } = requestOf((await json(req)) as Record<string, unknown>);
    const prepared = prepare(query);
    const described = prepared.document === undefined ? undefined : describe(prepared.document, operationName);
    if (!(await allowed(req, described))) return sendJson(res, 401, { errors: [{ message: 'unauthorized' }] });
    if (prepared.errors) return sendJson(res, 200, { errors: prepared.errors });
    if (described && !described.fields.some((field) => field.startsWith('_'))) options.record?.({ operationName, ...described, variables, failed: false });
    sendJson(res, 200, await execute({ schema, document: prepared.document, rootValue, variableValues: variables, operationName, fieldResolver, typeResolver }));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendJson(res, 400, { errors: [{ message: err instanceof Error ? err.message : String(err) }] }));
  });
  // On loopback unless told otherwise: the platform's own listen (@sp/http).
  const listenOn = (wanted: number): Promise<number> => listen(server, wanted, options.host ?? '127.0.0.1');
  const shut = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const port = await listenOn(options.port ?? 0);
  return {
    name: options.name,
    url: `http://127.0.0.1:${port}/graphql`,
    port,
    setSdl(next) {
      schema = subgraphSchema(next);
      prepare = createPreparer(schema);
      sdl = next;
    },
    sdl: () => sdl,
    sdlReads: () => sdlReads,
    stop: shut,
    start: async () => void (await listenOn(port)),
    close: shut,
  };
}
