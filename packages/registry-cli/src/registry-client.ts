/** An answer of the registry: status and body (parsed when JSON). */
export interface Answer {
  status: number;
  text: string;
  json: unknown;
}

/** The registry could not be asked, or would not answer usefully: exit status 2. */
export class RegistryError extends Error {}

export interface RegistryClient {
  request(method: string, path: string, options?: { body?: string; contentType?: string; headers?: Record<string, string> }): Promise<Answer>;
}

const TIMEOUT_MS = 30_000;

async function reach(url: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${url}${path}`, init);
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new RegistryError(`cannot reach the registry at ${url}: ${cause}`);
  }
}

/**
 * The registry's public HTTP API with the caller's key. A network failure, a refused key (401)
 * and a server failure (5xx) are RegistryErrors saying so; every other answer is the caller's
 * to read.
 */
export function createRegistryClient(url: string, key: string): RegistryClient {
  return {
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { 'x-api-key': key, ...options.headers };
      if (options.contentType !== undefined) headers['content-type'] = options.contentType;
      const response = await reach(url, path, { method, headers, body: options.body ?? null, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const text = await response.text();
      const json: unknown = response.headers.get('content-type')?.startsWith('application/json') === true && text !== '' ? JSON.parse(text) : undefined;
      if (response.status === 401) throw new RegistryError('the registry refused the API key (401 unauthorized): check --key or GRAPH_REGISTRY_API_KEY');
      if (response.status >= 500) throw new RegistryError(`the registry failed: ${response.status} ${errorOf(json) ?? text}`);
      return { status: response.status, text, json };
    },
  };
}

/** The `error` of a JSON error body. */
export function errorOf(json: unknown): string | undefined {
  return typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'string' ? json.error : undefined;
}
