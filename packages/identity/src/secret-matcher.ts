import { timingSafeEqual } from 'node:crypto';

/** `value`'s UTF-8 bytes in a zeroed buffer of `width` bytes, cut at `width`. */
function padded(value: string, width: number): Buffer {
  const bytes = Buffer.alloc(width);
  bytes.write(value, 'utf8');
  return bytes;
}

/**
 * A predicate telling whether a presented secret (API key, webhook code) equals one of the
 * configured ones — several during a rotation. Every comparison runs over buffers as wide as the
 * longest configured secret, so its time depends on neither the secrets' contents nor their
 * lengths (only on the presented value's length, which the caller knows anyway); every configured
 * secret is compared (no early exit telling which one, or how many, matched). Padding instead of
 * hashing both sides keeps the hot path of every authenticated request cheap (see `make bench`).
 */
export function createSecretMatcher(secrets: readonly string[]): (presented: string | undefined) => boolean {
  const width = Math.max(1, ...secrets.map((secret) => Buffer.byteLength(secret)));
  const expected = secrets.map((secret) => ({ bytes: padded(secret, width), length: Buffer.byteLength(secret) }));
  return (presented) => {
    if (presented === undefined || presented === '') return false;
    const candidate = padded(presented, width);
    const length = Buffer.byteLength(presented);
    let matched = false;
    for (const secret of expected) matched = (timingSafeEqual(candidate, secret.bytes) && length === secret.length) || matched;
    return matched;
  };
}
