import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { eventually } from './eventually.js';
import { kafkaReady } from './kafka-broker.js';
import { processProgress } from './progress.js';
import { freePorts } from './free-port.js';

const kafkaScript = fileURLToPath(new URL('../infra/kafka.sh', import.meta.url));

/** Three JVMs share two cores with other suites: a small heap each (the single broker has 512m). */
const CLUSTER_HEAP_OPTS = '-Xmx256m -Xms128m';

/** One broker+controller of the cluster. */
export interface KafkaClusterNode {
  nodeId: number;
  /** host:port of its broker listener. */
  broker: string;
  alive(): boolean;
}

/** A three-node KRaft Kafka of the test's own (replication factor 3, min.insync.replicas=2). */
export interface KafkaCluster {
  /** Every broker, for the publisher's and the consumers' broker lists. */
  brokers: readonly string[];
  nodes: readonly KafkaClusterNode[];
  /** SIGKILLs the node (broker and controller), like a crash; its data stays. */
  kill(nodeId: number): Promise<void>;
  /** Kills every node and deletes their data. */
  stop(): Promise<void>;
}

interface NodeProcess extends KafkaClusterNode {
  child: ChildProcess;
}

/** A Kafka cluster id: 16 random bytes, URL-safe base64, not starting with '-' (reads as a flag). */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

async function kill(node: NodeProcess): Promise<void> {
  if (!node.alive()) return;
  const exited = once(node.child, 'exit');
  node.child.kill('SIGKILL');
  await exited;
}

/** Until a Metadata request lists all brokers (registered and unfenced), while their JVMs make progress. */
async function waitForBrokers(nodes: readonly NodeProcess[]): Promise<void> {
  const brokers = nodes.map((node) => node.broker);
  const admin = new Kafka({ clientId: 'kafka-cluster-setup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const progress = () => nodes.map((node) => processProgress(node.child.pid)());
    await eventually(async () => (await admin.describeCluster()).brokers.length === brokers.length, { progress }, `${brokers.length} Kafka brokers registered`);
  } finally {
    await admin.disconnect();
  }
}

/** The last lines a node's JVM wrote (its log in the data directory), for the error of a start that failed. */
function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-8).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A start that failed because a port chosen free was taken before the JVM bound it (another process on this machine). */
class PortTaken extends Error {}

/**
 * Starts three `kafka.sh run-cluster-node` JVMs (each broker and KRaft controller, a quorum of
 * three) on free loopback ports with temporary data directories, and resolves once every broker
 * is registered and the group and transaction coordinators (replicated three times) are up.
 * A port is chosen free and then bound by the JVM seconds later: another listener (a second
 * checkout's suite) may take it meanwhile. Such a start is tried again
 * on other ports, twice at most; any other failure names each exited node with its log's tail.
 */
export async function startKafkaCluster(): Promise<KafkaCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startKafkaClusterOnce();
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 3) throw err;
    }
  }
}

async function startKafkaClusterOnce(): Promise<KafkaCluster> {
  const ports = await freePorts(6);
  const ids = [1, 2, 3];
  const voters = ids.map((id, i) => `${id}@127.0.0.1:${ports[3 + i]}`).join(',');
  const cluster = clusterId();
  const dataDir = mkdtempSync(join(tmpdir(), 'kafka-cluster-'));
  const env = { ...process.env, KAFKA_HEAP_OPTS: CLUSTER_HEAP_OPTS };
  const nodes: NodeProcess[] = ids.map((nodeId, i) => {
    const args = [kafkaScript, 'run-cluster-node', join(dataDir, `node-${nodeId}`), String(nodeId), String(ports[i]), String(ports[3 + i]), voters, cluster];
    // run-cluster-node execs the JVM, so the child's pid is the broker's; its output goes to a log beside its data.
    const log = openSync(join(dataDir, `node-${nodeId}.log`), 'a');
    const child = spawn('bash', args, { stdio: ['ignore', log, log], env });
    closeSync(log);
    return { nodeId, broker: `127.0.0.1:${ports[i]}`, child, alive: () => child.exitCode === null && child.signalCode === null };
  });
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map(kill));
    rmSync(dataDir, { recursive: true, force: true });
  };
  const brokers = nodes.map((node) => node.broker);
  try {
    await Promise.all(nodes.map((node, i) => kafkaReady(ports[i]!, node.child, false)));
    await waitForBrokers(nodes);
    await kafkaReady(ports[0]!, nodes[0]!.child, true);
  } catch (err) {
    const exited = nodes.filter((node) => !node.alive()).map((node) => ({ nodeId: node.nodeId, tail: logTail(join(dataDir, `node-${node.nodeId}.log`)) }));
    await stop();
    const detail = exited.map(({ nodeId, tail }) => `node ${nodeId} exited:\n${tail}`).join('\n');
    if (exited.some(({ tail }) => /Address already in use/.test(tail))) throw new PortTaken(`${(err as Error).message}\n${detail}`);
    throw exited.length === 0 ? err : new Error(`${(err as Error).message}\n${detail}`);
  }
  return {
    brokers,
    nodes,
    kill: async (nodeId) => {
      const node = nodes.find((candidate) => candidate.nodeId === nodeId);
      if (!node) throw new Error(`no Kafka cluster node ${nodeId}`);
      await kill(node);
    },
    stop,
  };
}
