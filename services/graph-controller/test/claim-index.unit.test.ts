import { describe, expect, it } from '@jest/globals';
import { createClaimIndex } from '../src/reconcile/claim-index.js';
import { resolveClaims } from '../src/reconcile/desired-state.js';
import { graph, service } from './support/services.js';

describe('claim index', () => {
  it('should only count valid claims on a name', () => {
    const index = createClaimIndex('cluster.local');
    index.set(service({ name: 'old-invalid', namespace: 'a', created: '2025-01-01T00:00:00Z', annotations: graph('orders', { 'graph-registry.io/port': 'nope' }) }));
    index.set(service({ name: 'other-name', namespace: 'a', created: '2025-01-01T00:00:00Z', annotations: graph('billing') }));
    index.set(service({ name: 'plain', namespace: 'a', created: '2025-01-01T00:00:00Z' }));
    index.set(service({ name: 'young', namespace: 'b', created: '2026-06-01T00:00:00Z', annotations: graph('orders') }));
    const resolved = resolveClaims(index.claimsOn('orders'));
    expect(resolved.winner).toEqual({ key: 'b/young', name: 'orders', url: 'http://young.b.svc.cluster.local:8080/graphql', createdAt: Date.parse('2026-06-01T00:00:00Z') });
    expect(resolved.losers).toEqual([]);
    expect(index.parsed('a/old-invalid')).toMatchObject({ kind: 'invalid' });
    expect(index.parsed('a/plain')).toEqual({ kind: 'none' });
    expect([...index.annotatedKeys()].sort()).toEqual(['a/old-invalid', 'a/other-name', 'b/young']);
  });

  it('should move a claim when the Service renames its graph, and drop it when the Service goes', () => {
    const index = createClaimIndex('cluster.local');
    index.set(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    index.set(service({ name: 'orders', namespace: 'shop', annotations: graph('shop-orders') }));
    expect(index.claimsOn('orders')).toEqual([]);
    expect(index.claimsOn('shop-orders').map((claim) => claim.key)).toEqual(['shop/orders']);
    index.set(service({ name: 'orders', namespace: 'shop' }));
    expect(index.claimsOn('shop-orders')).toEqual([]);
    expect([...index.annotatedKeys()]).toEqual([]);
    index.set(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    index.delete('shop/orders');
    expect([...index.claims()]).toEqual([]);
    expect(index.parsed('shop/orders')).toEqual({ kind: 'none' });
  });
});
