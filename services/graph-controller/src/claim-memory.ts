import type { GraphClaim } from './desired-state.js';

interface Seen {
  key: string;
  url: string;
  seenAt: number;
}

/**
 * Which URLs Services have been seen claiming under which names. It is how the controller knows,
 * after a Service or its annotation is gone, which names to look at and which registry values are
 * its own to delete. Built from the informers' events on every replica (a follower that becomes
 * leader then knows what its predecessor registered), and rebuilt from the Services on start.
 */
export interface ClaimMemory {
  observe(claim: GraphClaim, now?: number): void;
  /** Names the Service was seen claiming. */
  namesOf(key: string): string[];
  /** URLs Services were seen claiming under the name. */
  urlsFor(name: string): Set<string>;
  hasKey(key: string): boolean;
  /** Every Service remembered. */
  keys(): Set<string>;
  /** After the name was reconciled: only its current claims remain remembered. */
  settle(name: string, claims: readonly GraphClaim[], now?: number): void;
  /** Forgets what was last seen before `before` (a follower's housekeeping; the leader settles instead). */
  pruneSeenBefore(before: number): number;
}

export function createClaimMemory(): ClaimMemory {
  const byName = new Map<string, Map<string, Seen>>();
  const remember = (claim: GraphClaim, now: number): void => {
    let seen = byName.get(claim.name);
    if (!seen) byName.set(claim.name, (seen = new Map<string, Seen>()));
    seen.set(`${claim.key} ${claim.url}`, { key: claim.key, url: claim.url, seenAt: now });
  };
  return {
    observe: (claim, now = Date.now()) => remember(claim, now),
    namesOf: (key) => [...byName].filter(([, seen]) => [...seen.values()].some((entry) => entry.key === key)).map(([name]) => name),
    urlsFor: (name) => new Set([...(byName.get(name)?.values() ?? [])].map((entry) => entry.url)),
    hasKey: (key) => [...byName.values()].some((seen) => [...seen.values()].some((entry) => entry.key === key)),
    keys: () => new Set([...byName.values()].flatMap((seen) => [...seen.values()].map((entry) => entry.key))),
    settle(name, claims, now = Date.now()) {
      byName.delete(name);
      for (const claim of claims) remember(claim, now);
    },
    pruneSeenBefore(before) {
      let pruned = 0;
      for (const [name, seen] of byName) {
        for (const [id, entry] of seen) {
          if (entry.seenAt < before) {
            seen.delete(id);
            pruned += 1;
          }
        }
        if (seen.size === 0) byName.delete(name);
      }
      return pruned;
    },
  };
}
