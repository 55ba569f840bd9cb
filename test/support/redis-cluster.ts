import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';
import { infra } from './infra.js';
import { freePorts } from './free-port.js';
import { spawnRedisNodes, type RedisProcess } from './redis-server.js';

/**
 * How long a primary may be unreachable before the cluster fails it over. Short, so a failover
 * test takes seconds; production keeps Redis' default (15 s) or its own choice.
 */
export const CLUSTER_NODE_TIMEOUT_MS = 1000;

/** A Redis Cluster of the test's own: 3 primaries and 3 replicas on free loopback ports. */
export interface RedisClusterSet {
  /** The platform's URL for it: redis+cluster://host:port,... (every node, primaries and replicas). */
  url: string;
  nodes: readonly RedisProcess[];
  /** The port of the primary that serves `key` now. */
  primaryPortOf(key: string): Promise<number>;
  /** Ports of the current primaries. */
  primaryPorts(): Promise<number[]>;
  /** SIGKILLs the node on `port`. */
  kill(port: number): Promise<void>;
  /** Until every slot is served by a live primary again (after a failover). */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Replicas start syncing at once (Redis waits 5 s by default to batch diskless syncs). */
export const REPLICATION_ARGS = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];

/** Until the server on `port` has `replicas` replicas online (initial sync done). */
export async function waitForReplicas(port: number, replicas: number, timeoutMs = 20_000): Promise<void> {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await eventually(
      async () => {
        const info = await client.info('replication');
        return (info.match(/^slave\d+:.*state=online/gm) ?? []).length >= replicas;
      },
      timeoutMs,
      `${replicas} replicas online on port ${port}`,
    );
  } finally {
    client.disconnect();
  }
}

const execFileAsync = promisify(execFile);

type SlotRange = [number, number, [string, number, ...unknown[]], ...unknown[]];

/** Asks the first live one of `nodes` (cluster nodes or sentinels) over a short-lived connection. */
export async function askLiveNode<T>(nodes: readonly RedisProcess[], ask: (client: Redis) => Promise<T>, what = 'cluster node'): Promise<T> {
  const live = nodes.find((node) => node.alive);
  if (!live) throw new Error(`no live ${what}`);
  const client = new Redis({ host: '127.0.0.1', port: live.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    return await ask(client);
  } finally {
    client.disconnect();
  }
}

/** Each node decides on its own when the cluster is up: a client may reach one still saying CLUSTERDOWN. */
async function everyLiveNodeSaysOk(nodes: readonly RedisProcess[]): Promise<boolean> {
  const states = await Promise.all(
    nodes
      .filter((node) => node.alive)
      .map((node) => askLiveNode([node], async (client) => ((await client.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'))),
  );
  return states.every(Boolean);
}

const slotRanges = (client: Redis): Promise<SlotRange[]> => client.call('CLUSTER', 'SLOTS') as Promise<SlotRange[]>;

/** Starts six cluster-mode redis-servers and joins them with `redis-cli --cluster create --cluster-replicas 1`. */
export async function startRedisCluster(): Promise<RedisClusterSet> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  // The bus port defaults to port + 10000: maybe taken, maybe past 65535. A free one of its own instead.
  const chosen = await freePorts(12);
  const ports = chosen.slice(0, 6);
  const busPorts = chosen.slice(6);
  await Promise.all(ports.map((port) => mkdir(join(dir, String(port)))));
  let nodes: RedisProcess[];
  try {
    nodes = await spawnRedisNodes(
      ports.map((port, index) => ({
        port,
        args: [
          '--bind', '127.0.0.1', '--port', String(port), '--cluster-port', String(busPorts[index]), '--save', '', '--appendonly', 'no',
          '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS),
          // A replica may always take over, however long ago it last heard from its primary.
          '--cluster-replica-validity-factor', '0',
          ...REPLICATION_ARGS,
          '--dir', join(dir, String(port)),
        ],
      })),
    );
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await execFileAsync(infra('REDIS_CLI_BIN'), ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes']);
  } catch (err) {
    await stop();
    throw err;
  }
  const waitUntilHealthy = async (timeoutMs = 20_000): Promise<void> => {
    await eventually(
      () =>
        askLiveNode(nodes, async (client) => {
          const info = (await client.call('CLUSTER', 'INFO')) as string;
          const ranges = await slotRanges(client);
          const served = ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0);
          const primariesAlive = ranges.every(([, , [, port]]) => nodes.find((node) => node.port === port)?.alive === true);
          return info.includes('cluster_state:ok') && served === 16384 && primariesAlive && (await everyLiveNodeSaysOk(nodes));
        }),
      timeoutMs,
      'a healthy cluster',
    );
  };
  await waitUntilHealthy();
  const primaries = await askLiveNode(nodes, async (client) => [...new Set((await slotRanges(client)).map(([, , [, port]]) => port))]);
  await Promise.all(primaries.map((port) => waitForReplicas(port, 1)));
  return {
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    nodes,
    primaryPortOf: (key) =>
      askLiveNode(nodes, async (client) => {
        const slot = (await client.call('CLUSTER', 'KEYSLOT', key)) as number;
        const range = (await slotRanges(client)).find(([from, to]) => slot >= from && slot <= to);
        if (!range) throw new Error(`slot ${slot} is not served`);
        return range[2][1];
      }),
    primaryPorts: () => askLiveNode(nodes, async (client) => [...new Set((await slotRanges(client)).map(([, , [, port]]) => port))].sort()),
    async kill(port) {
      const node = nodes.find((candidate) => candidate.port === port);
      if (!node) throw new Error(`no cluster node on port ${port}`);
      await node.kill();
    },
    waitUntilHealthy,
    stop,
  };
}
