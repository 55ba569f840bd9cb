import type { IncomingMessage } from 'node:http';

/** A request's headers as Node keeps them apart (`headersDistinct`): one array per name, in the order received. */
type DistinctHeaders = IncomingMessage['headersDistinct'];

/** The request a proxy asks GET /auth about, as far as its headers tell. */
export interface ForwardedRequest {
  /** `X-Forwarded-Method`, else `X-Original-Method`, else the method of the GET /auth request itself (Envoy sends the original one). */
  method: string;
  /** The absolute URL the browser asked for; undefined when the headers do not name one. */
  url: URL | undefined;
}

/** A header given exactly once (a repeated one is a client's doing or a chain of proxies: not trusted). */
function single(headers: DistinctHeaders, name: string): string | undefined {
  const values = headers[name];
  return values?.length === 1 && values[0]!.trim() !== '' ? values[0]!.trim() : undefined;
}

/** `X-Original-URL` (nginx, ingress-nginx): an absolute http(s) URL. */
function originalUrl(headers: DistinctHeaders): URL | undefined {
  const value = single(headers, 'x-original-url');
  if (value === undefined || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' ? url : undefined;
}

/**
 * `X-Forwarded-Proto` + `X-Forwarded-Host` + `X-Forwarded-Uri` (Traefik, Caddy): the URI must be a
 * path (origin form), and the URL they make must keep that host, so no `@`, `\` or `//` in either
 * moves the browser to another one.
 */
function forwardedUrl(headers: DistinctHeaders): URL | undefined {
  const proto = single(headers, 'x-forwarded-proto');
  const host = single(headers, 'x-forwarded-host');
  const uri = single(headers, 'x-forwarded-uri') ?? '/';
  if ((proto !== 'https' && proto !== 'http') || host === undefined || !uri.startsWith('/') || uri.startsWith('//')) return undefined;
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return undefined;
  const candidate = `${proto}://${host}${uri}`;
  if (!URL.canParse(candidate)) return undefined;
  const url = new URL(candidate);
  return url.host === new URL(`${proto}://${host}/`).host ? url : undefined;
}

/**
 * What the proxy in front says about the request it asks GET /auth about: used only to send a
 * browser to sign in and back to the page it asked for (`GET /auth?signin=redirect`), never to
 * decide 200 or 401 (the session alone decides). Read only behind `Auth__TrustProxy`, where the
 * proxy sets these headers itself; otherwise the URL is unknown and the answer stays 401.
 * The `X-Forwarded-*` triple wins over `X-Original-URL`: Traefik and Caddy always set the triple and
 * pass a client's `X-Original-URL` on; nginx's configuration clears the triple and sets
 * `X-Original-URL`. Repeated headers count as absent.
 */
export function forwardedRequest(headers: DistinctHeaders, ownMethod: string, trusted: boolean): ForwardedRequest {
  if (!trusted) return { method: ownMethod, url: undefined };
  const method = (single(headers, 'x-forwarded-method') ?? single(headers, 'x-original-method') ?? ownMethod).toUpperCase();
  return { method, url: forwardedUrl(headers) ?? originalUrl(headers) };
}
