import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { listen } from '@sp/http';
import { eventually } from '../../../test/support/eventually.js';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { API_KEY, startRegistryProcess, type RegistryProcess } from '../../../services/graph-registry/test/support/registry-fixture.js';
import { run, runIntoClosedPipe, type Run } from './run-cli.js';

/** The page nginx answers when its upstream refuses the connection (nginx 1.24's default 502 page). */
const NGINX_502 = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n';

/** A failure as a pipeline must see it: the exit status, one line on stderr, no stack trace, nothing of the page. */
function expectOneLine(result: Run, code: number, message: RegExp): void {
  expect({ code: result.code, stderr: result.stderr.replace(/\n$/, '') }).toEqual({ code, stderr: expect.stringMatching(message) });
  expect(result.stderr.split('\n')).toEqual([expect.any(String), '']);
  expect(result.stderr).not.toMatch(/^\s+at |<html|<\/?body/im);
}

type Relay = (client: Socket, upstream: Socket) => void;

/** A TCP relay (real sockets) in front of the registry, doing to its answer what `relay` says. */
async function startRelay(upstreamPort: number, relay: Relay): Promise<{ url: string; server: Server }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream);
    relay(client, upstream);
  });
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Passes the first `bytes` of the answer, then `then` (cut: the connection closes; stall: nothing more comes). */
const passing =
  (bytes: number, then: 'cut' | 'stall'): Relay =>
  (client, upstream) => {
    let passed = 0;
    upstream.on('data', (chunk: Buffer) => {
      if (passed >= bytes) return;
      const part = chunk.subarray(0, bytes - passed);
      passed += part.length;
      client.write(part);
      if (passed < bytes) return;
      if (then === 'cut') client.destroy();
      upstream.pause();
    });
  };

/** A reverse proxy as nginx is one: the upstream's answer as it is, or nginx's 502 page when the upstream refuses. */
async function startReverseProxy(upstreamPort: number): Promise<{ url: string; server: HttpServer }> {
  const server = createHttpServer((req, res) => {
    const upstream = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502, { server: 'nginx/1.24.0', 'content-type': 'text/html', 'content-length': Buffer.byteLength(NGINX_502) });
      res.end(NGINX_502);
    });
    req.pipe(upstream);
  });
  const port = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, server };
}

/** A server answering every request with `status`, `contentType` and `body` (an SSO proxy's login page, a truncated body). */
async function startAnswering(status: number, contentType: string, body: string): Promise<{ url: string; server: HttpServer }> {
  const server = createHttpServer((_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  });
  const port = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, server };
}

const portOf = (url: string): number => Number(new URL(url).port);

/** Established TCP connections (IPv4) whose local port is `port`: the server's ends, accepted or waiting to be. */
async function connectionsTo(port: number): Promise<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const lines = (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1);
  return lines.filter((line) => {
    const [, local, , state] = line.trim().split(/\s+/);
    return local?.endsWith(`:${hexPort}`) === true && state === '01';
  }).length;
}
const closeServer = (server: Server | HttpServer): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('graph-registry command in a pipeline: failures that are no verdict on the schema', () => {
  let redis: PrivateRedis;
  let registry: RegistryProcess;
  let killed = false;
  const servers: Array<Server | HttpServer> = [];
  const env = (url: string): Record<string, string> => ({ GRAPH_REGISTRY_URL: url, GRAPH_REGISTRY_API_KEY: API_KEY });

  beforeAll(async () => {
    redis = await startPrivateRedis();
    // 20,000 graphs: a listing of ~1.2 MB, more than the buffers of the pipe to a reader and of a TCP connection.
    const direct = new Redis(redis.url);
    await direct.mset(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`graph:graph-${String(i).padStart(5, '0')}`, `http://graph-${i}.example.com:4000/graphql`])));
    direct.disconnect();
    registry = await startRegistryProcess(redis.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map(closeServer));
    if (!killed) await registry.close();
    await redis.stop();
  });

  const track = <T extends { server: Server | HttpServer }>(started: T): T => {
    servers.push(started.server);
    return started;
  };

  it('should list through the relays when they pass everything (the baseline of the cases below)', async () => {
    const relay = track(await startRelay(portOf(registry.baseUrl), passing(Number.MAX_SAFE_INTEGER, 'stall')));
    const listed = await run(['graph', 'list'], env(relay.url));
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n').filter(Boolean)).toHaveLength(20_000);
  });

  it('should exit 6 in one line when the connection closes mid-answer', async () => {
    const relay = track(await startRelay(portOf(registry.baseUrl), passing(4096, 'cut')));
    expectOneLine(await run(['graph', 'list'], env(relay.url)), 6, /^graph-registry: the connection to the registry at .* ended before its answer was complete: /);
  });

  it('should exit 5 in one line when the answer stalls midway past --timeout', async () => {
    const relay = track(await startRelay(portOf(registry.baseUrl), passing(4096, 'stall')));
    const started = Date.now();
    expectOneLine(await run(['graph', 'list', '--timeout', '1'], env(relay.url)), 5, /^graph-registry: no complete answer from the registry at .* within 1 s \(--timeout\)$/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('should exit 5 in one line when the registry stops answering (a stopped process)', async () => {
    process.kill(registry.pid, 'SIGSTOP');
    try {
      expectOneLine(await run(['schema', 'versions', '--timeout', '1.5'], env(registry.baseUrl)), 5, /within 1\.5 s \(--timeout\)$/);
    } finally {
      process.kill(registry.pid, 'SIGCONT');
    }
  });

  it('should exit 7 in one line, without the page, when a proxy answers 502 with HTML', async () => {
    // Its upstream: a port nobody listens on (a registry that is down).
    const proxy = track(await startReverseProxy(await freePort()));
    const result = await run(['schema', 'check', '/dev/null'], env(proxy.url));
    expectOneLine(result, 7, /^graph-registry: the registry failed: 502 Bad Gateway \(text\/html, 157 bytes; not the registry's own answer: a proxy in front of it\?\)$/);
  }, 60_000);

  it('should exit 8 for an answer that is not the registry\'s: a login page with 200, malformed JSON, a 403 page', async () => {
    const login = track(await startAnswering(200, 'text/html; charset=utf-8', '<html><body><form action="/login">Sign in</form></body></html>'));
    expectOneLine(await run(['schema', 'versions'], env(login.url)), 8, /^graph-registry: the answer is not the registry's: 200 without the JSON body the registry sends$/);
    const truncated = track(await startAnswering(200, 'application/json', '{"versions": [{"version": 1,'));
    expectOneLine(await run(['schema', 'versions'], env(truncated.url)), 8, /^graph-registry: the answer is not the registry's: 200 OK with malformed JSON \(application\/json, 28 bytes\)$/);
    const forbidden = track(await startAnswering(403, 'text/html', '<html><body>\n<h1>Forbidden</h1>\n</body></html>'));
    expectOneLine(await run(['schema', 'versions'], env(forbidden.url)), 8, /^graph-registry: the answer is not the registry's: 403 Forbidden \(text\/html, \d+ bytes\)$/);
  });

  it('should print the registry\'s own error on one line whatever it holds (line breaks, terminal escapes)', async () => {
    const hostile = track(await startAnswering(503, 'application/json', JSON.stringify({ error: 'store down\n\u001b[2J\u001b[31mFAKE: all good\r\nmore' })));
    const result = await run(['schema', 'versions'], env(hostile.url));
    expectOneLine(result, 7, /^graph-registry: the registry failed: 503 Service Unavailable: store down \[2J \[31mFAKE: all good more$/);
    expect(result.stderr).not.toContain('\u001b');
  });

  it('should end quietly when its reader closes the pipe early (| head -1)', async () => {
    const result = await runIntoClosedPipe(['graph', 'list'], env(registry.baseUrl));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^graph-00000\t/);
  });

  // Last: the suite's registry does not survive it.
  it('should exit 6 in one line when the registry dies with the request unanswered', async () => {
    process.kill(registry.pid, 'SIGSTOP');
    const port = portOf(registry.baseUrl);
    const before = await connectionsTo(port);
    const running = run(['schema', 'versions', '--timeout', '20'], env(registry.baseUrl));
    // Killed once the command's connection is open (the kernel accepts it for the stopped process).
    await eventually(async () => (await connectionsTo(port)) > before, 20_000, 'the command connected');
    process.kill(registry.pid, 'SIGKILL');
    killed = true;
    expectOneLine(await running, 6, /^graph-registry: the connection to the registry at .* ended before its answer was complete: /);
  });
});
