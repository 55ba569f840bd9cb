import { hash, timingSafeEqual } from 'node:crypto';

/** One-shot SHA-256 (no Hash object per call). */
const digest = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * A predicate telling whether a presented secret (API key, webhook code) equals one of the
 * configured ones — several during a rotation. Both sides are hashed first, so the comparison
 * runs over equal-length digests in constant time whatever the lengths, and every configured
 * secret is compared (no early exit telling which one, or how many, matched).
 */
export function createSecretMatcher(secrets: readonly string[]): (presented: string | undefined) => boolean {
  const expected = secrets.map(digest);
  return (presented) => {
    if (presented === undefined || presented === '') return false;
    const candidate = digest(presented);
    let matched = false;
    for (const secret of expected) matched = timingSafeEqual(candidate, secret) || matched;
    return matched;
  };
}
