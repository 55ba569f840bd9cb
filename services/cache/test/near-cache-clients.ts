import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { eventually, sleep } from '../../../test/support/eventually.js';

/** Client A of the near-cache tests: serves `session:` and `token:` keys from memory. */
export function nearClient(address: string): CacheClient<string> {
  return createCacheClient<string>({ address, deadlineMs: 2000, retries: 0, nearCache: { prefixes: ['session:', 'token:'], maxEntries: 1000 } });
}

/** Client B: a plain client, the writer. */
export function plainClient(address: string): CacheClient<string> {
  return createCacheClient<string>({ address, deadlineMs: 2000, retries: 0 });
}

/** Until the client answers `value` for key from its memory (a read through may be spoiled by the announcement of the write it read). */
export async function servedFromMemory(client: CacheClient<string>, key: string, value: string, timeoutMs = 2000): Promise<void> {
  await eventually(
    async () => {
      const hits = client.nearCache!.hits;
      return (await client.get(key)) === value && client.nearCache!.hits === hits + 1;
    },
    timeoutMs,
    `serving "${value}" from memory`,
  );
}

/** One get by client A, with when it started (performance.now()) and what it answered. */
export interface Read {
  startedAt: number;
  value?: string | undefined;
  error?: unknown;
}

/** A write by client B: the value, and when its call resolved. */
export interface Write {
  value: string;
  doneAt: number;
}

/** Keeps `client` reading `key` (4 callers, 2 ms breaths) until stopped, as a busy auth replica would. */
export function keepReading(client: CacheClient<string>, key: string): { stop(): Promise<Read[]> } {
  const reads: Read[] = [];
  let running = true;
  const reader = async (): Promise<void> => {
    while (running) {
      const startedAt = performance.now();
      try {
        reads.push({ startedAt, value: await client.get(key) });
      } catch (error) {
        reads.push({ startedAt, error });
      }
      await sleep(2);
    }
  };
  const readers = Array.from({ length: 4 }, reader);
  return {
    async stop() {
      running = false;
      await Promise.all(readers);
      return reads;
    },
  };
}

/** Writes with B, retrying while the write fails (a failover), and records when it succeeded. */
export async function write(client: CacheClient<string>, key: string, value: string, writes: Write[]): Promise<void> {
  for (;;) {
    try {
      await client.set(key, value);
      writes.push({ value, doneAt: performance.now() });
      return;
    } catch {
      await sleep(50);
    }
  }
}

/**
 * Reads that answered something other than the last value written before they started: a stale
 * value served after the write that followed it. The values are `v1`, `v2`, … in write order.
 */
export function staleReads(reads: readonly Read[], writes: readonly Write[]): Read[] {
  return reads.filter((read) => {
    if (read.error !== undefined) return false;
    const latest = writes.filter((w) => w.doneAt <= read.startedAt).at(-1);
    if (latest === undefined) return false;
    const version = (value: string | undefined): number => Number(value?.slice(1) ?? -1);
    return version(read.value) < version(latest.value);
  });
}
