import { AppError, unavailable } from '@sp/platform';
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
}

/** Users in the identity provider (the port; the adapter is the Keycloak admin REST API). */
export interface UserDirectory {
  /** The user whose username is exactly `username`. */
  findByUsername(username: string): Promise<DirectoryUser | undefined>;
  /** Creates the user; when it was created meanwhile by someone else, returns that one. */
  createUser(user: NewUser): Promise<DirectoryUser>;
  /** Idempotent: adds the user to the group (by name, top level) unless already a member. */
  addToGroup(userId: string, groupName: string): Promise<void>;
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
  return new AppError(502, 'bad_gateway', 'the identity provider refused a provisioning request', { cause: new Error(`${what}: ${response.status} ${detail}`) });
}

/**
 * The Keycloak admin REST API, authenticated as the realm's admin user (Oidc__AdminCredentials)
 * through the password grant of the realm's public `admin-cli` client. The admin token is kept
 * until shortly before it expires and fetched again after a 401. Group ids are looked up once.
 */
export function createKeycloakAdmin(settings: OidcSettings, options: { fetch: IdpFetch; now?: () => number }): UserDirectory {
  const now = options.now ?? Date.now;
  const base = `${settings.serverUrl}/admin/realms/${encodeURIComponent(settings.realm)}`;
  let token: Promise<AdminToken> | undefined;
  const groupIds = new Map<string, string>();

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

  const findByUsername = async (username: string): Promise<DirectoryUser | undefined> => {
    const response = await call(`/users?${new URLSearchParams({ username, exact: 'true', briefRepresentation: 'true' }).toString()}`);
    if (!response.ok) throw await adminError(response, 'user search');
    const users = (await response.json()) as DirectoryUser[];
    return users.find((user) => user.username === username.toLowerCase());
  };

  const groupId = async (name: string): Promise<string> => {
    const known = groupIds.get(name);
    if (known !== undefined) return known;
    const response = await call(`/group-by-path/${encodeURIComponent(name)}`);
    if (!response.ok) throw await adminError(response, `group ${name}`);
    const { id } = (await response.json()) as { id: string };
    groupIds.set(name, id);
    return id;
  };

  return {
    findByUsername,
    async createUser(user) {
      const response = await call('/users', {
        method: 'POST',
        body: JSON.stringify({ username: user.username, enabled: true, attributes: { phoneNumber: [user.phoneNumber], locale: [user.locale] } }),
      });
      if (response.status !== 201 && response.status !== 409) throw await adminError(response, 'user creation');
      await response.body?.cancel();
      const id = response.headers.get('location')?.split('/').pop();
      if (response.status === 201 && id) return { id, username: user.username };
      // 409: created meanwhile (a concurrent first login of the same number): use that user.
      const existing = await findByUsername(user.username);
      if (existing === undefined) throw new AppError(502, 'bad_gateway', 'the identity provider refused a provisioning request');
      return existing;
    },
    async addToGroup(userId, groupName) {
      const response = await call(`/users/${encodeURIComponent(userId)}/groups/${encodeURIComponent(await groupId(groupName))}`, { method: 'PUT' });
      if (!response.ok) throw await adminError(response, 'group membership');
      await response.body?.cancel();
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
