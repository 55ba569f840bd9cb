const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/**
 * The `grpc-timeout` header in milliseconds: at most 8 digits and a unit (H M S m u n), as
 * PROTOCOL-HTTP2 defines it. Undefined when absent; NaN when malformed.
 */
export function parseGrpcTimeout(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = typeof header === 'string' ? /^(\d{1,8})([HMSmun])$/.exec(header) : null;
  return match === null ? Number.NaN : Number(match[1]) * TIMEOUT_UNIT_MS[match[2]!]!;
}
