/** Tokens of one login, with the claims of its validated ID token. */
export interface LoginTokens {
  accessToken: string;
  refreshToken: string | undefined;
  /** Seconds until the access token expires, counted from when the provider issued it. */
  expiresInSeconds: number;
  /**
   * When the grant request was sent (Unix ms): no later than the issue, so `requestedAtMs +
   * expiresInSeconds` is never past the token's real expiry, however slow the answer.
   */
  requestedAtMs?: number;
  /** Seconds until the refresh token expires (Keycloak's `refresh_expires_in`; 0 for none that expires). */
  refreshExpiresInSeconds: number | undefined;
  /** `sub`: the user's id at the identity provider. */
  subject: string;
  /** `phone_number` claim, when the user has one. */
  phoneNumber: string | undefined;
  /** `locale` claim, when the user has one. */
  locale: string | undefined;
  /** The names of the user's groups (`groups` claim of the ID token; empty without one). */
  groups: string[];
  /** `sid` claim: the provider's session, as a back-channel logout names it. */
  idpSessionId?: string | undefined;
}

/**
 * What a refresh grant brings: a new access token and, when the provider rotates it, a new refresh
 * token; with a new ID token (Keycloak sends one for an `openid` login), the user's groups as they
 * are now (undefined without one: the session keeps those it had).
 */
export type RenewedTokens = Pick<LoginTokens, 'accessToken' | 'refreshToken' | 'expiresInSeconds' | 'refreshExpiresInSeconds' | 'requestedAtMs'> & { groups?: string[] };

/** The parameters of a browser login: PKCE challenge, state and nonce. */
export interface AuthorizationRequest {
  state: string;
  nonce: string;
  codeChallenge: string;
}

/** What the browser brought back to /redirect, and what the login started with. */
export interface AuthorizationCallback {
  /** The full URL of the /redirect request, as `${publicBaseUrl}/redirect?...`. */
  callbackUrl: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * The OpenID Connect side of Keycloak (the port; keycloak-oidc.ts is the adapter). Failures to
 * reach it reject with a 503 AppError; a refused code exchange rejects with a 400 AppError.
 */
export interface IdentityProvider {
  /** The authorization endpoint URL to send the browser to. */
  authorizationUrl(request: AuthorizationRequest): Promise<URL>;
  /** Authorization code grant with PKCE; state, nonce and ID token are checked. */
  exchangeCode(callback: AuthorizationCallback): Promise<LoginTokens>;
  /**
   * Tokens for a user whose phone number this service has verified with a one-time password: the
   * direct grant of the service's own client, whose flow (Keycloak's client flow override "verified
   * phone direct grant") checks the username and asks for no credential. No password is set, sent
   * or hashed; the session is a normal Keycloak session (refresh, revocation, logout). Undefined
   * when Keycloak refuses the user (none of that name, disabled, locked out).
   */
  verifiedPhoneGrant(username: string): Promise<LoginTokens | undefined>;
  /**
   * Refresh token grant. A refresh token the provider refuses (expired, revoked, session ended)
   * rejects with a 401 AppError; an unreachable provider with a 503.
   */
  refresh(refreshToken: string): Promise<RenewedTokens>;
  /** Revokes a refresh token (ends the Keycloak session). */
  revoke(refreshToken: string): Promise<void>;
  /** Where the provider publishes its signing keys (discovery's `jwks_uri`): logout tokens are checked against them. */
  jwksUri(): Promise<URL>;
  /** Readiness: fetches the discovery document. */
  check(): Promise<void>;
}
