import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { backoffDelay, failedPrecondition, withDeadline, unavailable, type RedisTarget } from '@sp/core';
import { replyWatchdog } from '@sp/storage';
import type { Logger } from '@sp/observability';
import type { AppError } from '@sp/core';
import type { ChangeKind, InvalidationHub } from './invalidation-hub.js';

/**
 * The keyspace-notification classes the service needs: K (a `__keyspace@db__:key` channel per key),
 * $ (string commands: SET in all its forms, as Set, SetIfAbsent and the Increment script write),
 * g (generic: DEL, RENAME), x (expired) and e (evicted). `A` stands for every class but K.
 */
export const REQUIRED_NOTIFY_FLAGS = 'K$gxe';

/** The flags to add to `current` for REQUIRED_NOTIFY_FLAGS; '' when none are missing. */
export function missingNotifyFlags(current: string): string {
  return [...REQUIRED_NOTIFY_FLAGS].filter((flag) => !current.includes(flag) && !(flag !== 'K' && current.includes('A'))).join('');
}

/**
 * A keyspace event as Subscribe announces it. EXPIRE/PERSIST (a TTL change) are not announced: a
 * near cache keeps the expiry it read and drops the entry then at the latest, and the key's actual
 * expiry is announced as `expired`.
 */
export function kindOfEvent(event: string): ChangeKind | undefined {
  switch (event) {
    case 'expire':
    case 'persist':
      return undefined;
    case 'del':
    case 'rename_from':
      return 'REMOVED';
    case 'expired':
      return 'EXPIRED';
    case 'evicted':
      return 'EVICTED';
    default:
      return 'WRITTEN';
  }
}

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

// Subscriber connections: no offline queue, no auto-resubscribe (a fresh connection must turn the
// notifications on again before it counts as subscribed), a hung server caught by the PING below
// (its reply deadline drops the connection; not ioredis' socketTimeout: @sp/storage replyWatchdog).
const SUBSCRIBER_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  enableAutoPipelining: false,
  autoResubscribe: false,
  maxRetriesPerRequest: 0,
  connectTimeout: 2000,
  retryStrategy: (attempt) => backoffDelay(attempt + 1, 50, 2000),
};
const PING_MS = 1000;

type NodeState = { kind: 'down' } | { kind: 'subscribed' } | { kind: 'refused'; problem: AppError };

interface NodeSubscriber {
  readonly state: NodeState;
  close(): void;
}

/** Turns the notifications on (CONFIG SET, keeping the flags already in force) or explains why it cannot. */
async function enableNotifications(redis: Redis, where: string): Promise<AppError | undefined> {
  try {
    const [, current = ''] = await redis.config('GET', 'notify-keyspace-events');
    const missing = missingNotifyFlags(current);
    if (missing !== '') await redis.config('SET', 'notify-keyspace-events', current + missing);
    return undefined;
  } catch (err) {
    if (err instanceof Error && err.name === 'ReplyError') {
      return failedPrecondition(`Redis at ${where} does not send the keyspace notifications Subscribe needs and refused CONFIG (${err.message}): set notify-keyspace-events to include ${REQUIRED_NOTIFY_FLAGS}`);
    }
    throw err;
  }
}

interface NodeWatch {
  /** Names the server in messages. */
  where: string;
  pattern: string;
  onEvent: (channel: string, event: string) => void;
  onState: () => void;
}

/** One connection in subscriber mode, on one Redis server (the primary of a standalone/Sentinel set, or one Cluster primary). */
function subscribeNode(redis: Redis, { where, pattern, onEvent, onState }: NodeWatch): NodeSubscriber {
  let state: NodeState = { kind: 'down' };
  const setState = (next: NodeState): void => {
    if (next.kind === state.kind) return;
    state = next;
    onState();
  };
  redis.on('pmessage', (_pattern: string, channel: string, event: string) => onEvent(channel, event));
  redis.on('close', () => setState({ kind: 'down' }));
  redis.on('error', () => undefined); // reported once through the state, not per reconnect attempt
  redis.on('ready', () => {
    enableNotifications(redis, where)
      .then(async (problem) => {
        if (problem) return setState({ kind: 'refused', problem });
        await redis.psubscribe(pattern);
        setState({ kind: 'subscribed' });
      })
      .catch(() => redis.disconnect(true));
  });
  const watchdog = replyWatchdog(redis, PING_MS);
  const ping = setInterval(() => {
    if (state.kind === 'subscribed') watchdog.watch(() => redis.ping()).catch(() => undefined);
  }, PING_MS);
  ping.unref();
  return {
    get state() {
      return state;
    },
    close() {
      clearInterval(ping);
      redis.disconnect();
    },
  };
}

export interface KeyspaceWatch {
  close(): void;
}

/** The primaries of a Cluster as a live node reports them (CLUSTER SLOTS), as host:port. */
async function clusterPrimaries(cluster: Cluster): Promise<string[] | undefined> {
  for (const node of cluster.nodes()) {
    const slots = await withDeadline(node.call('CLUSTER', 'SLOTS') as Promise<Array<[number, number, [string, number]]>>, 500).catch(() => undefined);
    if (slots !== undefined) return [...new Set(slots.map(([, , [host, port]]) => `${host}:${port}`))].sort();
  }
  return undefined;
}

/**
 * Feeds the hub from Redis' keyspace notifications for keys under `keyPrefix`, whoever wrote them.
 * Standalone and Sentinel: one subscriber connection to the primary (ioredis follows a Sentinel
 * failover). Cluster: notifications are local to the node that holds the key, so one subscriber
 * per primary, the set of primaries checked every second (CLUSTER SLOTS) so a promoted replica is
 * subscribed after a failover. The hub is live only while every subscriber is subscribed: a lost
 * connection ends every Subscribe stream at once (events may have been missed meanwhile).
 */
export function watchKeyspace(target: RedisTarget, redis: Redis | Cluster, hub: InvalidationHub, { keyPrefix, logger }: { keyPrefix: string; logger: Logger }): KeyspaceWatch {
  const pattern = `__keyspace@*__:${escapeGlob(keyPrefix)}*`;
  const subscribers = new Map<string, NodeSubscriber>();
  let known = false; // the Cluster's primaries are known
  let lastProblem: AppError | undefined = hub.unavailable();

  const onEvent = (channel: string, event: string): void => {
    const kind = kindOfEvent(event);
    if (kind === undefined) return;
    hub.announce(channel.slice(channel.indexOf('__:') + 3 + keyPrefix.length), kind);
  };
  /** Why not every change is seen now, or undefined when it is. */
  const currentProblem = (): AppError | undefined => {
    const states = [...subscribers.values()].map((subscriber) => subscriber.state);
    const refused = states.find((state): state is Extract<NodeState, { kind: 'refused' }> => state.kind === 'refused');
    if (refused !== undefined) return refused.problem;
    const live = known && states.length > 0 && states.every((state) => state.kind === 'subscribed');
    return live ? undefined : unavailable('redis keyspace notifications');
  };
  const recompute = (): void => {
    const problem = currentProblem();
    if (problem?.status === lastProblem?.status) return;
    lastProblem = problem;
    if (problem === undefined) logger.info('keyspace notifications flowing: Subscribe streams may start');
    else logger.warn({ reason: problem.message }, 'keyspace notifications interrupted: Subscribe streams ended');
    hub.setSource(problem);
  };
  const add = (where: string, connection: Redis): void => {
    subscribers.set(where, subscribeNode(connection, { where, pattern, onEvent, onState: recompute }));
  };

  if (!(redis instanceof Cluster)) {
    known = true;
    add(target.kind === 'sentinel' ? `sentinel master ${target.name}` : 'primary', redis.duplicate(SUBSCRIBER_OPTIONS));
    return { close: () => subscribers.forEach((subscriber) => subscriber.close()) };
  }

  const password = target.kind === 'cluster' ? target.password : undefined;
  const reconcile = async (): Promise<void> => {
    const primaries = await clusterPrimaries(redis);
    if (primaries === undefined) return;
    for (const [where, subscriber] of subscribers) {
      if (primaries.includes(where)) continue;
      subscriber.close();
      subscribers.delete(where);
    }
    for (const where of primaries) {
      if (subscribers.has(where)) continue;
      const [host, port] = [where.slice(0, where.lastIndexOf(':')), Number(where.slice(where.lastIndexOf(':') + 1))];
      add(where, new Redis({ ...SUBSCRIBER_OPTIONS, host, port, password }));
    }
    known = true;
    recompute();
  };
  void reconcile();
  const timer = setInterval(() => void reconcile(), 1000);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      subscribers.forEach((subscriber) => subscriber.close());
    },
  };
}
