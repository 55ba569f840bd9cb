import { describe, expect, it } from '@jest/globals';
import { claimOf, createdAt, planName, resolveClaims, serviceKey, type GraphClaim } from '../src/reconcile/desired-state.js';
import { graph, service } from './support/services.js';

const claim = (key: string, createdAtIso: string, url = `http://${key}`): GraphClaim => ({ key, name: 'orders', url, createdAt: Date.parse(createdAtIso) });

describe('createdAt', () => {
  it('should read creationTimestamp as a Date (from a list) and as a string (from a watch event)', () => {
    const fromList = service({ name: 'a', created: '2026-03-01T10:00:00Z' });
    const fromWatch = JSON.parse(JSON.stringify(fromList)) as typeof fromList;
    expect(typeof fromWatch.metadata?.creationTimestamp).toBe('string');
    expect(createdAt(fromList)).toBe(Date.parse('2026-03-01T10:00:00Z'));
    expect(createdAt(fromWatch)).toBe(Date.parse('2026-03-01T10:00:00Z'));
  });

  it('should sort a Service without a creationTimestamp last', () => {
    const missing = service({ name: 'a' });
    delete missing.metadata!.creationTimestamp;
    expect(createdAt(missing)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('resolveClaims', () => {
  it('should give the name to the oldest Service', () => {
    const { winner, losers } = resolveClaims([claim('b/new', '2026-02-01T00:00:00Z'), claim('a/old', '2026-01-01T00:00:00Z'), claim('c/mid', '2026-01-15T00:00:00Z')]);
    expect(winner?.key).toBe('a/old');
    expect(losers.map((loser) => loser.key)).toEqual(['c/mid', 'b/new']);
  });

  it('should break a tie of creation times by namespace, then name', () => {
    const same = '2026-01-01T00:00:00Z';
    expect(resolveClaims([claim('shop/orders', same), claim('billing/orders', same)]).winner?.key).toBe('billing/orders');
    expect(resolveClaims([claim('shop/zeta', same), claim('shop/alpha', same)]).winner?.key).toBe('shop/alpha');
  });

  it('should have no winner without claims', () => {
    expect(resolveClaims([])).toEqual({ winner: undefined, losers: [] });
  });
});

describe('serviceKey', () => {
  it('should key Services by namespace/name', () => {
    const orders = service({ name: 'orders', namespace: 'shop', annotations: graph('orders') });
    expect(serviceKey(orders)).toBe('shop/orders');
    expect(claimOf(orders, 'cluster.local')?.key).toBe('shop/orders');
    expect(claimOf(service({ name: 'plain' }), 'cluster.local')).toBeUndefined();
  });
});

describe('planName', () => {
  const winner = claim('shop/orders', '2026-01-01T00:00:00Z', 'http://orders.shop.svc.cluster.local:8080/graphql');
  const ours = new Set([winner.url, 'http://old.shop.svc.cluster.local:8080/graphql']);

  it('should leave the registry alone when it holds the winner URL already', () => {
    expect(planName({ winner, registryUrl: winner.url, knownUrls: ours })).toEqual({ kind: 'unchanged' });
  });

  it('should register the winner URL when the registry holds nothing or something else', () => {
    expect(planName({ winner, registryUrl: undefined, knownUrls: new Set() })).toEqual({ kind: 'register', url: winner.url });
    expect(planName({ winner, registryUrl: 'http://elsewhere/graphql', knownUrls: ours })).toEqual({ kind: 'register', url: winner.url });
  });

  it('should delete a name nobody claims when the registry holds a URL a Service claimed', () => {
    expect(planName({ winner: undefined, registryUrl: 'http://old.shop.svc.cluster.local:8080/graphql', knownUrls: ours })).toEqual({ kind: 'delete' });
  });

  it('should never delete a URL someone else registered', () => {
    expect(planName({ winner: undefined, registryUrl: 'http://someone-else/graphql', knownUrls: ours })).toEqual({ kind: 'none' });
    expect(planName({ winner: undefined, registryUrl: 'http://someone-else/graphql', knownUrls: new Set() })).toEqual({ kind: 'none' });
  });

  it('should do nothing when nobody claims the name and the registry holds nothing', () => {
    expect(planName({ winner: undefined, registryUrl: undefined, knownUrls: ours })).toEqual({ kind: 'none' });
  });
});
