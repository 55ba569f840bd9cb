import { z } from 'zod';
import { DEFAULT_SCHEMA_CHECKER, type SchemaCheckerOptions } from './schemas/schema-checker.js';
import { DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from './schemas/schema-publisher.js';
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
 * The only reader of the environment (the process' own unless one is given); every variable is
 * validated at start and every problem reported at once, by variable name.
 */
export function loadConfig(environment: Env = process.env): GraphRegistryConfig {
  const vars = parseEnv(
    {
      STORE_URL: env.storeUrl(),
      MONITOR_API_KEY: env.list(),
      Registry__Port: env.port(5145),
      Registry__Host: env.string().default('0.0.0.0'),
      Registry__SchemaCheckTimeoutMs: env.positiveInt(DEFAULT_SCHEMA_CHECKER.timeBudgetMs),
      Registry__SchemaWorkers: env.positiveInt(DEFAULT_SCHEMA_CHECKER.workers),
      Registry__SchemaWorkerMemoryMb: env.positiveInt(DEFAULT_SCHEMA_CHECKER.maxMemoryMb),
      Registry__SchemaPolicy: z.enum(['allow', 'reject-breaking'], { message: 'must be allow or reject-breaking' }).default(DEFAULT_SCHEMA_PUBLISHING.policy),
      Registry__SchemaHistory: env.positiveInt(DEFAULT_SCHEMA_PUBLISHING.keep),
      Registry__SchemaTopic: env.string().min(1).default(DEFAULT_SCHEMA_PUBLISHING.topic),
      MessageBroker__BrokerList: env.list().optional(),
      ...operationsEnv,
    },
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
