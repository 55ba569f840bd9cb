import { createServer } from 'node:net';

/** A free loopback port, as the kernel hands them out (for a process that cannot listen on port 0 itself). */
export async function freePort(): Promise<number> {
  const [port = 0] = await freePorts(1);
  return port;
}

/**
 * `count` free loopback ports, all different: each is held listening until all are chosen (ports
 * taken one after another may come back twice, as the kernel hands a closed one out again).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              resolve(typeof address === 'object' && address ? address.port : 0);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))));
  }
}
