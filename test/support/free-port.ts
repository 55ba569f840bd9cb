import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Where a test's ports are drawn from: above the ports services here use by default (Redis' 6379, 7000…)… */
const LOWEST_PORT = 20000;
/** …and below Kubernetes' NodePort range (30000–32767), which the single-node cluster's kube-proxy serves. */
const BELOW_NODE_PORTS = 30000;

/**
 * The first port of the kernel's ephemeral range (`ip_local_port_range`): every outgoing
 * connection on the machine, and every `listen(0)`, takes its local port from there.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1000 ? low : 32768;
  } catch {
    return 32768;
  }
}

function listen(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** A free loopback port (for a process that cannot listen on port 0 itself). */
export async function freePort(): Promise<number> {
  const [port = 0] = await freePorts(1);
  return port;
}

/**
 * `count` free loopback ports, all different, for processes started next that bind them. They are
 * drawn at random below the ephemeral range, not handed out by the kernel (`listen(0)`): a port
 * from that range may be taken by any outgoing connection on the machine (a second checkout's
 * suites, a Kafka client) between this check and the process's bind, and a closed one is handed
 * out again soon; below it only another listener could take it. Each is held listening until all
 * are chosen, so none comes back twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const span = Math.min(ephemeralLow(), BELOW_NODE_PORTS) - LOWEST_PORT;
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count; tries++) {
      if (tries > 1000) throw new Error(`no ${count} free loopback ports between ${LOWEST_PORT} and ${LOWEST_PORT + span}`);
      const port = LOWEST_PORT + Math.floor(Math.random() * span);
      if (ports.includes(port)) continue;
      const server = await listen(port);
      if (!server) continue;
      held.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
