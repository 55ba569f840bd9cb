import type { V1Service } from '@kubernetes/client-node';
import { parseGraphAnnotations, type GraphAnnotation } from './annotations.js';
import { claimFrom, serviceKey, type GraphClaim } from './desired-state.js';

const NONE: GraphAnnotation = { kind: 'none' };

/**
 * Every Service's annotations, parsed once when the informer hands the Service over, and the
 * claims on each graph name. Kept by the informers' events, so a reconcile looks up the claims on
 * a name instead of scanning every Service: O(1) per Service, whatever the cluster's size.
 */
export interface ClaimIndex {
  /** Takes the Service's current annotations; returns its claim, when valid. */
  set(service: V1Service): GraphClaim | undefined;
  /** The Service is gone. */
  delete(key: string): void;
  /** What the Service's annotations say (`none` for a Service unknown or not opted in). */
  parsed(key: string): GraphAnnotation;
  /** Valid claims on the name, in no particular order. */
  claimsOn(name: string): GraphClaim[];
  /** Every valid claim. */
  claims(): IterableIterator<GraphClaim>;
  /** Services that opt in, valid or not. */
  annotatedKeys(): IterableIterator<string>;
}

interface Entry {
  parsed: GraphAnnotation;
  claim: GraphClaim | undefined;
}

export function createClaimIndex(clusterDomain: string): ClaimIndex {
  /** Only Services that opt in: the others cost nothing here. */
  const byKey = new Map<string, Entry>();
  const byName = new Map<string, Map<string, GraphClaim>>();

  const unlink = (key: string): void => {
    const claim = byKey.get(key)?.claim;
    if (!claim) return;
    const claims = byName.get(claim.name);
    claims?.delete(key);
    if (claims?.size === 0) byName.delete(claim.name);
  };

  return {
    set(service) {
      const key = serviceKey(service);
      unlink(key);
      const parsed = parseGraphAnnotations(service, clusterDomain);
      if (parsed.kind === 'none') {
        byKey.delete(key);
        return undefined;
      }
      const claim = claimFrom(service, parsed);
      byKey.set(key, { parsed, claim });
      if (claim) {
        let claims = byName.get(claim.name);
        if (!claims) byName.set(claim.name, (claims = new Map<string, GraphClaim>()));
        claims.set(key, claim);
      }
      return claim;
    },
    delete(key) {
      unlink(key);
      byKey.delete(key);
    },
    parsed: (key) => byKey.get(key)?.parsed ?? NONE,
    claimsOn: (name) => [...(byName.get(name)?.values() ?? [])],
    *claims() {
      for (const claims of byName.values()) yield* claims.values();
    },
    annotatedKeys: () => byKey.keys(),
  };
}
