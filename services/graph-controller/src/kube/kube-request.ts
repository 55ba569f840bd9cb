import { ApiException, HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch, type Response } from 'undici';

export type Query = Record<string, string | number | boolean | undefined>;

/** The URL as the library builds it: the cluster's server, the path and the query. */
export function kubeUrl(config: KubeConfig, path: string, query: Query): string {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('No currently active cluster');
  const url = new URL(cluster.server + path);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  return url.toString();
}

/**
 * A GET to the API server with the library's public request context (authentication, TLS
 * dispatcher) and undici's fetch, as the library sends its own requests: for the streams and
 * pages the controller reads as JSON itself rather than through the generated clients'
 * model deserialization (which costs more than the request on a list of thousands).
 */
export async function kubeGet(config: KubeConfig, path: string, query: Query, signal: AbortSignal): Promise<Response> {
  const url = kubeUrl(config, path, query);
  const context = new RequestContext(url, HttpMethod.GET);
  await config.applySecurityAuthentication(context);
  return fetch(url, { method: 'GET', headers: context.getHeaders(), dispatcher: context.getDispatcher(), signal });
}

interface ListPage<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/**
 * A whole collection, `pageSize` objects per request (the pages are one consistent snapshot, at the
 * first page's resourceVersion), each object passed through `keep` as its page arrives: a large
 * cluster is never held in memory whole, as JSON or as objects. Fails with the library's
 * ApiException on an HTTP error, as the generated clients do.
 */
export async function listPaged<T, K>(
  config: KubeConfig,
  path: string,
  options: { pageSize: number; timeoutMs: number; labelSelector?: string; keep(item: T): K },
): Promise<{ metadata: { resourceVersion: string | undefined }; items: K[] }> {
  const items: K[] = [];
  let resourceVersion: string | undefined;
  let token: string | undefined;
  do {
    const response = await kubeGet(config, path, { labelSelector: options.labelSelector, limit: options.pageSize, continue: token }, AbortSignal.timeout(options.timeoutMs));
    const text = await response.text();
    if (response.status !== 200) throw new ApiException(response.status, `GET ${path}: ${response.status}`, text, Object.fromEntries(response.headers));
    const page = JSON.parse(text) as ListPage<T>;
    resourceVersion ??= page.metadata?.resourceVersion;
    for (const item of page.items ?? []) items.push(options.keep(item));
    token = page.metadata?.continue || undefined;
  } while (token);
  return { metadata: { resourceVersion }, items };
}
