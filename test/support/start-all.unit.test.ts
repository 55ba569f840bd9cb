import { describe, expect, it } from '@jest/globals';
import { startAll } from './start-all.js';

describe('startAll', () => {
  it('should resolve to every started value, in order', async () => {
    const stopped: string[] = [];
    const values = await startAll<[string, number]>([
      [Promise.resolve('a'), (value) => stopped.push(value)],
      [Promise.resolve(2), (value) => stopped.push(String(value))],
    ]);
    expect(values).toEqual(['a', 2]);
    expect(stopped).toEqual([]);
  });

  it('should stop those that started when one fails, then throw that failure', async () => {
    const stopped: string[] = [];
    const slow = new Promise<string>((resolve) => setTimeout(() => resolve('slow'), 20));
    const started = startAll<[string, string, string]>([
      [Promise.resolve('kafka'), (value) => stopped.push(value)],
      [Promise.reject(new Error('keycloak: no space left on device')), () => stopped.push('never started')],
      [slow, (value) => stopped.push(value)],
    ]);
    await expect(started).rejects.toThrow('keycloak: no space left on device');
    expect(stopped.sort()).toEqual(['kafka', 'slow']);
  });

  it('should throw the start failure even when a stop fails too', async () => {
    const started = startAll<[string, string]>([
      [Promise.resolve('redis'), () => Promise.reject(new Error('already gone'))],
      [Promise.reject(new Error('port in use')), () => undefined],
    ]);
    await expect(started).rejects.toThrow('port in use');
  });
});
