import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface HttpRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  /** Upper bound for the whole exchange. */
  timeoutMs: number;
  /** The caller's abort (shutdown, leadership lost): the request is cut and the call rejects. */
  signal?: AbortSignal;
  /** Largest answer body accepted; past it the connection is cut and the call rejects (ResponseTooLarge). */
  maxBytes?: number;
}

/** An answer whose body went past the request's `maxBytes`. */
export class ResponseTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`answer larger than ${limitBytes} bytes`);
    this.name = 'ResponseTooLarge';
  }
}

/** Outbound HTTP of every service. Calls resolve with any answer (the caller judges its status). */
export interface HttpClient {
  /** Rejects on a network error, when `timeoutMs` passes, or when `signal` aborts. */
  request(url: string, init: HttpRequest): Promise<HttpAnswer>;
  /** `request` with POST. */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<HttpAnswer>;
  close(): void;
}

function isStaleConnection(err: unknown): boolean {
  const error = err as NodeJS.ErrnoException & { reusedSocket?: boolean };
  return error.reusedSocket === true && (error.code === 'ECONNRESET' || error.message === 'socket hang up');
}

/**
 * A small client on node:http with keep-alive connections, for the services' outbound calls (the
 * webhooks' GraphQL gateway, the controller's graph registry): cheaper per call than WHATWG fetch,
 * whose streams dominate the CPU profile of a webhook otherwise. Only for calls that are safe to
 * repeat: a request that fails on a reused connection the server had just closed is sent once more.
 */
export function createHttpClient(maxSockets = 64): HttpClient {
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets }), https: new HttpsAgent({ keepAlive: true, maxSockets }) };
  const attempt = (target: URL, payload: Buffer | undefined, init: HttpRequest): Promise<HttpAnswer> => {
    const secure = target.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    const headers = payload === undefined ? { ...init.headers } : { ...init.headers, 'content-length': payload.length };
    return new Promise((resolve, reject) => {
      const req = send(target, { method: init.method, agent: secure ? agents.https : agents.http, headers, signal: init.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const declared = Number(res.headers['content-length'] ?? 0);
        if (init.maxBytes !== undefined && declared > init.maxBytes) req.destroy(new ResponseTooLarge(init.maxBytes));
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (init.maxBytes !== undefined && size > init.maxBytes) req.destroy(new ResponseTooLarge(init.maxBytes));
          else chunks.push(chunk);
        });
        res.once('error', reject);
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`${init.method} ${target.origin}${target.pathname}: no answer within ${init.timeoutMs} ms`)), init.timeoutMs);
      req.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(Object.assign(err, { reusedSocket: req.reusedSocket }));
      });
      req.end(payload);
    });
  };
  const request = async (url: string, init: HttpRequest): Promise<HttpAnswer> => {
    const target = new URL(url);
    const payload = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
    try {
      return await attempt(target, payload, init);
    } catch (err) {
      // A kept-alive connection the server closed just as the request left: once more on a new one
      // (Node's documented pattern; the services' calls are all safe to repeat).
      if (!isStaleConnection(err) || init.signal?.aborted === true) throw err;
      return attempt(target, payload, init);
    }
  };
  return {
    request,
    post: (url, body, headers, timeoutMs) => request(url, { method: 'POST', body, headers, timeoutMs }),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
