import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';
import { askLiveNode, REPLICATION_ARGS, waitForReplicas, type RedisClusterSet } from './redis-cluster.js';
import { freePort, spawnRedis, type RedisProcess } from './redis-server.js';

/** How long sentinels wait before they call a silent primary down. Short for tests; Redis' default is 30 s. */
export const SENTINEL_DOWN_AFTER_MS = 1000;
const MASTER = 'mymaster';

/** A Sentinel set of the test's own: 1 primary, 2 replicas and 3 sentinels (quorum 2), on free loopback ports. */
export type RedisSentinelSet = RedisClusterSet;

const askSentinels = <T>(sentinels: readonly RedisProcess[], ask: (client: Redis) => Promise<T>): Promise<T> => askLiveNode(sentinels, ask, 'sentinel');

const primaryPortSeen = (client: Redis): Promise<number> =>
  (client.call('SENTINEL', 'get-master-addr-by-name', MASTER) as Promise<[string, string]>).then(([, port]) => Number(port));

async function startSentinel(dir: string, primaryPort: number): Promise<RedisProcess> {
  const port = await freePort();
  // Sentinel rewrites its configuration file as it learns the set, so each has its own, writable.
  const file = join(dir, `sentinel-${port}.conf`);
  await writeFile(
    file,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${MASTER} ${SENTINEL_DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${MASTER} 3000`,
      '',
    ].join('\n'),
  );
  return spawnRedis(port, [file, '--sentinel']);
}

/** Starts the set with redis-server (and redis-server --sentinel) and waits until both replicas are in sync. */
export async function startRedisSentinel(): Promise<RedisSentinelSet> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-sentinel-'));
  const serverArgs = async (port: number): Promise<string[]> => {
    await mkdir(join(dir, String(port)));
    return ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', ...REPLICATION_ARGS, '--dir', join(dir, String(port))];
  };
  const primaryPort = await freePort();
  const servers: RedisProcess[] = [];
  const sentinels: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all([...servers, ...sentinels].map((node) => node.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    servers.push(await spawnRedis(primaryPort, await serverArgs(primaryPort)));
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      servers.push(await spawnRedis(port, [...(await serverArgs(port)), '--replicaof', '127.0.0.1', String(primaryPort)]));
    }
    for (let i = 0; i < 3; i++) sentinels.push(await startSentinel(dir, primaryPort));
  } catch (err) {
    await stop();
    throw err;
  }
  const nodes = [...servers, ...sentinels];
  const primaryPorts = (): Promise<number[]> => askSentinels(sentinels, async (client) => [await primaryPortSeen(client)]);
  const waitUntilHealthy = async (timeoutMs = 20_000): Promise<void> => {
    await eventually(
      async () => {
        const [port] = await primaryPorts();
        const primary = servers.find((server) => server.port === port);
        if (primary?.alive !== true) return false;
        const client = new Redis({ host: '127.0.0.1', port: primary.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        try {
          await client.connect();
          return (await client.info('replication')).includes('role:master');
        } finally {
          client.disconnect();
        }
      },
      timeoutMs,
      'a live primary named by the sentinels',
    );
  };
  try {
    await waitForReplicas(primaryPort, 2);
    // Every sentinel has found the replicas and the other sentinels (it announces itself every 2 s).
    await eventually(
      () =>
        Promise.all(
          sentinels.map(async (sentinel) => {
            const client = new Redis({ host: '127.0.0.1', port: sentinel.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
            try {
              const [master] = (await client.call('SENTINEL', 'masters')) as string[][];
              const field = (name: string): number => Number(master![master!.indexOf(name) + 1]);
              return field('num-slaves') === 2 && field('num-other-sentinels') === 2;
            } finally {
              client.disconnect();
            }
          }),
        ).then((ready) => ready.every(Boolean)),
      20_000,
      'sentinels that know the whole set',
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `redis+sentinel://${sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',')}/${MASTER}`,
    nodes,
    primaryPortOf: async () => (await primaryPorts())[0]!,
    primaryPorts,
    async kill(port) {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node) throw new Error(`no node on port ${port}`);
      await node.kill();
    },
    waitUntilHealthy,
    stop,
  };
}
