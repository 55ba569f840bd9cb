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

/** The only reader of the environment; every variable is validated at start. */
export function loadConfig(environment: Env = process.env): CacheConfig {
  const vars = parseEnv(
    {
      Cache__Port: env.port(7777),
      Cache__Host: env.string().default('0.0.0.0'),
      Cache__Backend: z.enum(['memory', 'redis'], { message: 'must be memory or redis' }).default('memory'),
      Cache__Capacity: env.positiveInt(1000),
      Cache__Partitions: env
        .list()
        .transform((items, ctx) => {
          const partitions = items.map(parsePartition);
          const problem = partitions.find((partition) => typeof partition === 'string') ?? duplicatePrefix(partitions as PartitionConfig[]);
          if (problem === undefined) return partitions as PartitionConfig[];
          ctx.addIssue({ code: 'custom', message: problem });
          return z.NEVER;
        })
        .default([]),
      Cache__MaxValueBytes: env.positiveInt(1024 * 1024),
      Cache__RedisUrl: env.redisUrl().optional(),
      Cache__KeyPrefix: env.string().default('cache:'),
      ...operationsEnv,
    },
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
