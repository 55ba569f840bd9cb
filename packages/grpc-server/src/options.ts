/** What the server logs: pino's Logger fits. */
export interface GrpcServerLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/**
 * The server's limits. Each has a default (DEFAULT_LIMITS, README "Limits") chosen beside
 * grpc-go's; 0 turns a time limit off.
 */
export interface GrpcServerLimits {
  /** The largest request message read; a larger one is refused (RESOURCE_EXHAUSTED) from its prefix. */
  maxReceiveMessageBytes: number;
  /** The largest answer message sent; a larger one ends its call RESOURCE_EXHAUSTED instead. */
  maxSendMessageBytes: number;
  /** Streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams: number;
  /** The largest request header list (SETTINGS_MAX_HEADER_LIST_SIZE); a larger one resets its stream. */
  maxMetadataBytes: number;
  /** Open connections; further ones are closed as they arrive. */
  maxConnections: number;
  /** Bytes one connection may hold for its calls (requests being read or handled, answers not yet sent). */
  connectionBufferBytes: number;
  /** Bytes all connections together may hold (plus each connection's reserve, budgets.ts). */
  processBufferBytes: number;
  /** A unary call's longest run when its client sent no deadline (and the cap on one it sent). */
  maxCallDurationMs: number;
  /** How long a stream whose client is still sending may go without a DATA frame. */
  streamIdleTimeoutMs: number;
  /** How long an answer may wait for its client to read (no byte of it sent) before its stream is reset. */
  writeTimeoutMs: number;
  /** From the TCP connection to the client's HTTP/2 preface and SETTINGS. */
  handshakeTimeoutMs: number;
  /** A connection without streams this long is closed (GOAWAY). */
  connectionIdleTimeoutMs: number;
  /** A connection this old (±10%) is closed gracefully (GOAWAY): clients reconnect, new replicas get traffic. */
  maxConnectionAgeMs: number;
  /** Then its calls have this long to finish before it is cut. */
  maxConnectionAgeGraceMs: number;
  /** The server pings a connection it has heard nothing from this long… */
  keepaliveTimeMs: number;
  /** …and closes it when the ping is not answered within this (a half-open connection). */
  keepaliveTimeoutMs: number;
  /** Client pings closer together than this are strikes (grpc-go's EnforcementPolicy.MinTime); the third ends the connection. */
  keepaliveMinPingIntervalMs: number;
  /** Whether clients may ping a connection without streams (EnforcementPolicy.PermitWithoutStream). */
  keepalivePermitWithoutStream: boolean;
  /** The flow-control window of each stream (SETTINGS_INITIAL_WINDOW_SIZE): what a client may send before the server reads it. */
  streamWindowBytes: number;
  /** The connection's flow-control window, shared by its streams. */
  connectionWindowBytes: number;
}

/**
 * A limit that acted: a connection refused or closed, a stream reset or refused, a message or an
 * answer refused. Counted by the service (a metric), never logged one by one: a flood of them
 * would flood the logs.
 */
export type LimitName =
  | 'max_connections'
  | 'handshake_timeout'
  | 'connection_idle'
  | 'max_connection_age'
  | 'keepalive_timeout'
  | 'too_many_pings'
  | 'too_many_resets'
  | 'too_many_streams_per_read'
  | 'too_many_small_frames'
  | 'metadata_size'
  | 'stream_budget'
  | 'message_budget'
  | 'answer_budget'
  | 'answer_size'
  | 'stream_idle_timeout'
  | 'write_timeout'
  | 'max_call_duration';

export interface GrpcServerOptions extends Partial<GrpcServerLimits> {
  maxReceiveMessageBytes: number;
  logger: GrpcServerLogger;
  /** Told each time a limit acts. */
  onLimit?: (limit: LimitName) => void;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Omit<GrpcServerLimits, 'maxReceiveMessageBytes'> = {
  // grpc-go's client refuses answers over 4 MiB by default (as grpc-js' does): a larger one helps no one.
  maxSendMessageBytes: 4 * MiB,
  maxConcurrentStreams: 100,
  // gRPC core's hard limit; grpc-go's default is moving from 16 MiB to 8 KiB.
  maxMetadataBytes: 16 * 1024,
  maxConnections: 1000,
  connectionBufferBytes: 8 * MiB,
  // Measured (bench/grpc-attacks.bench.ts): what else 5,000 hostile streams cost (their objects,
  // the DATA frames read and dropped) comes on top, and the process' RSS must stay within 100 MB of
  // its start; 32 MiB is 32 one-MiB Sets in flight at once, far more than the platform sends.
  processBufferBytes: 32 * MiB,
  maxCallDurationMs: 30_000,
  streamIdleTimeoutMs: 10_000,
  writeTimeoutMs: 10_000,
  // grpc-go's ConnectionTimeout is 120 s; a connection that has not spoken HTTP/2 in 10 s is not a client.
  handshakeTimeoutMs: 10_000,
  connectionIdleTimeoutMs: 5 * 60_000,
  maxConnectionAgeMs: 30 * 60_000,
  maxConnectionAgeGraceMs: 30_000,
  // grpc-go pings after 2 h; a minute finds a half-open connection (a node gone) while it still holds a connection slot.
  keepaliveTimeMs: 60_000,
  keepaliveTimeoutMs: 20_000,
  keepaliveMinPingIntervalMs: 5 * 60_000,
  keepalivePermitWithoutStream: false,
  // A 1 MiB message in 4 round trips instead of HTTP/2's 16. Wider (1 MiB, 2 MiB) lets one
  // client's back-to-back 1 MiB Sets arrive in bursts that cost other callers' Gets their p99
  // (services/cache/test/worst-request.test.ts failed 2 runs of 3 on a loaded machine; 256 KiB passed 3 of 3).
  streamWindowBytes: 256 * 1024,
  connectionWindowBytes: 512 * 1024,
};

/**
 * Why these limits cannot work together, one line each (none: they can); `name` spells a limit as
 * the caller's configuration does (an environment variable).
 */
export function limitProblems(limits: GrpcServerLimits, name: (limit: keyof GrpcServerLimits) => string = (limit) => limit): string[] {
  const problems: string[] = [];
  const atLeast = (limit: keyof GrpcServerLimits, other: keyof GrpcServerLimits, what: string): void => {
    if ((limits[limit] as number) < (limits[other] as number)) problems.push(`${name(limit)}: must be at least ${name(other)} (${String(limits[other])}), ${what}`);
  };
  atLeast('connectionBufferBytes', 'maxReceiveMessageBytes', 'or the largest request could never be read');
  atLeast('connectionBufferBytes', 'maxSendMessageBytes', 'or the largest answer could never be sent');
  atLeast('connectionBufferBytes', 'streamWindowBytes', 'which a stream may bring in before the server reads it');
  atLeast('processBufferBytes', 'connectionBufferBytes', 'which one connection may hold');
  for (const window of ['streamWindowBytes', 'connectionWindowBytes'] as const) {
    if (limits[window] < 65_535 || limits[window] > 2 ** 31 - 1) problems.push(`${name(window)}: must be from 65535 (HTTP/2's default window) to 2147483647`);
  }
  return problems;
}

/** The options with every limit set; throws when they cannot work together. */
export function resolveLimits(options: GrpcServerOptions): GrpcServerLimits {
  const given = Object.fromEntries(Object.keys(DEFAULT_LIMITS).flatMap((key) => (options[key as keyof GrpcServerOptions] === undefined ? [] : [[key, options[key as keyof GrpcServerOptions]]])));
  const limits: GrpcServerLimits = { ...DEFAULT_LIMITS, ...given, maxReceiveMessageBytes: options.maxReceiveMessageBytes };
  const problems = limitProblems(limits);
  if (problems.length > 0) throw new Error(`GrpcServer: ${problems.join('; ')}`);
  return limits;
}
