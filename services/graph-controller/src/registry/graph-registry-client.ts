import { AppError, createHttpClient, unavailable, type HttpAnswer, type HttpClient } from '@sp/platform';

/** The graph registry as the controller uses it. Every method rejects with an AppError on failure. */
export interface GraphRegistryClient {
  /** The URL registered under the name, or undefined when none is. */
  get(name: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Registers (or replaces) the name's URL. */
  register(name: string, url: string, signal?: AbortSignal): Promise<void>;
  /** Removes the name; false when it was not registered. */
  remove(name: string, signal?: AbortSignal): Promise<boolean>;
  /** Every registration (`GET /`): one request where a resync would otherwise make one per name. */
  list(signal?: AbortSignal): Promise<Map<string, string>>;
}

export interface GraphRegistryClientOptions {
  /** Base URL of the registry's API, without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  /** Upper bound for one request. */
  timeoutMs: number;
  http?: HttpClient;
}

/** An answer the controller did not expect: the registry's message is kept for the logs. */
function unexpected(response: HttpAnswer, what: string): AppError {
  const detail = response.text.slice(0, 200);
  return new AppError(502, 'registry_error', `graph registry answered ${response.status} to ${what}${detail ? `: ${detail}` : ''}`);
}

/** The registry's HTTP API (`GET|POST|DELETE /{name}` with `X-Api-Key`). */
export function createGraphRegistryClient(options: GraphRegistryClientOptions): GraphRegistryClient {
  const http = options.http ?? createHttpClient(8);
  /** `name` empty: the collection (`GET /`). */
  const send = async (method: string, name: string, init: { body?: string; signal?: AbortSignal }): Promise<HttpAnswer> => {
    const headers: Record<string, string> = { 'x-api-key': options.apiKey };
    if (init.body !== undefined) headers['content-type'] = 'text/plain; charset=utf-8';
    try {
      return await http.request(`${options.baseUrl}/${encodeURIComponent(name)}`, { method, headers, body: init.body, timeoutMs: options.timeoutMs, signal: init.signal });
    } catch (err) {
      // Aborted by the caller (leadership lost, shutdown): not an outage of the registry.
      if (init.signal?.aborted) throw new AppError(499, 'aborted', `${method} /${name} aborted`, { cause: err });
      throw unavailable('graph registry', err);
    }
  };
  return {
    async get(name, signal) {
      const response = await send('GET', name, { signal });
      if (response.status === 200) return response.text.trim();
      if (response.status === 404) return undefined;
      throw unexpected(response, `GET /${name}`);
    },
    async register(name, url, signal) {
      const response = await send('POST', name, { body: url, signal });
      if (response.status !== 204 && response.status !== 200) throw unexpected(response, `POST /${name}`);
    },
    async list(signal) {
      const response = await send('GET', '', { signal });
      if (response.status !== 200) throw unexpected(response, 'GET /');
      const { graphs } = JSON.parse(response.text) as { graphs?: Record<string, string> };
      return new Map(Object.entries(graphs ?? {}));
    },
    async remove(name, signal) {
      const response = await send('DELETE', name, { signal });
      if (response.status === 204 || response.status === 200) return true;
      if (response.status === 404) return false;
      throw unexpected(response, `DELETE /${name}`);
    },
  };
}
