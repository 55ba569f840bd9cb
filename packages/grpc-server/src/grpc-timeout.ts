// Looked up by the header's last character: V8 keeps one-character strings, so this makes no garbage.
const TIMEOUT_UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/**
 * The `grpc-timeout` header in milliseconds: at most 8 digits and a unit (H M S m u n), as
 * PROTOCOL-HTTP2 defines it. Undefined when absent; NaN when malformed. Read character by
 * character: every call carries one, and a regular expression's match would be garbage each time.
 */
export function parseGrpcTimeout(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || header.length < 2 || header.length > 9) return Number.NaN;
  const last = header.length - 1;
  let value = 0;
  for (let i = 0; i < last; i++) {
    const digit = header.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value * (TIMEOUT_UNIT_MS[header[last]!] ?? Number.NaN);
}
