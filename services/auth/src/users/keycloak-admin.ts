import { AsyncLocalStorage } from 'node:async_hooks';
import KeycloakAdminClient, { NetworkError } from '@keycloak/keycloak-admin-client';
import type { Dispatcher } from 'undici';
import { badGateway, unavailable, type AppError } from '@sp/core';
import { fromOidcError, withTokenRetry, type OidcTokenClient } from '@sp/identity';
import type { OidcSettings } from '../config.js';
import type { DirectoryUser, UserDirectory } from './user-directory.js';

const IDP = 'identity provider';

type UserRepresentation = Awaited<ReturnType<KeycloakAdminClient['users']['find']>>[number];

/** An admin API failure is Keycloak's fault or ours, never the caller's: its 5xx and transport failures 503, any other refusal 502. */
function fromAdminError(err: unknown): AppError {
  if (err instanceof NetworkError) return err.response.status >= 500 ? unavailable(IDP, err) : badGateway(IDP, err);
  return fromOidcError(err);
}

const isStatus = (err: unknown, status: number): boolean => err instanceof NetworkError && err.response.status === status;

const toDirectoryUser = (user: UserRepresentation): DirectoryUser => {
  if (user.id === undefined || user.username === undefined) throw badGateway(IDP, new Error('it listed a user without id or username'));
  return { id: user.id, username: user.username };
};

/** Only an exact value of the `phoneNumber` attribute counts (the search also matches substrings). */
const holdsNumber = (user: UserRepresentation, phoneNumber: string): boolean => {
  const values: unknown = user.attributes?.phoneNumber;
  return Array.isArray(values) && values.includes(phoneNumber);
};

export interface KeycloakAdminOptions {
  /** The realm admin's tokens (password grant through `admin-cli`, platform OIDC token client). */
  tokens: OidcTokenClient;
  /** The Keycloak connection pool (certificate policy, timeouts) the admin client's fetch goes through. */
  dispatcher: Dispatcher;
}

/**
 * The user directory on Keycloak's admin REST API through Keycloak's own admin client (the
 * version of the server), authenticated as the realm's admin user (Oidc__AdminCredentials). The
 * admin token comes from the token client, renewed before it expires; a 401 (token revoked or
 * expired early) drops it and repeats the call once with a fresh one.
 */
export function createKeycloakAdmin(settings: Pick<OidcSettings, 'serverUrl' | 'realm' | 'timeoutMs'>, options: KeycloakAdminOptions): UserDirectory {
  const client = new KeycloakAdminClient({
    baseUrl: settings.serverUrl,
    realmName: settings.realm,
    timeout: settings.timeoutMs,
    requestOptions: { dispatcher: options.dispatcher },
  });
  // The admin client asks for a token per request: each call hands it the one it was started with,
  // so the token a 401 answered is the one dropped.
  const callToken = new AsyncLocalStorage<string>();
  client.registerTokenProvider({ getAccessToken: async () => callToken.getStore() ?? options.tokens.token() });

  const call = <T>(request: () => Promise<T>): Promise<T> =>
    withTokenRetry(options.tokens, (token) => callToken.run(token, request), { error: (err) => isStatus(err, 401) });

  const adminCall = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await call(request);
    } catch (err) {
      throw fromAdminError(err);
    }
  };

  return {
    async findByPhone(phoneNumber) {
      // Keycloak keeps usernames in lower case; an E.164 number has none to lose.
      const byUsername = (await adminCall(() => client.users.find({ username: phoneNumber, exact: true, briefRepresentation: true }))).find((user) => user.username === phoneNumber);
      if (byUsername !== undefined) return toDirectoryUser(byUsername);
      // The attribute search (`q`) is checked again here: only an exact, single value counts.
      const byAttribute = (await adminCall(() => client.users.find({ q: `phoneNumber:${phoneNumber}`, exact: true, briefRepresentation: false }))).filter((user) => holdsNumber(user, phoneNumber));
      const [first] = byAttribute.map(toDirectoryUser).sort((a, b) => a.id.localeCompare(b.id));
      return first;
    },
    async createUser(user) {
      try {
        const { id } = await call(() =>
          client.users.create({
            username: user.username,
            enabled: true,
            attributes: { phoneNumber: [user.phoneNumber], locale: [user.locale] },
            groups: [`/${user.group}`],
          }),
        );
        return { id, username: user.username };
      } catch (err) {
        if (isStatus(err, 409)) return undefined;
        throw fromAdminError(err);
      }
    },
  };
}
