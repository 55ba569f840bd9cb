import { unavailable } from '@sp/platform';
import { badGateway } from '@sp/platform';
import type { TokenProvider } from './token-provider.js';

export interface ClientCredentialsOptions {
  /** Keycloak base URL (`Oidc__ServerUrl`) and realm: the token endpoint is `{serverUrl}/realms/{realm}/protocol/openid-connect/token`. */
  serverUrl: string;
  realm: string;
  clientId: string;
  clientSecret: string;
  timeoutMs?: number;
  /** A cached token is renewed this long before it expires. Default 30 s. */
  refreshMarginMs?: number;
  now?: () => number;
}

interface TokenResponse {
  access_token?: unknown;
  expires_in?: unknown;
}

/** The token endpoint of a Keycloak realm. */
export function keycloakTokenEndpoint(serverUrl: string, realm: string): string {
  return `${serverUrl.replace(/\/+$/, '')}/realms/${encodeURIComponent(realm)}/protocol/openid-connect/token`;
}

async function requestToken(options: ClientCredentialsOptions): Promise<{ token: string; expiresInMs: number }> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: options.clientId, client_secret: options.clientSecret });
  let response: Response;
  try {
    response = await fetch(keycloakTokenEndpoint(options.serverUrl, options.realm), { method: 'POST', body, signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
  } catch (err) {
    throw unavailable('identity provider', err);
  }
  if (response.status >= 500) throw unavailable('identity provider', new Error(`token endpoint answered ${response.status}`));
  const json = (await response.json().catch(() => ({}))) as TokenResponse;
  if (!response.ok || typeof json.access_token !== 'string') {
    throw badGateway('identity provider', new Error(`token endpoint answered ${response.status}`));
  }
  const expiresIn = typeof json.expires_in === 'number' ? json.expires_in : 60;
  return { token: json.access_token, expiresInMs: expiresIn * 1000 };
}

/**
 * OAuth 2.0 client-credentials tokens from Keycloak, cached until shortly before they expire.
 * Concurrent callers share one request to the token endpoint. Keycloak unreachable or failing:
 * 503; refusing the client (wrong secret): 502.
 */
export function createKeycloakTokenProvider(options: ClientCredentialsOptions): TokenProvider {
  const now = options.now ?? Date.now;
  const margin = options.refreshMarginMs ?? 30_000;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return {
    token() {
      if (cached && now() < cached.renewAt) return Promise.resolve(cached.token);
      pending ??= requestToken(options)
        .then(({ token, expiresInMs }) => {
          cached = { token, renewAt: now() + Math.max(expiresInMs - margin, expiresInMs / 2) };
          return token;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
  };
}
