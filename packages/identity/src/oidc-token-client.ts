import * as oidc from 'openid-client';
import { fromOidcError } from './oidc-errors.js';

/** How the service proves who it is at the token endpoint. */
export type OidcGrant =
  /** OAuth 2.0 client credentials of a confidential client (a service account). */
  | { type: 'client_credentials'; clientId: string; clientSecret: string }
  /** A user's password through a public client (Keycloak's `admin-cli` for its admin REST API). */
  | { type: 'password'; clientId: string; username: string; password: string };

export interface OidcTokenClientOptions {
  /** The issuer URL (for Keycloak `keycloakIssuer(serverUrl, realm)`), where discovery starts. */
  issuer: string;
  grant: OidcGrant;
  /** Each call to the identity provider is bounded by this. Default 5 s. */
  timeoutMs?: number;
  /** A token is renewed this long before it expires (at most half its life). Default 30 s. */
  refreshMarginMs?: number;
  /** openid-client refuses plain-http issuers unless this is set (loopback or non-production only). */
  allowInsecureHttp?: boolean;
  /** The `fetch` to reach the identity provider with (a connection pool, TLS settings). */
  fetch?: oidc.CustomFetch;
  /** The clock, Unix ms. */
  now?: () => number;
}

/** Keycloak's issuer URL of `realm` (where OIDC discovery starts): `{serverUrl}/realms/{realm}`. */
export function keycloakIssuer(serverUrl: string, realm: string): string {
  return `${serverUrl.replace(/\/+$/, '')}/realms/${encodeURIComponent(realm)}`;
}

/** Access tokens for calls the service makes on its own behalf. */
export interface OidcTokenClient {
  /** A valid access token: the cached one until shortly before it expires, else a fresh one. */
  token(): Promise<string>;
  /** Forgets `token` (the receiver refused it), so the next call fetches a fresh one. */
  invalidate(token: string): void;
}

interface CachedToken {
  value: string;
  renewAtMs: number;
  expiresAtMs: number;
}

/** Keycloak's access tokens live 300 s by default; an answer without `expires_in` is kept for a minute. */
const DEFAULT_LIFETIME_SECONDS = 60;

function discover(options: OidcTokenClientOptions): Promise<oidc.Configuration> {
  const { grant } = options;
  const clientAuth = grant.type === 'client_credentials' ? oidc.ClientSecretPost(grant.clientSecret) : oidc.None();
  return oidc.discovery(new URL(options.issuer), grant.clientId, undefined, clientAuth, {
    timeout: Math.ceil((options.timeoutMs ?? 5000) / 1000),
    execute: options.allowInsecureHttp ? [oidc.allowInsecureRequests] : [],
    ...(options.fetch === undefined ? {} : { [oidc.customFetch]: options.fetch }),
  });
}

function grantRequest(configuration: oidc.Configuration, grant: OidcGrant): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  if (grant.type === 'client_credentials') return oidc.clientCredentialsGrant(configuration, {});
  return oidc.genericGrantRequest(configuration, 'password', { username: grant.username, password: grant.password });
}

/**
 * One OIDC token client on openid-client: discovery once (retried after a failure, so a service
 * starts while the identity provider is still booting), the token cached until `refreshMarginMs`
 * before it expires, and concurrent callers sharing one request. A renewal that fails while the
 * cached token is still valid hands out the cached one, so a short outage of the identity provider
 * is not felt before tokens actually expire. Failures are AppErrors: unreachable 503, refused 502.
 */
export function createOidcTokenClient(options: OidcTokenClientOptions): OidcTokenClient {
  const now = options.now ?? Date.now;
  const margin = options.refreshMarginMs ?? 30_000;
  let configuration: Promise<oidc.Configuration> | undefined;
  let cached: CachedToken | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    configuration ??= discover(options).catch((err: unknown) => {
      configuration = undefined;
      throw err;
    });
    try {
      // The token's life counts from the request, not the answer: never held past its real expiry.
      // `expires_in` as sent, on this clock: openid-client's expiresIn() counts down on its own
      // clock (Date.now) in whole seconds, so a millisecond after the answer it says 299 of 300.
      const requestedAt = now();
      const response = await grantRequest(await configuration, options.grant);
      const lifetimeMs = (response.expires_in ?? DEFAULT_LIFETIME_SECONDS) * 1000;
      cached = { value: response.access_token, renewAtMs: requestedAt + Math.max(lifetimeMs - margin, lifetimeMs / 2), expiresAtMs: requestedAt + lifetimeMs };
      return cached.value;
    } catch (err) {
      throw fromOidcError(err);
    }
  };

  const renew = (): Promise<string> => {
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  return {
    async token() {
      const held = cached;
      if (held !== undefined && now() < held.renewAtMs) return held.value;
      try {
        return await renew();
      } catch (err) {
        if (held !== undefined && cached === held && now() < held.expiresAtMs) return held.value;
        throw err;
      }
    },
    invalidate(token) {
      if (cached?.value === token) cached = undefined;
    },
  };
}
