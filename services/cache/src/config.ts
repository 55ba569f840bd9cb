import { z } from 'zod';
import { DEFAULT_LIMITS, limitProblems, type GrpcServerLimits } from '@sp/grpc-server';
import { ConfigError, env, operationsEnv, parseEnv, type Env } from '@sp/core';

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

/** `Grpc__<Name>` of each transport limit, and the schema of its value (packages/grpc-server/README.md, "Limits"). */
const bytes = (fallback: number) => env.positiveInt(fallback);
/** A time limit in ms; 0 turns it off. */
const ms = (fallback: number) => z.coerce.number().int().min(0).max(2 ** 31 - 1).default(fallback);
const GRPC_VARIABLES = {
  Grpc__MaxConcurrentStreams: ['maxConcurrentStreams', env.positiveInt(DEFAULT_LIMITS.maxConcurrentStreams).describe('Calls one connection may have open at once (HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`); further streams are refused, and a connection that opens three times as many in one read is closed')],
  Grpc__MaxMetadataBytes: ['maxMetadataBytes', bytes(DEFAULT_LIMITS.maxMetadataBytes).describe('Largest request header list, in bytes (`SETTINGS_MAX_HEADER_LIST_SIZE`); a larger one resets its stream, and a connection that keeps sending them is closed')],
  Grpc__MaxConnections: ['maxConnections', env.positiveInt(DEFAULT_LIMITS.maxConnections).describe('Open connections; further ones are closed as they arrive')],
  Grpc__ConnectionBufferBytes: ['connectionBufferBytes', bytes(DEFAULT_LIMITS.connectionBufferBytes).describe("Bytes one connection may hold for its calls (headers, request messages, answers not yet sent); past it new calls and messages are refused `RESOURCE_EXHAUSTED`. At least the largest request and answer")],
  Grpc__ProcessBufferBytes: ['processBufferBytes', bytes(DEFAULT_LIMITS.processBufferBytes).describe('Bytes all connections together may hold for calls, refused past it as above; at least `Grpc__ConnectionBufferBytes`')],
  Grpc__MaxAnswerBytes: ['maxSendMessageBytes', z.coerce.number().int().positive().optional().describe('Largest answer message, in bytes, checked before the answer is built (`GetMany` included); larger ends the call `RESOURCE_EXHAUSTED`. Unset: 4 MiB (what gRPC clients accept by default) or `Cache__MaxValueBytes` + 4096 if larger; at least that')],
  Grpc__MaxCallDurationMs: ['maxCallDurationMs', ms(DEFAULT_LIMITS.maxCallDurationMs).describe('Longest run of a unary call whose client sent no `grpc-timeout`, and the cap on one it sent (`DEADLINE_EXCEEDED`); streams such as `Subscribe` are exempt; 0 = off')],
  Grpc__StreamIdleTimeoutMs: ['streamIdleTimeoutMs', ms(DEFAULT_LIMITS.streamIdleTimeoutMs).describe('A call whose request is unfinished and that gets no DATA frame this long is reset; 0 = off')],
  Grpc__WriteTimeoutMs: ['writeTimeoutMs', ms(DEFAULT_LIMITS.writeTimeoutMs).describe('An answer its client does not read (no byte of it sent) this long resets its stream; 0 = off')],
  Grpc__HandshakeTimeoutMs: ['handshakeTimeoutMs', ms(DEFAULT_LIMITS.handshakeTimeoutMs).describe("From a TCP connection to the client's HTTP/2 preface and SETTINGS; 0 = off")],
  Grpc__ConnectionIdleTimeoutMs: ['connectionIdleTimeoutMs', ms(DEFAULT_LIMITS.connectionIdleTimeoutMs).describe('A connection without calls this long is closed (GOAWAY); 0 = off')],
  Grpc__MaxConnectionAgeMs: ['maxConnectionAgeMs', ms(DEFAULT_LIMITS.maxConnectionAgeMs).describe('A connection this old (±10%) is closed gracefully (GOAWAY), so clients reconnect and new replicas get traffic; 0 = off')],
  Grpc__MaxConnectionAgeGraceMs: ['maxConnectionAgeGraceMs', ms(DEFAULT_LIMITS.maxConnectionAgeGraceMs).describe('Then its calls have this long to finish before it is cut')],
  Grpc__KeepaliveTimeMs: ['keepaliveTimeMs', ms(DEFAULT_LIMITS.keepaliveTimeMs).describe('The server pings a connection it has heard nothing from this long; 0 = off')],
  Grpc__KeepaliveTimeoutMs: ['keepaliveTimeoutMs', ms(DEFAULT_LIMITS.keepaliveTimeoutMs).describe('…and closes it when the ping is not answered within this (a half-open connection)')],
  Grpc__KeepaliveMinPingIntervalMs: ['keepaliveMinPingIntervalMs', ms(DEFAULT_LIMITS.keepaliveMinPingIntervalMs).describe("Client pings closer together than this are strikes; the third ends the connection with GOAWAY `ENHANCE_YOUR_CALM` `too_many_pings` (grpc-go's `EnforcementPolicy.MinTime`)")],
  Grpc__KeepalivePermitWithoutStream: ['keepalivePermitWithoutStream', env.bool(DEFAULT_LIMITS.keepalivePermitWithoutStream).describe("Whether clients may ping a connection without calls (grpc-go's `EnforcementPolicy.PermitWithoutStream`)")],
  Grpc__StreamWindowBytes: ['streamWindowBytes', bytes(DEFAULT_LIMITS.streamWindowBytes).describe("Each call's HTTP/2 flow-control window (`SETTINGS_INITIAL_WINDOW_SIZE`) once the connection carried a message over 64 KiB (until then HTTP/2's 64 KiB): what a client may send before the server reads it; 65535..2147483647")],
  Grpc__ConnectionWindowBytes: ['connectionWindowBytes', bytes(DEFAULT_LIMITS.connectionWindowBytes).describe("The connection's flow-control window, shared by its calls; 65535..2147483647")],
} as const satisfies Record<string, readonly [keyof GrpcSettings, z.ZodType]>;
type GrpcVariable = keyof typeof GRPC_VARIABLES;
const grpcShape = Object.fromEntries(Object.entries(GRPC_VARIABLES).map(([name, [, schema]]) => [name, schema])) as { [Name in GrpcVariable]: (typeof GRPC_VARIABLES)[Name][1] };
const variableOf = (limit: keyof GrpcServerLimits): string =>
  limit === 'maxReceiveMessageBytes' ? `Cache__MaxValueBytes + ${MESSAGE_OVERHEAD_BYTES}` : Object.entries(GRPC_VARIABLES).find(([, [key]]) => key === limit)![0];

/** The transport's limits from the parsed variables, or every reason they cannot work together. */
function grpcSettings(vars: Partial<Record<GrpcVariable, number | boolean>> & { Grpc__MaxAnswerBytes?: number; Cache__MaxValueBytes: number }): GrpcSettings {
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
  ...grpcShape,
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
    grpc: grpcSettings(vars),
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
