import { afterEach, describe, expect, it } from '@jest/globals';
import { eventually } from '../../../test/support/eventually.js';
import { loadConfig } from '../src/config.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import { keepReading, nearClient, plainClient, servedFromMemory, staleReads, write, type Write } from './near-cache-clients.js';

const KEY = 'session:aged';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** How often the server retired a connection for its age (GOAWAY max_age), from its metrics. */
async function retiredForAge(cache: RunningCache): Promise<number> {
  const text = await cache.registry.metrics();
  const line = text.split('\n').find((row) => row.includes('limit="max_connection_age"') && !row.startsWith('#'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('near cache across the maximum connection age', () => {
  // The server retires every connection at its maximum age (GOAWAY, then cut after the grace), the
  // near cache's Subscribe stream included (services/cache/README.md, "Near cache"): the stream
  // keeps announcing changes through the grace, and once it is cut the client flushes, reads
  // through and subscribes again on a new connection. No read may answer an older value than the
  // last write that completed before it began.
  it('should announce changes on the old stream during the grace, flush at the cut, and serve from memory again after resubscribing', async () => {
    const grpc = loadConfig({ Grpc__MaxConnectionAgeMs: '1500', Grpc__MaxConnectionAgeGraceMs: '2500' }).grpc;
    const cache = await startCache({ kind: 'memory', capacity: 1000 }, 1024 * 1024, 0, {}, undefined, grpc);
    cleanups.push(() => cache.close());
    const a = nearClient(cache.address);
    const b = plainClient(cache.address);
    cleanups.push(() => a.close(), () => b.close());
    const writes: Write[] = [];
    await a.nearCache!.whenLive();
    await write(b, KEY, 'v1', writes);
    await servedFromMemory(a, KEY, 'v1');
    const reading = keepReading(a, KEY);

    // The first GOAWAY went out; the stream lives on its old connection until the grace ends.
    await eventually(async () => (await retiredForAge(cache)) > 0, 5000, 'a connection retired for its age');
    expect(a.nearCache).toMatchObject({ live: true, flushes: 0 });
    await write(b, KEY, 'v2', writes);
    await servedFromMemory(a, KEY, 'v2');
    expect(a.nearCache!.flushes).toBe(0);

    // The grace over, the connection is cut: the client flushes, then subscribes again.
    await eventually(() => a.nearCache!.flushes > 0, 6000, 'the near cache flushed at the cut');
    await write(b, KEY, 'v3', writes);
    await a.nearCache!.whenLive(5000);
    await servedFromMemory(a, KEY, 'v3');
    const reads = await reading.stop();
    expect(staleReads(reads, writes)).toEqual([]);
    expect(reads.filter((read) => read.error !== undefined)).toEqual([]);
  }, 30_000);
});
