import { Agent, fetch } from 'undici';
import { assertDocumented } from './openapi-contract.js';

export { cookieValue } from './cookies.js';

/** An answer as the tests look at it. */
export interface Reply {
  status: number;
  headers: Headers;
  /** Set-Cookie headers, one string each. */
  cookies: string[];
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as application/json. */
  json?: unknown;
  /** Sent as is (with the content type given in headers). */
  body?: string | Buffer;
}

export interface HttpsClient {
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  post(path: string, json: unknown, headers?: Record<string, string>): Promise<Reply>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

export async function toReply(response: Response): Promise<Reply> {
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    cookies: response.headers.getSetCookie(),
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}

/**
 * A client of the auth service over HTTPS that trusts exactly the test certificate, follows no
 * redirects, and checks every answer against openapi.yaml before returning it.
 */
export function httpsClient(baseUrl: string, ca: string): HttpsClient {
  const dispatcher = new Agent({ connect: { ca } });
  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<Reply> => {
    const headers = { ...(options.json === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers };
    const body = options.json === undefined ? options.body : JSON.stringify(options.json);
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual', dispatcher });
    const reply = await toReply(response);
    assertDocumented(method, path, reply);
    return reply;
  };
  return {
    request,
    post: (path, json, headers) => request('POST', path, { json, headers }),
    get: (path, headers) => request('GET', path, { headers }),
    close: () => dispatcher.close(),
  };
}

