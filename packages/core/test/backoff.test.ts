import { describe, expect, it } from '@jest/globals';
import { backoffDelay } from '../src/backoff.js';

describe('backoffDelay', () => {
  it('should double from the base and stop at the cap', () => {
    expect([1, 2, 3, 4, 5, 8, 9, 50].map((failures) => backoffDelay(failures, 200, 30_000))).toEqual([200, 400, 800, 1600, 3200, 25_600, 30_000, 30_000]);
  });

  it('should wait the base before any failure was counted, and stay finite after very many', () => {
    expect(backoffDelay(0, 200, 30_000)).toBe(200);
    expect(backoffDelay(1_000_000, 50, Number.POSITIVE_INFINITY)).toBe(50 * 2 ** 30);
  });
});
