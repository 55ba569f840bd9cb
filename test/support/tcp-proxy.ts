import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './redis-server.js';

export interface TcpProxy {
  /** `http://127.0.0.1:{port}`: the target as seen through the proxy. */
  url: string;
  /** The target becomes unreachable: open connections are cut and new ones refused. */
  cut(): Promise<void>;
  /** The target is reachable again, on the same port. */
  restore(): Promise<void>;
  /**
   * The next bytes the target sends (the reply to a request it has received and acted on) are
   * dropped and that connection is cut: a call whose outcome the client cannot know.
   */
  loseNextReply(): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `target` (host:port) that a test can cut, to take a dependency away mid-traffic. */
export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let loseReply = false;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        track(client);
        track(upstream);
        client.pipe(upstream);
        upstream.on('data', (chunk: Buffer) => {
          if (!loseReply) {
            client.write(chunk);
            return;
          }
          loseReply = false;
          client.destroy();
          upstream.destroy();
        });
        upstream.on('end', () => client.end());
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const stop = async (): Promise<void> => {
    const closing = new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    for (const socket of sockets) socket.destroy();
    await closing;
    server = undefined;
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    cut: stop,
    restore: listen,
    loseNextReply: () => {
      loseReply = true;
    },
    close: stop,
  };
}
