// The attacks of bench/grpc-attacks.bench.ts at issue 39's scale, by name, given the cache's port
// (test/support/grpc-attacks.ts). Run in a process of their own (attacker-process.ts).
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { bigHeaders, neverEnding, noPreface, pingFlood, reflectionFlood, resetStorm, settingsFlood, tinyFrames, unreadAnswers, unreadSubscribe, type AttackReport } from '../../test/support/grpc-attacks.ts';

/** A key the benchmark set beforehand to a 1 MiB value (unreadGetMany asks for it). */
export const BIG_KEY = 'attack:big';
const longKey = 'k'.repeat(1000);

/** unreadSubscribe's Sets flood from a well-behaved client of the attacker's own. */
async function subscribeWhileSetsFlood(port: number): Promise<AttackReport> {
  const writer = createCacheClient<Buffer>({ address: `127.0.0.1:${port}`, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
  try {
    return await unreadSubscribe(port, { streams: 100, durationMs: 10_000, write: (i) => writer.set(`${longKey}${i % 1000}`, Buffer.from('v')) });
  } finally {
    writer.close();
  }
}

export const ATTACKS: Record<string, (port: number) => Promise<AttackReport>> = {
  resetStorm: (port) => resetStorm(port, 10_000),
  tinyFrames: (port) => tinyFrames(port, 30, 60_000),
  neverEnding: (port) => neverEnding(port, { connections: 50, streams: 100, announced: 512 * 1024, sent: 512 * 1024 - 1, holdMs: 5000 }),
  unreadGetMany: (port) => unreadAnswers(port, { connections: 10, streams: 50, key: BIG_KEY, fits: 3, holdMs: 15_000 }),
  reflectionFlood: (port) => reflectionFlood(port, { streams: 10, requests: 8000, holdMs: 5000 }),
  pingFlood: (port) => pingFlood(port, 5000),
  settingsFlood: (port) => settingsFlood(port, 5000),
  noPreface: (port) => noPreface(port, { connections: 1000, holdMs: 12_000 }),
  unreadSubscribe: subscribeWhileSetsFlood,
  bigHeaders: (port) => bigHeaders(port, { calls: 3000, bytes: 60 * 1024 }),
};
