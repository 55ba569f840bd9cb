import { describe, expect, it } from '@jest/globals';
import { createRegistryView, UNKNOWN } from '../src/registry/registry-view.js';

describe('registry view', () => {
  it('should keep what was read or written while a refresh was under way over what the refresh returned', async () => {
    let answer!: (graphs: Map<string, string>) => void;
    const view = createRegistryView({ list: () => new Promise((resolve) => (answer = resolve)) });
    expect(view.lookup('orders')).toBe(UNKNOWN);
    const refreshing = view.refresh();
    view.note('orders', 'http://new');
    view.note('billing', undefined);
    answer(new Map([['orders', 'http://old'], ['billing', 'http://billing'], ['search', 'http://search']]));
    await refreshing;
    expect(view.lookup('orders')).toBe('http://new');
    expect(view.lookup('billing')).toBeUndefined();
    expect(view.lookup('search')).toBe('http://search');
    view.clear();
    expect(view.lookup('search')).toBe(UNKNOWN);
  });
});
