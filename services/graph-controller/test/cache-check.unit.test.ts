import { describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import { firstMissed } from '../src/informer/cache-check.js';

const cachedService = (key: string, resourceVersion: string): V1Service => {
  const [namespace, name] = key.split('/');
  return { metadata: { namespace, name, resourceVersion } };
};

describe('firstMissed', () => {
  const cache = new Map([
    ['shop/orders', cachedService('shop/orders', '10')],
    ['shop/billing', cachedService('shop/billing', '11')],
  ]);
  const check = (listed: Array<[string, string]>, touched: string[] = []) => firstMissed(new Map(listed), cache.values(), new Set(touched), (key) => cache.get(key));

  it('should find nothing when the list and the cache agree', () => {
    expect(check([['shop/orders', '10'], ['shop/billing', '11']])).toBeUndefined();
  });

  it('should name a Service changed, added or deleted behind the watch', () => {
    expect(check([['shop/orders', '12'], ['shop/billing', '11']])).toBe('shop/orders');
    expect(check([['shop/orders', '10'], ['shop/billing', '11'], ['shop/search', '13']])).toBe('shop/search');
    expect(check([['shop/orders', '10']])).toBe('shop/billing');
  });

  it('should not count what the watch delivered while the list was under way', () => {
    expect(check([['shop/orders', '9'], ['shop/search', '13']], ['shop/orders', 'shop/search', 'shop/billing'])).toBeUndefined();
  });
});
