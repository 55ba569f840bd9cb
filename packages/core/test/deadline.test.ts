import { describe, expect, it } from '@jest/globals';
import { withDeadline } from '../src/deadline.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('withDeadline', () => {
  it('should give the value or the failure of work that settles in time', async () => {
    await expect(withDeadline(Promise.resolve(42), 1000)).resolves.toBe(42);
    await expect(withDeadline(Promise.reject(new Error('refused')), 1000)).rejects.toThrow('refused');
  });

  it('should reject work that outlives the deadline, naming it, after abandoning it', async () => {
    const abandoned: string[] = [];
    await expect(withDeadline(never(), 20, { what: 'publish', onTimeout: () => abandoned.push('publish') })).rejects.toThrow('publish timed out after 20 ms');
    expect(abandoned).toEqual(['publish']);
    await expect(withDeadline(never(), 10)).rejects.toThrow(/^timed out after 10 ms$/);
  });

  it('should not abandon work that settled before the deadline', async () => {
    let abandoned = false;
    await withDeadline(Promise.resolve(), 20, { onTimeout: () => (abandoned = true) });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(abandoned).toBe(false);
  });
});
