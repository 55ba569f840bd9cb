import { z } from 'zod';
import { DEFAULT_SCHEMA_CHECKER, type SchemaCheckerOptions } from './schema-checker.js';
import { DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from './schema-publisher.js';
import { env, operationsEnv, parseEnv, type Env, type StoreConfig } from '@sp/platform';

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
  );
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
      workers: vars.Registry__SchemaWorkers,
      maxMemoryMb: vars.Registry__SchemaWorkerMemoryMb,
    },
    schemaPublishing: { policy: vars.Registry__SchemaPolicy, keep: vars.Registry__SchemaHistory, topic: vars.Registry__SchemaTopic },
    ...(vars.MessageBroker__BrokerList === undefined ? {} : { brokers: vars.MessageBroker__BrokerList }),
  };
}
