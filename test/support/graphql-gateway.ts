import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { json } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildSchema, execute as executeDocument, Kind, parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { listen } from '@sp/http';
import type { Client, PaymentConfirmation, Plan, PlanSubscription, PriceTier } from '../../services/webhooks/src/gateway/gateway-port.js';
import { infra } from './infra.js';

/** The contract the webhooks service is written against, and the only schema this fixture serves. */
export const gatewayContractPath = fileURLToPath(new URL('../../services/webhooks/contract/gateway.graphql', import.meta.url));
export const gatewayContractSdl = readFileSync(gatewayContractPath, 'utf8');

// The records are the ones the service's GraphQL documents select (services/webhooks/src/gateway/gateway-port.ts):
// the fixture serves exactly those fields, so it shares their types.
export type GatewayClient = Client;
export type GatewayPlan = Plan;
export type GatewayPriceTier = PriceTier;
export type GatewayPaymentConfirmation = PaymentConfirmation;
export type GatewayPlanSubscription = PlanSubscription;

export interface GatewaySubscription {
  clientId: string;
  phoneNumber: string;
  locale: string | null;
  /** When the subscription began (ISO 8601); `unsubscribe` with `subscribedBefore` leaves later ones. */
  subscribedAt: string;
}

/** The fixture's in-memory records; tests read them to see what the service changed, and seed them. */
export interface GatewayData {
  clients: GatewayClient[];
  plans: GatewayPlan[];
  priceTiers: GatewayPriceTier[];
  paymentConfirmations: GatewayPaymentConfirmation[];
  planSubscriptions: GatewayPlanSubscription[];
  subscriptions: GatewaySubscription[];
}

/** One GraphQL operation that reached the fixture with a valid token. */
export interface ReceivedOperation {
  /** Position in arrival order since the fixture started (1, 2, …; not reset by `reset()` so a reader can page with `since`). */
  seq: number;
  /** ISO 8601 arrival time. */
  receivedAt: string;
  operationName: string | undefined;
  type: 'query' | 'mutation';
  /** Root fields selected, e.g. `['createPlan']`. */
  fields: string[];
  variables: Record<string, unknown>;
  /** Whether the fixture answered with a failure injected by `failNext`. */
  failed: boolean;
}

/**
 * How the fixture fails an operation: `http-503` answers 503, `graphql-error` answers 200 with an
 * `errors` list, `disconnect` destroys the connection without an answer.
 */
export type GatewayFailureMode = 'http-503' | 'graphql-error' | 'disconnect';

export interface FailureOptions {
  mode: GatewayFailureMode;
  /** How many matching operations fail; default 1. */
  count?: number;
  /** Only operations selecting this root field (e.g. `createPlanSubscription`); default every operation. */
  field?: string;
}

export interface DelayOptions {
  /** How long each matching operation is held before it is executed (its effect lands then, whether or not the caller still waits). */
  ms: number;
  /** How many matching operations are held; default 1. */
  count?: number;
  /** Only operations selecting this root field (e.g. `updatePriceTier`); default every operation. */
  field?: string;
}

export interface GraphqlGatewayFixture {
  /** The GraphQL endpoint, for GRAPHQL_API_URL. */
  url: string;
  port: number;
  schema: GraphQLSchema;
  data: GatewayData;
  /** Every authorized operation in arrival order. */
  received: ReceivedOperation[];
  /** Received mutations (not failed ones), optionally only those selecting `field`. */
  mutations(field?: string): ReceivedOperation[];
  /** Access tokens checked: how many requests were accepted and refused, and the distinct tokens accepted. */
  tokens: TokenCounts;
  addClient(client: Partial<GatewayClient> & Pick<GatewayClient, 'number' | 'name'>): GatewayClient;
  addPlan(plan: Partial<GatewayPlan> & Pick<GatewayPlan, 'name'>): GatewayPlan;
  addPriceTier(tier: Partial<GatewayPriceTier> & Pick<GatewayPriceTier, 'planId' | 'providerPriceId'>): GatewayPriceTier;
  /** A subscription beginning at `subscribedAt` (now by default). */
  addSubscriber(clientId: string, phoneNumber: string, locale: string | null, subscribedAt?: Date): void;
  /** Makes the next matching operation(s) fail (replacing failures still pending). */
  failNext(options: FailureOptions): void;
  /**
   * Holds the next matching operation(s) for `ms` before executing them, as a slow or congested
   * gateway would: a caller that gives up meanwhile does not stop the write from landing later.
   * Replaces delays still pending.
   */
  delayNext(options: DelayOptions): void;
  /** Drops failures and delays still pending. */
  clearFailures(): void;
  /** Stops listening (connections are refused) until `up()`; the port is kept. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Forgets records, received operations, token counts and pending failures. */
  reset(): void;
  close(): Promise<void>;
}

export interface GraphqlGatewayOptions {
  /** Keycloak base URL and realm whose tokens are accepted; the shared test Keycloak by default. */
  keycloakUrl?: string;
  realm?: string;
  /** Client ids (`azp`) allowed to call; the services' client by default. */
  allowedClientIds?: readonly string[];
  /** Listening port; a free one by default (`make up` uses a fixed one). */
  port?: number;
  /** How many received operations are kept (the oldest are dropped); all by default. `make up` runs for days. */
  keepOperations?: number;
}

/** The view of `GET /_operations[?since=<seq>][&type=mutation|query]`. */
export interface OperationsView {
  /** `seq` of the newest operation received, 0 before the first: pass as `since` to see only later ones. */
  last: number;
  operations: ReceivedOperation[];
}

export function emptyData(): GatewayData {
  return { clients: [], plans: [], priceTiers: [], paymentConfirmations: [], planSubscriptions: [], subscriptions: [] };
}

type Args = Record<string, unknown>;
type Input = Record<string, unknown>;

/** The contract's ProviderVersion: an integer 0..2^53-1 (a resolver error otherwise, as a real gateway's scalar would refuse it). */
function providerVersionOf(fields: Input): number {
  const version = fields.providerVersion;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) throw new TypeError(`ProviderVersion must be an integer from 0 to 2^53-1, got ${JSON.stringify(version)}`);
  return version;
}

/**
 * The contract's conditional write: `changes` are applied to `record` only when the write's
 * version is not older than the one the record holds; the comparison and the change happen in
 * one synchronous step, so no other write can come between them.
 */
function writeIfNotOlder<T extends { providerVersion: number | null }>(record: T, changes: Input): boolean {
  const version = providerVersionOf(changes);
  if (record.providerVersion !== null && record.providerVersion !== undefined && version < record.providerVersion) return false;
  Object.assign(record, changes);
  return true;
}

/** updatePriceTier's fields: an omitted (null) `active` leaves it unchanged; `amount: null` is a value. */
function tierChanges(fields: Input): Input {
  const { active, ...rest } = fields;
  return active === null || active === undefined ? rest : { ...rest, active };
}

/** A fixture's seeding methods: records a test puts in the data before it runs, with a new record's defaults. */
export type Seeding = Pick<GraphqlGatewayFixture, 'addClient' | 'addPlan' | 'addPriceTier' | 'addSubscriber'>;

/** The seeding methods over `data`, for every fixture that serves it (the gateway and the subgraphs). */
export function seeding(data: GatewayData, nextId: (kind: string) => string): Seeding {
  return {
    addClient(client) {
      const record: GatewayClient = { id: nextId('client'), phoneNumber: null, providerCustomerId: null, ...client };
      data.clients.push(record);
      return record;
    },
    addPlan(plan) {
      const record: GatewayPlan = { id: nextId('plan'), description: null, icon: null, active: true, providerProductId: null, providerVersion: null, ...plan };
      data.plans.push(record);
      return record;
    },
    addPriceTier(tier) {
      const record: GatewayPriceTier = { id: nextId('tier'), amount: 1000, currency: 'usd', interval: 'month', active: true, providerVersion: null, ...tier };
      data.priceTiers.push(record);
      return record;
    },
    addSubscriber(clientId, phoneNumber, locale, subscribedAt = new Date()) {
      data.subscriptions.push({ clientId, phoneNumber, locale, subscribedAt: subscribedAt.toISOString() });
    },
  };
}

/** Resolvers of the contract's root fields over the in-memory records, with the contract's idempotency and version rules. */
export function rootValue(data: GatewayData, nextId: (kind: string) => string): Record<string, (args: Args) => unknown> {
  const remove = <T extends { id: string }>(list: T[], id: unknown): boolean => {
    const index = list.findIndex((item) => item.id === id);
    if (index >= 0) list.splice(index, 1);
    return index >= 0;
  };
  const input = (args: Args): Input => args.input as Input;
  return {
    clientByProviderCustomerId: ({ providerCustomerId }) => data.clients.find((c) => c.providerCustomerId === providerCustomerId) ?? null,
    clientByPhoneNumber: ({ phoneNumber }) => data.clients.find((c) => c.phoneNumber === phoneNumber) ?? null,
    clientByNumber: ({ number }) => data.clients.find((c) => c.number === number) ?? null,
    planByProviderProductId: ({ providerProductId }) => data.plans.find((p) => p.providerProductId === providerProductId) ?? null,
    priceTierByProviderPriceId: ({ providerPriceId }) => data.priceTiers.find((t) => t.providerPriceId === providerPriceId) ?? null,
    subscribers: ({ clientId, first, after }) => {
      const all = data.subscriptions.filter((s) => s.clientId === clientId);
      const start = typeof after === 'string' ? Number(after) : 0;
      const end = start + Math.min(Number(first), 500);
      return { items: all.slice(start, end), nextCursor: end < all.length ? String(end) : null };
    },
    createPlan: (args) => {
      const { providerProductId, ...fields } = input(args);
      providerVersionOf(fields);
      const existing = data.plans.find((p) => p.providerProductId === providerProductId);
      if (existing) return { applied: writeIfNotOlder(existing, fields), plan: existing };
      const plan = { id: nextId('plan'), providerProductId, ...fields } as unknown as GatewayPlan;
      data.plans.push(plan);
      return { applied: true, plan };
    },
    updatePlan: (args) => {
      const plan = data.plans.find((p) => p.id === args.id);
      return plan ? { applied: writeIfNotOlder(plan, input(args)), plan } : { applied: false, plan: null };
    },
    deletePlan: ({ id }) => remove(data.plans, id),
    createPriceTier: (args) => {
      const { providerPriceId, amount, active, providerVersion } = input(args);
      providerVersionOf({ providerVersion });
      const existing = data.priceTiers.find((t) => t.providerPriceId === providerPriceId);
      // A price's plan, currency and interval never change at the provider: only these can.
      if (existing) return { applied: writeIfNotOlder(existing, tierChanges({ amount, active, providerVersion })), priceTier: existing };
      const priceTier = { id: nextId('tier'), ...input(args) } as unknown as GatewayPriceTier;
      data.priceTiers.push(priceTier);
      return { applied: true, priceTier };
    },
    updatePriceTier: (args) => {
      const tier = data.priceTiers.find((t) => t.id === args.id);
      return tier ? { applied: writeIfNotOlder(tier, tierChanges(input(args))), priceTier: tier } : { applied: false, priceTier: null };
    },
    deletePriceTier: ({ id }) => remove(data.priceTiers, id),
    createPaymentConfirmation: (args) => {
      const fields = input(args);
      const existing = data.paymentConfirmations.find((c) => c.checkoutSessionId === fields.checkoutSessionId);
      if (existing) return existing;
      const confirmation = { id: nextId('payment'), ...fields } as unknown as GatewayPaymentConfirmation;
      data.paymentConfirmations.push(confirmation);
      return confirmation;
    },
    createPlanSubscription: (args) => {
      const fields = input(args);
      const existing = data.planSubscriptions.find((s) => s.checkoutSessionId === fields.checkoutSessionId);
      if (existing) return existing;
      const subscription = { id: nextId('subscription'), ...fields } as unknown as GatewayPlanSubscription;
      data.planSubscriptions.push(subscription);
      return subscription;
    },
    unsubscribe: ({ clientId, phoneNumber, subscribedBefore }) => {
      // ISO 8601 times of one format compare as strings; a subscription as old as the request or newer stays.
      const index = data.subscriptions.findIndex((s) => s.clientId === clientId && s.phoneNumber === phoneNumber && (typeof subscribedBefore !== 'string' || s.subscribedAt < subscribedBefore));
      if (index >= 0) data.subscriptions.splice(index, 1);
      return index >= 0;
    },
  };
}

/** The operations a fixture received, in arrival order, the oldest dropped past `keep` (all kept by default). */
export function operationLog(keep = Number.POSITIVE_INFINITY): { received: ReceivedOperation[]; record: (operation: Omit<ReceivedOperation, 'seq' | 'receivedAt'>) => void; last: () => number } {
  const received: ReceivedOperation[] = [];
  let seq = 0;
  return {
    received,
    record: (operation) => {
      received.push({ seq: ++seq, receivedAt: new Date().toISOString(), ...operation });
      if (received.length > keep) received.splice(0, received.length - keep);
    },
    last: () => seq,
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The operation a request selects, for the record. */
export function describe(document: DocumentNode, operationName: string | undefined): Pick<ReceivedOperation, 'type' | 'fields'> | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operations.find((o) => operationName === undefined || o.name?.value === operationName) ?? operations[0];
  if (!operation) return undefined;
  const fields = operation.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : []));
  return { type: operation.operation === 'mutation' ? 'mutation' : 'query', fields };
}

/**
 * What a user of `make up` sees of the operations the fixture received: those after `since`,
 * optionally only mutations or only queries. Unauthenticated: the fixture listens on loopback
 * only and holds demo data.
 */
export function operationsView(received: readonly ReceivedOperation[], last: number, params: URLSearchParams): OperationsView {
  const since = Number(params.get('since') ?? 0);
  const type = params.get('type');
  const operations = received.filter((op) => op.seq > (Number.isFinite(since) ? since : 0) && (type === null || op.type === type));
  return { last, operations };
}

export type Prepared = { document: DocumentNode; errors?: undefined } | { document?: undefined; errors: readonly GraphQLError[] };

/**
 * Parses and validates a query once per distinct text, as a real gateway caches them (the service
 * sends a handful of fixed documents), so the fixture stays cheap enough to benchmark against.
 */
export function createPreparer(schema: GraphQLSchema): (query: string) => Prepared {
  const cache = new Map<string, Prepared>();
  return (query) => {
    let prepared = cache.get(query);
    if (prepared === undefined) {
      try {
        const document = parse(query);
        const errors = validate(schema, document);
        prepared = errors.length > 0 ? { errors } : { document };
      } catch (err) {
        prepared = { errors: [err as GraphQLError] };
      }
      if (cache.size < 1000) cache.set(query, prepared);
    }
    return prepared;
  };
}

/** Counts of the access tokens a fixture checked. */
export interface TokenCounts {
  accepted: number;
  refused: number;
  distinct: Set<string>;
}

/**
 * Checks the bearer token of a request: issued by Keycloak's realm (signature against the realm's
 * JWKS, expiry, issuer, with jose) to one of the allowed clients (`azp`). A token verified once
 * is trusted until its expiry. Accepted tokens are counted in `tokens.distinct`.
 */
export function createTokenVerifier(options: { keycloakUrl: string; realm: string; allowed: ReadonlySet<string>; tokens: TokenCounts }): ((req: IncomingMessage) => Promise<boolean>) & { forget(): void } {
  const issuer = `${options.keycloakUrl}/realms/${options.realm}`;
  const jwks = createRemoteJWKSet(new URL(`${issuer}/protocol/openid-connect/certs`));
  /** Tokens whose signature was verified once, until their expiry (Unix seconds). */
  const verified = new Map<string, number>();
  const authorize = async (req: IncomingMessage): Promise<boolean> => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined) return false;
    if ((verified.get(token) ?? 0) > Date.now() / 1000) return true;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer }));
    } catch {
      return false;
    }
    if (typeof payload.azp !== 'string' || !options.allowed.has(payload.azp)) return false;
    options.tokens.distinct.add(token);
    verified.set(token, payload.exp ?? 0);
    return true;
  };
  return Object.assign(authorize, { forget: () => verified.clear() });
}

/**
 * A real GraphQL server (graphql-js over HTTP, `POST /graphql`) serving exactly the webhooks
 * service's gateway contract with in-memory records. Every request must carry a bearer token that
 * Keycloak issued (checked against the realm's JWKS with jose: signature, expiry, issuer, `azp`);
 * otherwise 401. Controls make it fail (503, GraphQL errors, dropped connections, down) so tests
 * can show what the service does then.
 */
export async function startGraphqlGateway(options: GraphqlGatewayOptions = {}): Promise<GraphqlGatewayFixture> {
  const keycloakUrl = options.keycloakUrl ?? infra('KEYCLOAK_URL');
  const realm = options.realm ?? infra('KEYCLOAK_REALM');
  const allowed = new Set(options.allowedClientIds ?? [infra('KEYCLOAK_SERVICES_CLIENT_ID')]);
  const tokens: TokenCounts = { accepted: 0, refused: 0, distinct: new Set<string>() };
  const schema = buildSchema(gatewayContractSdl);
  const prepare = createPreparer(schema);
  // One data object for the fixture's life: the seeding methods and the resolvers hold it, so reset() empties it in place.
  const data = emptyData();
  let counter = 0;
  const nextId = (kind: string): string => `${kind}-${++counter}`;
  const root = rootValue(data, nextId);
  const { received, record: recordOperation, last: lastSeq } = operationLog(options.keepOperations);
  let failures: Required<Pick<FailureOptions, 'mode' | 'count'>> & { field?: string } = { mode: 'http-503', count: 0 };
  let delays: Required<Pick<DelayOptions, 'ms' | 'count'>> & { field?: string } = { ms: 0, count: 0 };

  const authorize = createTokenVerifier({ keycloakUrl, realm, allowed, tokens });

  const failureFor = (fields: readonly string[]): GatewayFailureMode | undefined => {
    if (failures.count <= 0 || (failures.field !== undefined && !fields.includes(failures.field))) return undefined;
    failures.count -= 1;
    return failures.mode;
  };

  const delayFor = (fields: readonly string[]): number => {
    if (delays.count <= 0 || (delays.field !== undefined && !fields.includes(delays.field))) return 0;
    delays.count -= 1;
    return delays.ms;
  };

  const fail = (res: ServerResponse, mode: GatewayFailureMode): void => {
    if (mode === 'disconnect') res.socket?.destroy();
    else if (mode === 'http-503') sendJson(res, 503, { errors: [{ message: 'gateway unavailable (injected)' }] });
    else sendJson(res, 200, { data: null, errors: [{ message: 'downstream service failed (injected)' }] });
  };

  const execute = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = (await json(req)) as Record<string, unknown>;
    const query = typeof body.query === 'string' ? body.query : '';
    const operationName = typeof body.operationName === 'string' ? body.operationName : undefined;
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    const prepared = prepare(query);
    if (prepared.errors) return sendJson(res, 200, { errors: prepared.errors });
    const described = describe(prepared.document, operationName);
    const failure = described ? failureFor(described.fields) : undefined;
    if (described) recordOperation({ operationName, ...described, variables, failed: failure !== undefined });
    if (failure) return fail(res, failure);
    const delay = described ? delayFor(described.fields) : 0;
    if (delay > 0) await sleep(delay);
    const result = await executeDocument({ schema, document: prepared.document, rootValue: root, variableValues: variables, operationName });
    sendJson(res, 200, result);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    if (req.method === 'GET' && url.pathname === '/_operations') return sendJson(res, 200, operationsView(received, lastSeq(), url.searchParams));
    if (req.method !== 'POST' || url.pathname !== '/graphql') return sendJson(res, 404, { errors: [{ message: 'not found' }] });
    if (!(await authorize(req))) {
      tokens.refused += 1;
      req.resume();
      return sendJson(res, 401, { errors: [{ message: 'unauthorized' }] });
    }
    tokens.accepted += 1;
    await execute(req, res);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendJson(res, 400, { errors: [{ message: err instanceof Error ? err.message : String(err) }] }));
  });
  // On loopback, as every fixture: the platform's own listen (@sp/http).
  const listenOn = (wanted: number): Promise<number> => listen(server, wanted, '127.0.0.1');
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const port = await listenOn(options.port ?? 0);

  return {
    url: `http://127.0.0.1:${port}/graphql`,
    port,
    schema,
    data,
    received,
    mutations: (field) => received.filter((op) => op.type === 'mutation' && !op.failed && (field === undefined || op.fields.includes(field))),
    tokens,
    ...seeding(data, nextId),
    failNext(failure) {
      failures = { mode: failure.mode, count: failure.count ?? 1, ...(failure.field === undefined ? {} : { field: failure.field }) };
    },
    delayNext(delay) {
      delays = { ms: delay.ms, count: delay.count ?? 1, ...(delay.field === undefined ? {} : { field: delay.field }) };
    },
    clearFailures() {
      failures = { mode: 'http-503', count: 0 };
      delays = { ms: 0, count: 0 };
    },
    down: stop,
    async up() {
      if (!server.listening) await listenOn(port);
    },
    reset() {
      Object.assign(data, emptyData());
      received.length = 0;
      tokens.accepted = 0;
      tokens.refused = 0;
      tokens.distinct.clear();
      authorize.forget();
      failures = { mode: 'http-503', count: 0 };
      delays = { ms: 0, count: 0 };
    },
    close: stop,
  };
}
