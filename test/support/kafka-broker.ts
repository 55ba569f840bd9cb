import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './free-port.js';
import { HANG_GUARD_MS, processProgress, whileProgressing } from './progress.js';

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

/**
 * Until the broker `broker` (a JVM) on `port` lists itself in Metadata (test/infra/kafka/ready.cjs)
 * and with `warm` also serves producers and consumer groups: for as long as the JVM runs and
 * uses CPU (progress.ts).
 */
export function kafkaReady(port: number, broker: ChildProcess, warm: boolean): Promise<void> {
  return whileProgressing(`Kafka broker on port ${port} ready`, { progress: processProgress(broker.pid) }, (signal) => {
    const args = [readyProbe, '127.0.0.1', String(port), String(HANG_GUARD_MS / 1000), String(broker.pid), ...(warm ? ['--warm'] : [])];
    const probe = spawn(process.execPath, args, { stdio: 'ignore', signal });
    return new Promise((resolve, reject) => {
      probe.once('error', reject);
      probe.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`Kafka broker on port ${port} not ready (probe exit ${code}${code === 2 ? ': the broker exited' : ''})`))));
    });
  });
}

/**
 * A single-node KRaft broker (`test/infra/kafka.sh run-private`, the same code path as the shared
 * one) on free loopback ports with a temporary data directory. A restart reuses ports and data,
 * so clients reconnect to the same broker as after a real outage. `advertisedHost`: the address
 * clients are told to use (and `brokers` names), for a broker reached through a forwarded address.
 */
export async function startPrivateKafka(options: { advertisedHost?: string } = {}): Promise<PrivateKafka> {
  const [brokerPort = 0, controllerPort = 0] = await freePorts(2);
  const dataDir = mkdtempSync(join(tmpdir(), 'private-kafka-'));
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
      await kafkaReady(brokerPort, child, true);
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
