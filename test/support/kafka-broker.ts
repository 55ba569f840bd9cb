import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './free-port.js';

const kafkaScript = fileURLToPath(new URL('../infra/kafka.sh', import.meta.url));
const readyProbe = fileURLToPath(new URL('../infra/kafka/ready.cjs', import.meta.url));

/** A Kafka broker of the test's own, which it may kill and start again (same ports, same data). */
export interface PrivateKafka {
  /** host:port for MessageBroker__BrokerList / collectEvents. */
  brokers: string;
  /** Starts the broker (again) and resolves once it serves producers and consumer groups. */
  start(): Promise<void>;
  /** Kills the broker (SIGKILL, like a crash); its data directory stays. */
  stop(): Promise<void>;
  /** Stops it and deletes its data. */
  close(): Promise<void>;
}

function waitUntilReady(port: number, child: ChildProcess, seconds: number): Promise<void> {
  const probe = spawn(process.execPath, [readyProbe, '127.0.0.1', String(port), String(seconds), String(child.pid), '--warm'], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    probe.once('error', reject);
    probe.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`private Kafka on port ${port} not ready (probe exit ${code})`))));
  });
}

/**
 * A single-node KRaft broker (`test/infra/kafka.sh run-private`, the same code path as the shared
 * one) on free loopback ports with a temporary data directory. A restart reuses ports and data,
 * so clients reconnect to the same broker as after a real outage. `advertisedHost`: the address
 * clients are told to use (and `brokers` names), for a broker reached through a forwarded address.
 */
export async function startPrivateKafka(options: { startTimeoutSeconds?: number; advertisedHost?: string } = {}): Promise<PrivateKafka> {
  const [brokerPort = 0, controllerPort = 0] = await freePorts(2);
  const dataDir = mkdtempSync(join(tmpdir(), 'private-kafka-'));
  const seconds = options.startTimeoutSeconds ?? 90;
  let child: ChildProcess | undefined;

  const stop = async (): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  const start = async (): Promise<void> => {
    await stop();
    // run-private execs the JVM, so the child's pid is the broker's.
    const args = [kafkaScript, 'run-private', dataDir, String(brokerPort), String(controllerPort), ...(options.advertisedHost === undefined ? [] : [options.advertisedHost])];
    child = spawn('bash', args, { stdio: 'ignore' });
    try {
      await waitUntilReady(brokerPort, child, seconds);
    } catch (err) {
      await stop();
      throw err;
    }
  };

  await start();
  return {
    brokers: `${options.advertisedHost ?? '127.0.0.1'}:${brokerPort}`,
    start,
    stop,
    close: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
