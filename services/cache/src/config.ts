import { z } from 'zod';
import { env, operationsEnv, parseEnv, type Env } from '@sp/platform';

/** A key prefix of the memory backend with a capacity and a full policy of its own. */
export interface PartitionConfig {
  prefix: string;
  capacity: number;
  policy: 'lru' | 'reject';
}

export interface CacheConfig {
  port: number;
  host: string;
  managementPort: number;
  backend: { kind: 'memory'; capacity: number; partitions?: readonly PartitionConfig[] } | { kind: 'redis'; url: string; keyPrefix: string };
  maxValueBytes: number;
  logLevel: string;
  shutdownGraceMs: number;
}

const PARTITION = /^([^=\s]+)=(\d+)(?:\/(lru|reject))?$/;

/** `prefix=capacity[/lru|/reject]`, or what is wrong with it. */
function parsePartition(item: string): PartitionConfig | string {
  const match = PARTITION.exec(item);
  const capacity = Number(match?.[2]);
  if (match === null || !Number.isSafeInteger(capacity) || capacity < 1) return `"${item}" must be prefix=capacity, optionally /lru or /reject (e.g. oidc:=10000/lru)`;
  return { prefix: match[1]!, capacity, policy: (match[3] as PartitionConfig['policy'] | undefined) ?? 'lru' };
}

function duplicatePrefix(partitions: PartitionConfig[]): string | undefined {
  const seen = new Set<string>();
  for (const { prefix } of partitions) {
    if (seen.has(prefix)) return `prefix "${prefix}" is given twice`;
    seen.add(prefix);
  }
  return undefined;
}

/**
 * Every variable of the service, declared once: name, schema, default and description (`make docs`
 * writes the README's settings table from it).
 */
export const settings = {
  Cache__Port: env.port(7777).describe('gRPC port (cleartext HTTP/2): `cache.v1.CacheGrpcService`, `grpc.health.v1.Health`, server reflection'),
  Cache__Host: env.string().default('0.0.0.0').describe('Listening address'),
  Cache__Backend: z.enum(['memory', 'redis'], { message: 'must be memory or redis' }).default('memory').describe('`memory` (in process, LRU) or `redis` (required for more than one replica)'),
  Cache__Capacity: env.positiveInt(1000).describe('Memory backend: most entries held outside the partitions; beyond it the least recently used is evicted'),
  Cache__Partitions: env
    .list()
    .transform((items, ctx) => {
      const partitions = items.map(parsePartition);
      const problem = partitions.find((partition) => typeof partition === 'string') ?? duplicatePrefix(partitions as PartitionConfig[]);
      if (problem === undefined) return partitions as PartitionConfig[];
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    })
    .default([])
    .describe('Memory backend: key prefixes with a capacity and full policy of their own, `prefix=capacity[/lru|/reject]`, comma-separated (see "Limits")'),
  Cache__MaxValueBytes: env.positiveInt(1024 * 1024).describe('Largest value accepted, in bytes (INVALID_ARGUMENT above)'),
  Cache__RedisUrl: env
    .redisUrl()
    .optional()
    .describe('Required with `redis`: `redis://[user:pass@]host:port[/db]`, `rediss://…`, `redis+sentinel://[:pass@]host:port,…/masterName[/db]` or `redis+cluster://[:pass@]host:port,…`'),
  Cache__KeyPrefix: env.string().default('cache:').describe('Redis backend: prefix of every key'),
  ...operationsEnv,
};

/** The only reader of the environment; every variable is validated at start. */
export function loadConfig(environment: Env = process.env): CacheConfig {
  const vars = parseEnv(
    settings,
    environment,
    (input) => (input.Cache__Backend === 'redis' && input.Cache__RedisUrl === undefined ? ['Cache__RedisUrl: is required when Cache__Backend is redis'] : []),
  );
  return {
    port: vars.Cache__Port,
    host: vars.Cache__Host,
    managementPort: vars.Management__Port,
    backend:
      vars.Cache__Backend === 'redis'
        ? { kind: 'redis', url: vars.Cache__RedisUrl!, keyPrefix: vars.Cache__KeyPrefix }
        : { kind: 'memory', capacity: vars.Cache__Capacity, partitions: vars.Cache__Partitions },
    maxValueBytes: vars.Cache__MaxValueBytes,
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
