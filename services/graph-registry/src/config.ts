import { z } from 'zod';
import type { CdnSettings } from './cdn/artifact-handler.js';
import { DEFAULT_FEDERATION, type FederationSettings } from './federation/supergraph-composer.js';
import { DEFAULT_SCHEMA_CHECKER, type SchemaCheckerOptions } from './schemas/schema-checker.js';
import { DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from './schemas/schema-publisher.js';
import { env, operationsEnv, parseEnv, type Env, type StoreConfig } from '@sp/core';

export interface GraphRegistryConfig {
  port: number;
  host: string;
  managementPort: number;
  /** Where graphs are kept: Redis (the real store) or this process' memory (local runs only). */
  store: StoreConfig;
  /** Accepted values of X-Api-Key; more than one while a key is being rotated. */
  apiKeys: readonly string[];
  logLevel: string;
  shutdownGraceMs: number;
  schemaChecker: SchemaCheckerOptions;
  schemaPublishing: SchemaPublishing;
  /** Kafka brokers for SchemaPublishedEvent; none: no events. */
  brokers?: readonly string[];
  federation: FederationSettings;
  cdn: CdnSettings;
}

/** Hive's target ids are UUIDs or slugs: letters, digits, `.`, `_`, `-`. */
const CDN_TARGET = /^[A-Za-z0-9._-]{1,64}$/;

/** A CDN key is read-only: none may also be an API key, or a gateway's key could write. */
function cdnKeyChecks(input: Readonly<Record<string, string>>): string[] {
  const list = (name: string): string[] => (input[name] ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
  const apiKeys = new Set(list('MONITOR_API_KEY'));
  return list('Registry__CdnKeys').some((key) => apiKeys.has(key)) ? ['Registry__CdnKeys: must not contain a key of MONITOR_API_KEY (CDN keys only read the supergraph; the API key writes)'] : [];
}

/**
 * Every variable of the service, declared once: name, schema, default and description (`make docs`
 * writes the README's settings table from it).
 */
export const settings = {
  STORE_URL: env.storeUrl().describe('The store: `redis://[user:password@]host:port[/db]`, `rediss://…`, `redis+sentinel://[:password@]host:port,…/masterName[/db]` or `redis+cluster://[:password@]host:port,…`; or `memory://`, for local runs only (lost on restart, not shared between replicas; a warning is logged)'),
  MONITOR_API_KEY: env.list().describe('The key callers send in `X-Api-Key`; a comma-separated list while a key is rotated: deploy `old,new`, move the callers, then deploy `new`'),
  Registry__Port: env.port(5145).describe('HTTP port'),
  Registry__Host: env.string().default('0.0.0.0').describe('Listening address'),
  Registry__SchemaCheckTimeoutMs: env.positiveInt(DEFAULT_SCHEMA_CHECKER.timeBudgetMs).describe('Time budget of one schema check in its worker thread; past it the worker is stopped and the upload answered 422'),
  Registry__SchemaWorkers: env.positiveInt(DEFAULT_SCHEMA_CHECKER.workers).describe('Worker threads checking schemas (each check uses one core while it runs)'),
  Registry__SchemaWorkerMemoryMb: env.positiveInt(DEFAULT_SCHEMA_CHECKER.maxMemoryMb).describe('Heap of one schema worker (V8 old generation), in MiB; a check needing more is answered 422. Keep the container\'s memory limit above the main heap plus this'),
  Registry__SchemaPolicy: z
    .enum(['allow', 'reject-breaking'], { message: 'must be allow or reject-breaking' })
    .default(DEFAULT_SCHEMA_PUBLISHING.policy)
    .describe('`allow`: publish any valid schema and report its changes; `reject-breaking`: answer 409 to breaking changes unless the request carries `X-Allow-Breaking-Changes: true`'),
  Registry__SchemaHistory: env.positiveInt(DEFAULT_SCHEMA_PUBLISHING.keep).describe('Schema versions kept; older ones are dropped, their numbers never reused'),
  Registry__SchemaTopic: env.string().min(1).default(DEFAULT_SCHEMA_PUBLISHING.topic).describe('Kafka topic of `SchemaPublishedEvent`'),
  Registry__CompositionTimeoutMs: env.positiveInt(DEFAULT_SCHEMA_CHECKER.compositionBudgetMs).describe('Time budget of one supergraph composition in a schema worker (it grows with the total SDL of every subgraph); past it the worker is stopped and the publish answered 422'),
  Registry__SupergraphHistory: env.positiveInt(DEFAULT_FEDERATION.keepSupergraph).describe('Supergraph versions kept (each holds its supergraph, public schema and every subgraph\'s SDL); older ones are dropped, their numbers never reused'),
  Registry__MaxSubgraphs: env.positiveInt(DEFAULT_FEDERATION.maxSubgraphs).describe('Subgraphs one supergraph may hold; a publish past it is answered 422'),
  Registry__MaxSupergraphBytes: env.positiveInt(DEFAULT_FEDERATION.maxTotalBytes).describe('Total size of every subgraph\'s SDL, in bytes; a publish past it is answered 422'),
  Registry__CdnKeys: env.list().optional().describe('Read-only keys of the supergraph\'s CDN endpoints (`X-Hive-CDN-Key`), comma-separated for rotation; none of them may be an API key. Unset: every CDN request is refused (403)'),
  Registry__CdnTarget: z.string().regex(CDN_TARGET, { message: 'must be 1 to 64 letters, digits, ".", "_" or "-"' }).default('default').describe('The target id of the CDN paths, `/artifacts/v1/{target}/…`'),
  MessageBroker__BrokerList: env.list().optional().describe('Kafka brokers, comma-separated; without it versions are published without events (a warning is logged). Not part of readiness'),
  ...operationsEnv,
};

/**
 * The only reader of the environment (the process' own unless one is given); every variable is
 * validated at start and every problem reported at once, by variable name.
 */
export function loadConfig(environment: Env = process.env): GraphRegistryConfig {
  const vars = parseEnv(
    settings,
    environment,
    cdnKeyChecks,
  );
  const compositionBudgetMs = vars.Registry__CompositionTimeoutMs;
  return {
    port: vars.Registry__Port,
    host: vars.Registry__Host,
    managementPort: vars.Management__Port,
    store: vars.STORE_URL,
    apiKeys: vars.MONITOR_API_KEY,
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
    schemaChecker: {
      maxQueued: DEFAULT_SCHEMA_CHECKER.maxQueued,
      timeBudgetMs: vars.Registry__SchemaCheckTimeoutMs,
      compositionBudgetMs,
      workers: vars.Registry__SchemaWorkers,
      maxMemoryMb: vars.Registry__SchemaWorkerMemoryMb,
    },
    schemaPublishing: { policy: vars.Registry__SchemaPolicy, keep: vars.Registry__SchemaHistory, topic: vars.Registry__SchemaTopic },
    ...(vars.MessageBroker__BrokerList === undefined ? {} : { brokers: vars.MessageBroker__BrokerList }),
    federation: {
      ...DEFAULT_FEDERATION,
      keepSubgraph: vars.Registry__SchemaHistory,
      keepSupergraph: vars.Registry__SupergraphHistory,
      maxSubgraphs: vars.Registry__MaxSubgraphs,
      maxTotalBytes: vars.Registry__MaxSupergraphBytes,
      // Longer than a composition may take, so a live holder never loses it mid-composition.
      leaseMs: compositionBudgetMs + 10_000,
    },
    cdn: { keys: vars.Registry__CdnKeys ?? [], target: vars.Registry__CdnTarget },
  };
}
