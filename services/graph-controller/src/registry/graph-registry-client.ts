import { AppError, unavailable } from '@sp/core';
import { createHttpClient, type HttpAnswer, type HttpClient } from '@sp/http';

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
  /** Publishes the graph's subgraph schema (`POST /{name}/schema`): stored (or the newest already), or refused with the registry's reasons. */
  publishSubgraph(name: string, sdl: string, signal?: AbortSignal): Promise<SubgraphPublish>;
  /** Takes the graph's subgraph out of the supergraph (`DELETE /{name}/schema`); false when it had no schema. */
  removeSubgraph(name: string, signal?: AbortSignal): Promise<boolean>;
}

/** What the registry made of a subgraph schema. */
export type SubgraphPublish =
  | { outcome: 'published'; version: number; supergraphVersion?: number }
  | { outcome: 'unchanged'; version: number }
  /** 400 (invalid SDL) or 409 (does not compose, or refused by the policy): each reason with its coordinate when known. */
  | { outcome: 'refused'; status: number; error: string; reasons: string[] };

interface RefusalBody {
  error?: string;
  errors?: Array<{ message?: string; code?: string; coordinate?: string | null }>;
  problems?: Array<{ message?: string; locations?: Array<{ line: number; column: number }> }>;
  report?: { changes?: Array<{ class?: string; message?: string }> };
}

/** The reasons of a refusal, one line each: composition errors, SDL problems, or the breaking changes the policy refused. */
function reasonsOf(body: RefusalBody): string[] {
  // `KEY_INVALID_FIELDS Plan: …`: the composition library's code and the coordinate first, as a Warning Event shows them.
  const errors = (body.errors ?? []).map((error) => `${error.code ? `${error.code} ` : ''}${error.coordinate ? `${error.coordinate}: ` : ''}${error.message ?? ''}`);
  const problems = (body.problems ?? []).map((problem) => `${problem.locations?.[0] ? `line ${problem.locations[0].line}: ` : ''}${problem.message ?? ''}`);
  const breaking = (body.report?.changes ?? []).filter((change) => change.class === 'breaking').map((change) => change.message ?? '');
  return [...errors, ...problems, ...breaking];
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
  /** `path` empty: the collection (`GET /`); a name (encoded here), or `{name}/schema`. */
  const send = async (method: string, path: string, init: { body?: string; signal?: AbortSignal; contentType?: string }): Promise<HttpAnswer> => {
    const headers: Record<string, string> = { 'x-api-key': options.apiKey };
    if (init.body !== undefined) headers['content-type'] = init.contentType ?? 'text/plain; charset=utf-8';
    const [name = '', ...rest] = path.split('/');
    const target = [encodeURIComponent(name), ...rest].join('/');
    try {
      return await http.request(`${options.baseUrl}/${target}`, { method, headers, body: init.body, timeoutMs: options.timeoutMs, signal: init.signal });
    } catch (err) {
      // Aborted by the caller (leadership lost, shutdown): not an outage of the registry.
      if (init.signal?.aborted) throw new AppError(499, 'aborted', `${method} /${path} aborted`, { cause: err });
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
    async publishSubgraph(name, sdl, signal) {
      const response = await send('POST', `${name}/schema`, { body: sdl, signal, contentType: 'application/graphql' });
      if (response.status === 201 || response.status === 200) {
        const body = JSON.parse(response.text) as { version: { version: number }; supergraph?: { version: number } };
        if (response.status === 200) return { outcome: 'unchanged', version: body.version.version };
        return { outcome: 'published', version: body.version.version, ...(body.supergraph === undefined ? {} : { supergraphVersion: body.supergraph.version }) };
      }
      if (response.status === 400 || response.status === 409) {
        const body = JSON.parse(response.text) as RefusalBody;
        return { outcome: 'refused', status: response.status, error: body.error ?? `refused (${response.status})`, reasons: reasonsOf(body) };
      }
      throw unexpected(response, `POST /${name}/schema`);
    },
    async removeSubgraph(name, signal) {
      const response = await send('DELETE', `${name}/schema`, { signal });
      if (response.status === 204) return true;
      if (response.status === 404) return false;
      throw unexpected(response, `DELETE /${name}/schema`);
    },
  };
}
