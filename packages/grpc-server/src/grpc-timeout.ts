/** Milliseconds per unit of `grpc-timeout`, by the unit's character code. */
function unitMs(code: number): number {
  switch (code) {
    case 0x48: // H
      return 3_600_000;
    case 0x4d: // M
      return 60_000;
    case 0x53: // S
      return 1000;
    case 0x6d: // m
      return 1;
    case 0x75: // u
      return 0.001;
    case 0x6e: // n
      return 0.000_001;
    default:
      return Number.NaN;
  }
}

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
  return value * unitMs(header.charCodeAt(last));
}
