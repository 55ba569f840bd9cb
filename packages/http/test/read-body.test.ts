import { afterEach, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createHttpApp, readBody } from '../src/koa.js';
import { createLogger } from '@sp/observability';

const LIMIT_BYTES = 1024;
const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

/** A server whose POST answers the length of the text body it read (limit 1 KiB); GET answers "ok". */
async function start(): Promise<number> {
  const app = createHttpApp({ logger, registry: new Registry() });
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') {
      ctx.body = 'ok';
      return;
    }
    ctx.body = { length: (await readBody(ctx, { limitBytes: LIMIT_BYTES, types: ['text/plain'] })).length };
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server!.once('listening', resolve));
  return (server.address() as AddressInfo).port;
}

/** A POST of `bytes` bytes of text, framed with Content-Length or chunked in 16 KiB chunks. */
function post(bytes: number, chunked: boolean, contentType = 'text/plain'): Buffer[] {
  const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes}`;
  const parts = [Buffer.from(`POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type: ${contentType}\r\n${framing}\r\n\r\n`)];
  for (let offset = 0; offset < bytes; offset += 16 * 1024) {
    const chunk = Buffer.alloc(Math.min(16 * 1024, bytes - offset), 'a');
    parts.push(chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
  }
  if (chunked) parts.push(Buffer.from('0\r\n\r\n'));
  return parts;
}

/** The complete responses at the start of `received`, each as its status line and body (bodies have a Content-Length). */
function responses(received: string): string[] {
  const complete: string[] = [];
  let rest = received;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return complete;
    const head = rest.slice(0, headEnd);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (rest.length < headEnd + 4 + length) return complete;
    complete.push(`${head.split('\r\n')[0]} ${rest.slice(headEnd + 4, headEnd + 4 + length)}`);
    rest = rest.slice(headEnd + 4 + length);
  }
}

/**
 * Sends the requests one after the other on ONE connection (each written in full, waiting for the
 * socket to take it), and resolves with the first `count` responses, each as its status line and body.
 */
function exchange(port: number, requests: Buffer[][], count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    // A connection left stuck would otherwise stall the test.
    socket.setTimeout(5000, () => socket.destroy(new Error(`no ${count} responses on one connection within 5 s`)));
    socket.once('error', reject);
    let received = '';
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const answers = responses(received);
      if (answers.length < count) return;
      socket.destroy();
      resolve(answers);
    });
    void (async () => {
      for (const part of requests.flat()) {
        if (!socket.write(part)) await new Promise((drained) => socket.once('drain', drained));
      }
    })().catch(reject);
  });
}

describe('readBody', () => {
  it('should read a body within the limit', async () => {
    const port = await start();
    expect(await exchange(port, [post(LIMIT_BYTES, true)], 1)).toEqual([`HTTP/1.1 200 OK ${JSON.stringify({ length: LIMIT_BYTES })}`]);
  });

  it.each([
    ['streamed (chunked), refused mid-stream', true],
    ['declared (Content-Length), refused at once', false],
  ])('should answer 413 to a body over the limit, %s, and keep the keep-alive connection usable', async (_name, chunked) => {
    const port = await start();
    const get = [Buffer.from('GET /next HTTP/1.1\r\nHost: test\r\n\r\n')];
    const answers = await exchange(port, [post(4 * 1024 * 1024, chunked), get], 2);
    expect(answers).toEqual([`HTTP/1.1 413 Payload Too Large ${JSON.stringify({ error: `body exceeds ${LIMIT_BYTES} bytes` })}`, 'HTTP/1.1 200 OK ok']);
  });

  it.each([
    ['streamed (chunked)', true],
    ['declared (Content-Length)', false],
  ])('should answer 415, not 413, to a body of another media type over the limit, %s, and keep the connection usable', async (_name, chunked) => {
    const port = await start();
    const get = [Buffer.from('GET /next HTTP/1.1\r\nHost: test\r\n\r\n')];
    const answers = await exchange(port, [post(2 * 1024 * 1024, chunked, 'application/json'), get], 2);
    expect(answers).toEqual([`HTTP/1.1 415 Unsupported Media Type ${JSON.stringify({ error: 'content type must be one of: text/plain' })}`, 'HTTP/1.1 200 OK ok']);
  });
});
