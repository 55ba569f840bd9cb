import type { V1Service } from '@kubernetes/client-node';
import { serviceKey } from '../reconcile/desired-state.js';

/** `namespace/name` → resourceVersion, as a list returned them. */
export type Listed = ReadonlyMap<string, string | undefined>;

/**
 * The first Service on which the informer's cache and a fresh list disagree for a reason other
 * than a change the watch delivered meanwhile (`touched`: every key an event named since the
 * list began): one the list has and the cache lacks or holds at another resourceVersion, or one
 * the cache holds and the list lacks. Undefined: the watch missed nothing.
 */
export function firstMissed(listed: Listed, cached: Iterable<V1Service>, touched: ReadonlySet<string>, get: (key: string) => V1Service | undefined): string | undefined {
  for (const [key, resourceVersion] of listed) {
    if (touched.has(key)) continue;
    if (get(key)?.metadata?.resourceVersion !== resourceVersion) return key;
  }
  for (const service of cached) {
    const key = serviceKey(service);
    if (!listed.has(key) && !touched.has(key)) return key;
  }
  return undefined;
}
