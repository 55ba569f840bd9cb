import { createOidcTokenClient } from '@sp/identity';
import type { AuthConfig } from './config.js';
import type { IdentityProvider } from './oidc/identity-provider.js';
import { createIdpHttp, type IdpFetch } from './oidc/idp-http.js';
import { createKeycloakAdmin } from './users/keycloak-admin.js';
import { createKeycloakOidc } from './oidc/keycloak-oidc.js';
import type { UserDirectory } from './users/user-directory.js';

/** Keycloak as the service talks to it: one connection pool for the OIDC client and the admin API. */
export interface Keycloak {
  /** Logins, refresh grants and revocation (openid-client). */
  identityProvider: IdentityProvider;
  /** Users and groups (the admin client, with the admin-cli password grant). */
  users: UserDirectory;
  /** Calls through the pool, for what openid-client does not fetch itself: the JWKS. */
  fetch: IdpFetch;
  /** Closes the connection pool (shutdown). */
  close(): Promise<void>;
}

/** The realm of `Oidc__*`, with `{publicBaseUrl}/redirect` as the login's redirect URI; `now` is the service's clock. */
export function createKeycloak(config: Pick<AuthConfig, 'oidc' | 'publicBaseUrl'>, now?: () => number): Keycloak {
  const { oidc } = config;
  const http = createIdpHttp({ timeoutMs: oidc.timeoutMs, ignoreCertificateErrors: oidc.ignoreCertificateErrors });
  const adminTokens = createOidcTokenClient({
    issuer: oidc.issuer,
    grant: { type: 'password', clientId: 'admin-cli', username: oidc.adminUsername, password: oidc.adminPassword },
    timeoutMs: oidc.timeoutMs,
    allowInsecureHttp: oidc.allowInsecureHttp,
    fetch: http.fetch,
  });
  return {
    identityProvider: createKeycloakOidc(oidc, { fetch: http.fetch, redirectUri: `${config.publicBaseUrl}/redirect`, ...(now === undefined ? {} : { now }) }),
    users: createKeycloakAdmin(oidc, { tokens: adminTokens, dispatcher: http.dispatcher }),
    fetch: http.fetch,
    close: () => http.close(),
  };
}
