import { Agent, fetch as undiciFetch, type Dispatcher, type RequestInit as UndiciRequestInit } from 'undici';

/** `fetch` towards the identity provider, as openid-client and the admin client use it. */
export type IdpFetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface IdpHttp {
  /** For openid-client (its `customFetch`). */
  fetch: IdpFetch;
  /** For the admin client, which calls the global `fetch` with it (undici 7, the major Node 24's own fetch is built on). */
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

/**
 * One keep-alive connection pool for every call to Keycloak, each bounded by `timeoutMs`.
 * With `ignoreCertificateErrors` (IGNORE_SSL_CERT_VALIDATION outside Production) the pool
 * accepts any certificate; nothing else in the process is affected.
 */
export function createIdpHttp(options: { timeoutMs: number; ignoreCertificateErrors: boolean }): IdpHttp {
  const agent = new Agent({
    connect: { rejectUnauthorized: !options.ignoreCertificateErrors, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const fetch: IdpFetch = async (url, init = {}) => {
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
    return undiciFetch(url, { ...(init as UndiciRequestInit), signal, dispatcher: agent });
  };
  return { fetch, dispatcher: agent, close: () => agent.close() };
}
