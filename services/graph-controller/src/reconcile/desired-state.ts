import type { V1Service } from '@kubernetes/client-node';
import { parseGraphAnnotations, type GraphAnnotation } from './annotations.js';

/** A Service's valid claim on a graph name. */
export interface GraphClaim {
  /** The Service, as `namespace/name`. */
  key: string;
  name: string;
  url: string;
  /** creationTimestamp in ms since the epoch; a Service without one sorts last. */
  createdAt: number;
  /** The Service opted into federation: its subgraph schema is published with its URL. */
  federated?: boolean;
}

/** Who gets a name: the oldest claim, and every other claim, which loses. */
export interface NameResolution {
  winner: GraphClaim | undefined;
  losers: readonly GraphClaim[];
}

/** What to do to the registry for one name. */
export type NameAction =
  | { kind: 'register'; url: string }
  | { kind: 'unchanged' }
  | { kind: 'delete' }
  /** Nobody claims the name and the registry holds nothing of ours under it. */
  | { kind: 'none' };

/** `namespace/name` of a Service: the queue key. */
export function serviceKey(service: V1Service): string {
  return `${service.metadata?.namespace ?? 'default'}/${service.metadata?.name ?? ''}`;
}

/**
 * creationTimestamp as ms. Objects from a list arrive deserialized (a Date); objects from a watch
 * event arrive as JSON (an RFC 3339 string): both are accepted.
 */
export function createdAt(service: V1Service): number {
  const value = service.metadata?.creationTimestamp as Date | string | undefined;
  const time = value === undefined ? Number.NaN : new Date(value).getTime();
  return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
}

/** The claim of a Service whose annotations were parsed, when they are valid. */
export function claimFrom(service: V1Service, parsed: GraphAnnotation): GraphClaim | undefined {
  if (parsed.kind !== 'graph') return undefined;
  return { key: serviceKey(service), name: parsed.name, url: parsed.url, createdAt: createdAt(service), ...(parsed.federated ? { federated: true } : {}) };
}

/** The Service's claim, when its annotations are present and valid. */
export function claimOf(service: V1Service, clusterDomain: string): GraphClaim | undefined {
  return claimFrom(service, parseGraphAnnotations(service, clusterDomain));
}

/** Oldest first; equal timestamps (they have a one-second resolution) by `namespace/name`. */
export function compareClaims(a: GraphClaim, b: GraphClaim): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  if (a.key === b.key) return 0;
  return a.key < b.key ? -1 : 1;
}

/** Resolves a name among the claims on it: the oldest Service wins, the others lose. */
export function resolveClaims(claims: readonly GraphClaim[]): NameResolution {
  const [winner, ...losers] = [...claims].sort(compareClaims);
  return { winner, losers };
}

/**
 * The registry change for one name, from who wins it, what the registry holds now, and the URLs
 * Services were seen claiming under it. A URL is only deleted when it is one of those, so a URL
 * someone else registered is never removed.
 */
export function planName(input: { winner: GraphClaim | undefined; registryUrl: string | undefined; knownUrls: ReadonlySet<string> }): NameAction {
  if (input.winner) return input.registryUrl === input.winner.url ? { kind: 'unchanged' } : { kind: 'register', url: input.winner.url };
  if (input.registryUrl !== undefined && input.knownUrls.has(input.registryUrl)) return { kind: 'delete' };
  return { kind: 'none' };
}
