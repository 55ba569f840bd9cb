import { expect } from '@jest/globals';
import { Agent } from 'node:http';
import { send } from './http-client.js';
import { API_KEY } from './registry-fixture.js';

/** The 99th percentile of `values` (nearest rank). */
export function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/**
 * Runs `work` while two other callers look a graph up again and again over keep-alive
 * connections; resolves with the answer to `work` and the duration of every lookup (each must
 * answer 200) made while it ran.
 */
export async function lookupsDuring<T>(baseUrl: string, work: () => Promise<T>): Promise<{ result: T; lookupsMs: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const lookupsMs: number[] = [];
  let done = false;
  const caller = async (): Promise<void> => {
    while (!done) {
      const res = await send(baseUrl, { method: 'GET', path: '/orders', headers: { 'x-api-key': API_KEY }, agent, timeoutMs: 10_000 });
      expect(res.status).toBe(200);
      lookupsMs.push(res.durationMs);
    }
  };
  // Warm the connections first, so connection setup is not counted as a lookup.
  await Promise.all([caller, caller].map(async () => send(baseUrl, { method: 'GET', path: '/orders', headers: { 'x-api-key': API_KEY }, agent })));
  const callers = [caller(), caller()];
  try {
    const result = await work();
    return { result, lookupsMs };
  } finally {
    done = true;
    await Promise.all(callers);
    agent.destroy();
  }
}
