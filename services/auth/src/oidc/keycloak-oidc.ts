import * as oidc from 'openid-client';
import { AppError, badGateway, badRequest, unauthorized, unavailable } from '@sp/core';
import { fromOidcError, isOidcUnreachable } from '@sp/identity';
import type { OidcSettings } from '../config.js';
import type { IdpFetch } from './idp-http.js';
import type { IdentityProvider, LoginTokens, RenewedTokens } from './identity-provider.js';

/** An OAuth error code is a short token ([a-z_]); anything else is not echoed. */
const oauthCode = (value: unknown): string => (typeof value === 'string' && /^[a-z_]{1,64}$/.test(value) ? value : 'error');

/** A failed code exchange: the caller's fault (400) unless Keycloak is unreachable (503). */
function fromExchangeError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isOidcUnreachable(err)) return unavailable('identity provider', err);
  if (err instanceof oidc.AuthorizationResponseError) return badRequest(`login failed: ${oauthCode(err.error)}`);
  if (err instanceof oidc.ResponseBodyError) return badRequest(`the authorization code was refused: ${oauthCode(err.error)}`);
  const refused = badRequest('the authorization response is invalid');
  return new AppError(refused.status, refused.code, refused.message, { cause: err });
}

/** A refused refresh: the session is over (401); anything else as for the service's own grants (fromOidcError). */
function fromRefreshError(err: unknown): AppError {
  if (err instanceof oidc.ResponseBodyError && err.status < 500) return unauthorized('the session has ended at the identity provider');
  return fromOidcError(err);
}

type Grant = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

/** Keycloak's `refresh_expires_in` (not in RFC 6749), when it sent one. */
function refreshExpiresIn(grant: Grant): number | undefined {
  const value = grant.refresh_expires_in;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

const groupsOf = (claims: oidc.IDToken): string[] => (Array.isArray(claims.groups) ? claims.groups.filter((group): group is string => typeof group === 'string') : []);

function toRenewedTokens(grant: Grant, requestedAtMs: number): RenewedTokens {
  // A refresh grant's ID token (checked by openid-client) carries the groups as they are now.
  const claims = grant.claims();
  return {
    requestedAtMs,
    accessToken: grant.access_token,
    refreshToken: grant.refresh_token,
    // As sent, counted from requestedAtMs on the service's clock (expiresIn() counts down on Date.now in whole seconds).
    expiresInSeconds: grant.expires_in ?? 300,
    refreshExpiresInSeconds: refreshExpiresIn(grant),
    ...(claims === undefined ? {} : { groups: groupsOf(claims) }),
  };
}

function toLoginTokens(grant: Grant, requestedAtMs: number): LoginTokens {
  const claims = grant.claims();
  if (claims === undefined) throw badGateway('identity provider', new Error('it returned no ID token'));
  return {
    ...toRenewedTokens(grant, requestedAtMs),
    subject: claims.sub,
    phoneNumber: typeof claims.phone_number === 'string' ? claims.phone_number : undefined,
    locale: typeof claims.locale === 'string' ? claims.locale : undefined,
    groups: groupsOf(claims),
    idpSessionId: typeof claims.sid === 'string' ? claims.sid : undefined,
  };
}

/**
 * Keycloak through openid-client: discovery from the realm's issuer URL (lazily, retried after a
 * failure, so the service starts while Keycloak is still booting), client authentication with
 * the client secret. openid-client refuses plain-HTTP issuers; `allowInsecureRequests` is set
 * only when the configuration allows it (a loopback http URL, or outside Production).
 */
export function createKeycloakOidc(settings: OidcSettings, options: { fetch: IdpFetch; redirectUri: string; now?: () => number }): IdentityProvider {
  const now = options.now ?? Date.now;
  let configuration: Promise<oidc.Configuration> | undefined;

  const discover = (): Promise<oidc.Configuration> => {
    configuration ??= oidc
      .discovery(new URL(settings.issuer), settings.clientId, { client_secret: settings.clientSecret }, oidc.ClientSecretPost(settings.clientSecret), {
        [oidc.customFetch]: options.fetch,
        execute: settings.allowInsecureHttp ? [oidc.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        configuration = undefined;
        throw unavailable('identity provider', err);
      });
    return configuration;
  };

  return {
    async authorizationUrl(request) {
      return oidc.buildAuthorizationUrl(await discover(), {
        redirect_uri: options.redirectUri,
        scope: 'openid',
        state: request.state,
        nonce: request.nonce,
        code_challenge: request.codeChallenge,
        code_challenge_method: 'S256',
      });
    },
    async exchangeCode(callback) {
      try {
        const requestedAtMs = now();
        const grant = await oidc.authorizationCodeGrant(await discover(), callback.callbackUrl, {
          pkceCodeVerifier: callback.codeVerifier,
          expectedState: callback.state,
          expectedNonce: callback.nonce,
          idTokenExpected: true,
        });
        return toLoginTokens(grant, requestedAtMs);
      } catch (err) {
        throw fromExchangeError(err);
      }
    },
    async verifiedPhoneGrant(username) {
      try {
        const requestedAtMs = now();
        // grant_type=password without a password: the client's direct grant flow asks for none.
        return toLoginTokens(await oidc.genericGrantRequest(await discover(), 'password', { username, scope: 'openid' }), requestedAtMs);
      } catch (err) {
        // Keycloak's answer for a user it does not know, or one disabled or locked out.
        if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') return undefined;
        throw fromOidcError(err);
      }
    },
    async refresh(refreshToken) {
      try {
        const requestedAtMs = now();
        return toRenewedTokens(await oidc.refreshTokenGrant(await discover(), refreshToken), requestedAtMs);
      } catch (err) {
        throw fromRefreshError(err);
      }
    },
    async revoke(refreshToken) {
      try {
        await oidc.tokenRevocation(await discover(), refreshToken, { token_type_hint: 'refresh_token' });
      } catch (err) {
        throw fromOidcError(err);
      }
    },
    async jwksUri() {
      const uri = (await discover()).serverMetadata().jwks_uri;
      if (uri === undefined) throw badGateway('identity provider', new Error('its discovery document names no jwks_uri'));
      return new URL(uri);
    },
    async check() {
      const response = await options.fetch(`${settings.issuer}/.well-known/openid-configuration`);
      await response.body?.cancel();
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
    },
  };
}
