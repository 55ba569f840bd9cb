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
 * Indexed both ways, so every question costs what one Service or one name holds, not the cluster.
 */
export interface ClaimMemory {
  observe(claim: GraphClaim, now?: number): void;
  /** Names the Service was seen claiming. */
  namesOf(key: string): string[];
  /** URLs Services were seen claiming under the name. */
  urlsFor(name: string): Set<string>;
  hasKey(key: string): boolean;
  /** Every Service remembered. */
  keys(): IterableIterator<string>;
  /** After the name was reconciled: only its current claims remain remembered. */
  settle(name: string, claims: readonly GraphClaim[], now?: number): void;
  /** Forgets what was last seen before `before` (a follower's housekeeping; the leader settles instead). */
  pruneSeenBefore(before: number): number;
}

/** `now`: the clock (Unix ms) of what was seen when, unless the caller says when. */
export function createClaimMemory(now: () => number): ClaimMemory {
  /** name → `key url` → when seen. */
  const byName = new Map<string, Map<string, Seen>>();
  /** key → name → how many URLs of the key are remembered under the name. */
  const byKey = new Map<string, Map<string, number>>();

  const link = (key: string, name: string, delta: number): void => {
    let names = byKey.get(key);
    if (!names) byKey.set(key, (names = new Map<string, number>()));
    const count = (names.get(name) ?? 0) + delta;
    if (count > 0) names.set(name, count);
    else names.delete(name);
    if (names.size === 0) byKey.delete(key);
  };
  const remember = (claim: GraphClaim, now: number): void => {
    let seen = byName.get(claim.name);
    if (!seen) byName.set(claim.name, (seen = new Map<string, Seen>()));
    const id = `${claim.key} ${claim.url}`;
    if (!seen.has(id)) link(claim.key, claim.name, 1);
    seen.set(id, { key: claim.key, url: claim.url, seenAt: now });
  };
  const forget = (name: string, seen: Map<string, Seen>, id: string, entry: Seen): void => {
    seen.delete(id);
    link(entry.key, name, -1);
    if (seen.size === 0) byName.delete(name);
  };
  return {
    observe: (claim, at = now()) => remember(claim, at),
    namesOf: (key) => [...(byKey.get(key)?.keys() ?? [])],
    urlsFor: (name) => new Set([...(byName.get(name)?.values() ?? [])].map((entry) => entry.url)),
    hasKey: (key) => byKey.has(key),
    keys: () => byKey.keys(),
    settle(name, claims, at = now()) {
      const seen = byName.get(name);
      for (const [id, entry] of seen ?? []) forget(name, seen!, id, entry);
      for (const claim of claims) remember(claim, at);
    },
    pruneSeenBefore(before) {
      let pruned = 0;
      for (const [name, seen] of byName) {
        for (const [id, entry] of seen) {
          if (entry.seenAt >= before) continue;
          forget(name, seen, id, entry);
          pruned += 1;
        }
      }
      return pruned;
    },
  };
}
