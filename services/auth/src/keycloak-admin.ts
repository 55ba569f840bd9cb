import { AppError, badGateway, unavailable } from '@sp/platform';
import type { OidcSettings } from './config.js';
import type { IdpFetch } from './idp-http.js';

/** A user as the provisioning needs it. */
export interface DirectoryUser {
  id: string;
  username: string;
}

export interface NewUser {
  username: string;
  phoneNumber: string;
  locale: string;
  /** The group (by name, top level) the user is created in. */
  group: string;
  /** Its first, non-temporary password. */
  password: string;
}

/** Users in the identity provider (the port; the adapter is the Keycloak admin REST API). */
export interface UserDirectory {
  /** The user whose username is exactly `phoneNumber`, else the one whose `phoneNumber` attribute is exactly it. */
  findByPhone(phoneNumber: string): Promise<DirectoryUser | undefined>;
  /** Creates the user, in its group and with its password, in one call; undefined when the username was taken meanwhile. */
  createUser(user: NewUser): Promise<DirectoryUser | undefined>;
  /** The names of the user's groups. */
  groupsOf(userId: string): Promise<string[]>;
  /** Sets a non-temporary password. */
  setPassword(userId: string, password: string): Promise<void>;
}

interface AdminToken {
  value: string;
  renewAtMs: number;
}

/** An error answer of the admin API: Keycloak's fault or ours, never the caller's. */
async function adminError(response: Response, what: string): Promise<AppError> {
  const detail = (await response.text().catch(() => '')).slice(0, 200);
  if (response.status >= 500) return unavailable('identity provider', new Error(`${what}: ${response.status} ${detail}`));
  return badGateway('identity provider', new Error(`${what}: ${response.status} ${detail}`));
}

/**
 * The Keycloak admin REST API, authenticated as the realm's admin user (Oidc__AdminCredentials)
 * through the password grant of the realm's public `admin-cli` client. The admin token is kept
 * until shortly before it expires and fetched again after a 401.
 */
export function createKeycloakAdmin(settings: OidcSettings, options: { fetch: IdpFetch; now?: () => number }): UserDirectory {
  const now = options.now ?? Date.now;
  const base = `${settings.serverUrl}/admin/realms/${encodeURIComponent(settings.realm)}`;
  let token: Promise<AdminToken> | undefined;

  const fetchToken = async (): Promise<AdminToken> => {
    const response = await options.fetch(`${settings.issuer}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: settings.adminUsername, password: settings.adminPassword }),
    });
    if (!response.ok) throw await adminError(response, 'admin token');
    const body = (await response.json()) as { access_token: string; expires_in: number };
    return { value: body.access_token, renewAtMs: now() + Math.max(0, body.expires_in - 30) * 1000 };
  };

  const adminToken = async (): Promise<string> => {
    const current = await token;
    if (current !== undefined && current.renewAtMs > now()) return current.value;
    token = fetchToken().catch((err: unknown) => {
      token = undefined;
      throw err;
    });
    return (await token).value;
  };

  /** One admin API call; a 401 (token revoked or expired early) gets one retry with a new token. */
  const call = async (path: string, init: RequestInit = {}, retry = true): Promise<Response> => {
    let response: Response;
    try {
      const headers = { authorization: `Bearer ${await adminToken()}`, ...(init.body ? { 'content-type': 'application/json' } : {}) };
      response = await options.fetch(`${base}${path}`, { ...init, headers });
    } catch (err) {
      throw err instanceof AppError ? err : unavailable('identity provider', err);
    }
    if (response.status !== 401 || !retry) return response;
    await response.body?.cancel();
    token = undefined;
    return call(path, init, false);
  };

  const search = async (query: Record<string, string>): Promise<Array<DirectoryUser & { attributes?: Record<string, string[]> }>> => {
    const response = await call(`/users?${new URLSearchParams({ ...query, exact: 'true' }).toString()}`);
    if (!response.ok) throw await adminError(response, 'user search');
    return (await response.json()) as Array<DirectoryUser & { attributes?: Record<string, string[]> }>;
  };

  return {
    async findByPhone(phoneNumber) {
      // Keycloak keeps usernames in lower case; an E.164 number has none to lose.
      const byUsername = (await search({ username: phoneNumber, briefRepresentation: 'true' })).find((user) => user.username === phoneNumber);
      if (byUsername !== undefined) return { id: byUsername.id, username: byUsername.username };
      // The attribute search (`q`) is checked again here: only an exact, single value counts.
      const byAttribute = (await search({ q: `phoneNumber:${phoneNumber}`, briefRepresentation: 'false' })).filter((user) => user.attributes?.phoneNumber?.includes(phoneNumber));
      const [first] = byAttribute.sort((a, b) => a.id.localeCompare(b.id));
      return first === undefined ? undefined : { id: first.id, username: first.username };
    },
    async createUser(user) {
      const response = await call('/users', {
        method: 'POST',
        body: JSON.stringify({
          username: user.username,
          enabled: true,
          attributes: { phoneNumber: [user.phoneNumber], locale: [user.locale] },
          groups: [`/${user.group}`],
          credentials: [{ type: 'password', value: user.password, temporary: false }],
        }),
      });
      if (response.status !== 201 && response.status !== 409) throw await adminError(response, 'user creation');
      await response.body?.cancel();
      const id = response.headers.get('location')?.split('/').pop();
      if (response.status === 409) return undefined;
      if (!id) throw badGateway('identity provider', new Error('it created a user without an id'));
      return { id, username: user.username };
    },
    async groupsOf(userId) {
      const response = await call(`/users/${encodeURIComponent(userId)}/groups?briefRepresentation=true`);
      if (!response.ok) throw await adminError(response, 'user groups');
      return ((await response.json()) as Array<{ name: string }>).map((group) => group.name);
    },
    async setPassword(userId, password) {
      const response = await call(`/users/${encodeURIComponent(userId)}/reset-password`, {
        method: 'PUT',
        body: JSON.stringify({ type: 'password', value: password, temporary: false }),
      });
      if (!response.ok) throw await adminError(response, 'password');
      await response.body?.cancel();
    },
  };
}
