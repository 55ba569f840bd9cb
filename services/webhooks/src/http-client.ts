import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface HttpClient {
  /** POSTs `body`; resolves with any answer, rejects on a network error or when `timeoutMs` passes. */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<HttpAnswer>;
  close(): void;
}

function isStaleConnection(err: unknown): boolean {
  const error = err as NodeJS.ErrnoException & { reusedSocket?: boolean };
  return error.reusedSocket === true && (error.code === 'ECONNRESET' || error.message === 'socket hang up');
}

/**
 * A small client on node:http with keep-alive connections, for the service's hot calls (the
 * GraphQL gateway): several times cheaper per call than WHATWG fetch, whose streams dominate the
 * CPU profile of a webhook otherwise. Only for calls that are safe to repeat: a request that fails
 * on a reused connection the server had just closed is sent once more.
 */
export function createHttpClient(maxSockets = 64): HttpClient {
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets }), https: new HttpsAgent({ keepAlive: true, maxSockets }) };
  const attempt = (target: URL, payload: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<HttpAnswer> => {
    const secure = target.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(target, { method: 'POST', agent: secure ? agents.https : agents.http, headers: { ...headers, 'content-length': payload.length } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', reject);
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`POST ${target.origin}${target.pathname}: no answer within ${timeoutMs} ms`)), timeoutMs);
      req.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(Object.assign(err, { reusedSocket: req.reusedSocket }));
      });
      req.end(payload);
    });
  };
  return {
    async post(url, body, headers, timeoutMs) {
      const target = new URL(url);
      const payload = Buffer.from(body, 'utf8');
      try {
        return await attempt(target, payload, headers, timeoutMs);
      } catch (err) {
        // A kept-alive connection the server closed just as the request left: once more on a new one
        // (Node's documented pattern; the service's calls are all safe to repeat).
        if (!isStaleConnection(err)) throw err;
        return attempt(target, payload, headers, timeoutMs);
      }
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
