import { z } from 'zod';
import { DEFAULT_LIMITS, limitProblems, type GrpcServerLimits } from '@sp/grpc-server';
import { ConfigError, env, operationsEnv, parseEnv, type Env } from '@sp/platform';

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
  /** The gRPC transport's limits (Grpc__*; services/cache/README.md, "Limits"). */
  grpc: GrpcSettings;
  logLevel: string;
  shutdownGraceMs: number;
}

/** The transport's limits the configuration sets: all but the request size, which follows Cache__MaxValueBytes. */
export type GrpcSettings = Omit<GrpcServerLimits, 'maxReceiveMessageBytes'>;

/** Room in a request message for everything but the value: a key of 1024 bytes, the TTL and the framing. */
export const MESSAGE_OVERHEAD_BYTES = 4096;
/** What gRPC clients accept by default (grpc-go's and grpc-js' 4 MiB receive limit): a larger answer helps no one unless values are larger. */
const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** `Grpc__<Name>` of each transport limit, and the schema of its value. */
const bytes = (fallback: number) => env.positiveInt(fallback);
/** A time limit in ms; 0 turns it off. */
const ms = (fallback: number) => z.coerce.number().int().min(0).max(2 ** 31 - 1).default(fallback);
const GRPC_VARIABLES = {
  Grpc__MaxConcurrentStreams: ['maxConcurrentStreams', env.positiveInt(DEFAULT_LIMITS.maxConcurrentStreams)],
  Grpc__MaxMetadataBytes: ['maxMetadataBytes', bytes(DEFAULT_LIMITS.maxMetadataBytes)],
  Grpc__MaxConnections: ['maxConnections', env.positiveInt(DEFAULT_LIMITS.maxConnections)],
  Grpc__ConnectionBufferBytes: ['connectionBufferBytes', bytes(DEFAULT_LIMITS.connectionBufferBytes)],
  Grpc__ProcessBufferBytes: ['processBufferBytes', bytes(DEFAULT_LIMITS.processBufferBytes)],
  Grpc__MaxCallDurationMs: ['maxCallDurationMs', ms(DEFAULT_LIMITS.maxCallDurationMs)],
  Grpc__StreamIdleTimeoutMs: ['streamIdleTimeoutMs', ms(DEFAULT_LIMITS.streamIdleTimeoutMs)],
  Grpc__WriteTimeoutMs: ['writeTimeoutMs', ms(DEFAULT_LIMITS.writeTimeoutMs)],
  Grpc__HandshakeTimeoutMs: ['handshakeTimeoutMs', ms(DEFAULT_LIMITS.handshakeTimeoutMs)],
  Grpc__ConnectionIdleTimeoutMs: ['connectionIdleTimeoutMs', ms(DEFAULT_LIMITS.connectionIdleTimeoutMs)],
  Grpc__MaxConnectionAgeMs: ['maxConnectionAgeMs', ms(DEFAULT_LIMITS.maxConnectionAgeMs)],
  Grpc__MaxConnectionAgeGraceMs: ['maxConnectionAgeGraceMs', ms(DEFAULT_LIMITS.maxConnectionAgeGraceMs)],
  Grpc__KeepaliveTimeMs: ['keepaliveTimeMs', ms(DEFAULT_LIMITS.keepaliveTimeMs)],
  Grpc__KeepaliveTimeoutMs: ['keepaliveTimeoutMs', ms(DEFAULT_LIMITS.keepaliveTimeoutMs)],
  Grpc__KeepaliveMinPingIntervalMs: ['keepaliveMinPingIntervalMs', ms(DEFAULT_LIMITS.keepaliveMinPingIntervalMs)],
  Grpc__KeepalivePermitWithoutStream: ['keepalivePermitWithoutStream', env.bool(DEFAULT_LIMITS.keepalivePermitWithoutStream)],
  Grpc__StreamWindowBytes: ['streamWindowBytes', bytes(DEFAULT_LIMITS.streamWindowBytes)],
  Grpc__ConnectionWindowBytes: ['connectionWindowBytes', bytes(DEFAULT_LIMITS.connectionWindowBytes)],
} as const satisfies Record<string, readonly [keyof GrpcSettings, z.ZodType]>;
type GrpcVariable = keyof typeof GRPC_VARIABLES;
const grpcShape = Object.fromEntries(Object.entries(GRPC_VARIABLES).map(([name, [, schema]]) => [name, schema])) as { [Name in GrpcVariable]: (typeof GRPC_VARIABLES)[Name][1] };
const variableOf = (limit: keyof GrpcServerLimits): string =>
  limit === 'maxReceiveMessageBytes' ? `Cache__MaxValueBytes + ${MESSAGE_OVERHEAD_BYTES}` : limit === 'maxSendMessageBytes' ? 'Grpc__MaxAnswerBytes' : Object.entries(GRPC_VARIABLES).find(([, [key]]) => key === limit)![0];

/** The transport's limits from the parsed variables, or every reason they cannot work together. */
function grpcSettings(vars: Record<GrpcVariable, number | boolean> & { Grpc__MaxAnswerBytes?: number; Cache__MaxValueBytes: number }): GrpcSettings {
  const limits = Object.fromEntries(Object.entries(GRPC_VARIABLES).map(([name, [key]]) => [key, vars[name as GrpcVariable]])) as Omit<GrpcSettings, 'maxSendMessageBytes'>;
  const maxReceiveMessageBytes = vars.Cache__MaxValueBytes + MESSAGE_OVERHEAD_BYTES;
  // An answer must hold the largest value a Get can return.
  const maxSendMessageBytes = vars.Grpc__MaxAnswerBytes ?? Math.max(DEFAULT_MAX_ANSWER_BYTES, maxReceiveMessageBytes);
  const problems = limitProblems({ ...limits, maxSendMessageBytes, maxReceiveMessageBytes }, variableOf);
  if (maxSendMessageBytes < maxReceiveMessageBytes) problems.push(`Grpc__MaxAnswerBytes: must be at least Cache__MaxValueBytes + ${MESSAGE_OVERHEAD_BYTES} (${maxReceiveMessageBytes}), or a Get of the largest value could not be answered`);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...limits, maxSendMessageBytes };
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
      Grpc__MaxAnswerBytes: z.coerce.number().int().positive().optional(),
      ...grpcShape,
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
    grpc: grpcSettings(vars),
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
