import { describe, expect, it } from '@jest/globals';
import { createClaimMemory } from '../src/reconcile/claim-memory.js';

const claim = (key: string, name: string, url = `http://${key}`) => ({ key, name, url, createdAt: 0 });

describe('claim memory', () => {
  it('should answer by Service and by name, and forget a name settled without the Service', () => {
    const memory = createClaimMemory(Date.now);
    memory.observe(claim('shop/orders', 'orders', 'http://a'));
    memory.observe(claim('shop/orders', 'orders', 'http://b'));
    memory.observe(claim('shop/orders', 'shop-orders'));
    memory.observe(claim('billing/orders', 'orders'));
    expect(memory.namesOf('shop/orders').sort()).toEqual(['orders', 'shop-orders']);
    expect(memory.urlsFor('orders')).toEqual(new Set(['http://a', 'http://b', 'http://billing/orders']));
    memory.settle('orders', [claim('billing/orders', 'orders')]);
    expect(memory.namesOf('shop/orders')).toEqual(['shop-orders']);
    memory.settle('shop-orders', []);
    expect(memory.hasKey('shop/orders')).toBe(false);
    expect([...memory.keys()]).toEqual(['billing/orders']);
  });

  it('should prune what was last seen before a time, by Service as well', () => {
    const memory = createClaimMemory(Date.now);
    memory.observe(claim('shop/orders', 'orders'), 1000);
    memory.observe(claim('shop/billing', 'billing'), 3000);
    expect(memory.pruneSeenBefore(2000)).toBe(1);
    expect(memory.hasKey('shop/orders')).toBe(false);
    expect(memory.namesOf('shop/billing')).toEqual(['billing']);
  });
});
