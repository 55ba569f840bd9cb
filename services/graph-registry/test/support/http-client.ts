import { request as httpRequest, type Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body when it is JSON. */
  json: unknown;
  durationMs: number;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given (already percent-encoded where needed). */
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Send the body as chunks without Content-Length (Transfer-Encoding: chunked). */
  chunked?: boolean;
  timeoutMs?: number;
  /** The connection pool; Node's global keep-alive agent by default. */
  agent?: Agent;
}

function parseJson(text: string, contentType: string | undefined): unknown {
  if (contentType?.startsWith('application/json') !== true || text === '') return undefined;
  return JSON.parse(text) as unknown;
}

function writeBody(req: ReturnType<typeof httpRequest>, body: Buffer, chunked: boolean): void {
  if (!chunked) {
    req.end(body);
    return;
  }
  const chunk = 16 * 1024;
  for (let offset = 0; offset < body.length; offset += chunk) req.write(body.subarray(offset, offset + chunk));
  req.end();
}

/**
 * One HTTP/1.1 request with node:http (any method, any raw path, chunked or not), bounded by a
 * timeout so a hanging server fails the test instead of stalling it.
 */
export function send(baseUrl: string, options: RawRequest): Promise<HttpResponse> {
  const started = performance.now();
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers: OutgoingHttpHeaders = { ...options.headers };
  // Named explicitly: Node frames a body of GET, HEAD, DELETE or OPTIONS only when told how.
  if (body !== undefined) Object.assign(headers, options.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': body.length });
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(baseUrl), {
      method: options.method,
      path: options.path,
      headers,
      ...(options.agent ? { agent: options.agent } : {}),
    });
    const timeoutMs = options.timeoutMs ?? 5000;
    // A timer of our own, cleared as soon as the exchange ends, so nothing outlives the request.
    const timer = setTimeout(() => req.destroy(new Error(`${options.method} ${options.path}: no answer within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    req.once('error', fail);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', fail);
      res.once('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          const json = parseJson(text, res.headers['content-type']);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, durationMs: performance.now() - started });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    if (body === undefined) req.end();
    else writeBody(req, body, options.chunked === true);
  });
}
