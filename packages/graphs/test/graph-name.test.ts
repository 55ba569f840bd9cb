import { describe, expect, it } from '@jest/globals';
import { graphNameProblem } from '../src/graph-name.js';

describe('graph name rule', () => {
  it.each(['orders', 'a', 'shop.orders-v2_1', 'x'.repeat(63)])('should accept %s', (name) => {
    expect(graphNameProblem(name)).toBeUndefined();
  });

  it.each([undefined, '', 'Orders', '-orders', '.orders', 'x'.repeat(64), 'or ders', 'orders/x', 'ordérs'])('should reject %s as not matching the pattern', (name) => {
    expect(graphNameProblem(name)).toBe('pattern');
  });

  it.each(['schema', 'health'])('should reject %s as reserved by the registry', (name) => {
    expect(graphNameProblem(name)).toBe('reserved');
  });
});
