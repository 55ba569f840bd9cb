/**
 * Capped exponential backoff, the one retry delay of every service: `baseMs` after the first
 * failure, doubling with each consecutive one, at most `maxMs`.
 */
export function backoffDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}
