import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { infra } from '../../../../test/support/infra.js';

const realmFile = fileURLToPath(new URL('../../../../test/infra/keycloak/realm.json', import.meta.url));

/**
 * A Keycloak client of the auth service, read from the realm the tests run against: `platform-auth`,
 * or `platform-auth-short-lived` (30 s access tokens).
 */
export function authClient(clientId = 'platform-auth'): { clientId: string; secret: string } {
  const realm = JSON.parse(readFileSync(realmFile, 'utf8')) as { clients: Array<{ clientId: string; secret?: string }> };
  const client = realm.clients.find((candidate) => candidate.clientId === clientId);
  if (client?.secret === undefined) throw new Error(`realm.json has no ${clientId} client`);
  return { clientId: client.clientId, secret: client.secret };
}

export const keycloakUrl = (): string => infra('KEYCLOAK_URL');
export const issuer = (): string => `${keycloakUrl()}/realms/${infra('KEYCLOAK_REALM')}`;

export interface KeycloakUser {
  id: string;
  username: string;
  attributes?: Record<string, string[]>;
}

/** A realm's admin through `admin-cli`: the test realm's own (platform-admin) or the master realm's. */
function adminCredentials(realm: string): { username: string; password: string } {
  return realm === 'master'
    ? { username: infra('KEYCLOAK_MASTER_ADMIN_USERNAME'), password: infra('KEYCLOAK_MASTER_ADMIN_PASSWORD') }
    : { username: infra('KEYCLOAK_ADMIN_USERNAME'), password: infra('KEYCLOAK_ADMIN_PASSWORD') };
}

/**
 * The test realm's admin API (`/admin/realms/<realm>/…`) as the admin of `adminRealm`: the realm's
 * own admin (platform-admin) manages its users; the master realm's admin may also manage its
 * clients. The token is fetched once and again shortly before it expires.
 */
function realmAdminApi(adminRealm = infra('KEYCLOAK_REALM')): (path: string, init?: RequestInit) => Promise<Response> {
  const base = `${keycloakUrl()}/admin/realms/${infra('KEYCLOAK_REALM')}`;
  let token: { value: string; renewAt: number } | undefined;
  const authorization = async (): Promise<string> => {
    if (token === undefined || Date.now() >= token.renewAt) {
      const response = await fetch(`${keycloakUrl()}/realms/${adminRealm}/protocol/openid-connect/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', ...adminCredentials(adminRealm) }),
      });
      if (!response.ok) throw new Error(`the ${adminRealm} admin's token: ${response.status} ${await response.text()}`);
      const { access_token: value, expires_in: seconds } = (await response.json()) as { access_token: string; expires_in: number };
      token = { value, renewAt: Date.now() + (seconds - 10) * 1000 };
    }
    return `Bearer ${token.value}`;
  };
  return async (path, init = {}) => fetch(`${base}${path}`, { ...init, headers: { authorization: await authorization(), 'content-type': 'application/json' } });
}

/** The realm's admin API as the realm admin (platform-admin), for arranging and checking users. */
export function keycloakAdmin() {
  const call = realmAdminApi();

  return {
    async usersNamed(username: string): Promise<KeycloakUser[]> {
      return (await (await call(`/users?${new URLSearchParams({ username, exact: 'true' }).toString()}`)).json()) as KeycloakUser[];
    },
    async groupsOf(userId: string): Promise<string[]> {
      return ((await (await call(`/users/${userId}/groups`)).json()) as Array<{ name: string }>).map((group) => group.name);
    },
    /** Adds the user to the realm's top-level group of that name. */
    async addToGroup(userId: string, groupName: string): Promise<void> {
      const groups = (await (await call(`/groups?${new URLSearchParams({ search: groupName, exact: 'true' }).toString()}`)).json()) as Array<{ id: string; name: string }>;
      const group = groups.find((candidate) => candidate.name === groupName);
      if (group === undefined) throw new Error(`no group ${groupName} in the realm`);
      const response = await call(`/users/${userId}/groups/${group.id}`, { method: 'PUT' });
      await response.body?.cancel();
      if (response.status !== 204) throw new Error(`adding ${userId} to ${groupName}: ${response.status}`);
    },
    /** Users whose phoneNumber attribute is exactly the number, whatever their username. */
    async usersWithPhone(phoneNumber: string): Promise<KeycloakUser[]> {
      const users = (await (await call(`/users?${new URLSearchParams({ q: `phoneNumber:${phoneNumber}`, briefRepresentation: 'false' }).toString()}`)).json()) as KeycloakUser[];
      return users.filter((user) => user.attributes?.phoneNumber?.includes(phoneNumber));
    },
    async createUser(user: { username: string; password: string; phoneNumber?: string; locale?: string; groups?: string[] }): Promise<string> {
      const attributes: Record<string, string[]> = {};
      if (user.phoneNumber) attributes.phoneNumber = [user.phoneNumber];
      if (user.locale) attributes.locale = [user.locale];
      const response = await call('/users', {
        method: 'POST',
        body: JSON.stringify({ username: user.username, enabled: true, attributes, groups: user.groups ?? [], credentials: [{ type: 'password', value: user.password, temporary: false }] }),
      });
      if (response.status !== 201) throw new Error(`creating ${user.username}: ${response.status} ${await response.text()}`);
      return response.headers.get('location')!.split('/').pop()!;
    },
    /** How many Keycloak sessions the user has. */
    async sessionCountOf(userId: string): Promise<number> {
      return ((await (await call(`/users/${userId}/sessions`)).json()) as unknown[]).length;
    },
    /** The types of the user's stored credentials (`password`, `otp`, …). */
    async credentialTypesOf(userId: string): Promise<string[]> {
      return ((await (await call(`/users/${userId}/credentials`)).json()) as Array<{ type: string }>).map((credential) => credential.type);
    },
    async deleteUser(id: string): Promise<void> {
      await (await call(`/users/${id}`, { method: 'DELETE' })).body?.cancel();
    },
  };
}

/**
 * Whether Keycloak's password grant through a client that keeps the realm's own direct grant flow
 * (username and password) accepts this password: `admin-cli` (public) unless a confidential
 * client is given.
 */
export async function passwordAccepted(username: string, password: string | undefined, client: { clientId: string; secret?: string } = { clientId: 'admin-cli' }): Promise<boolean> {
  const form = new URLSearchParams({ grant_type: 'password', client_id: client.clientId, username });
  if (client.secret !== undefined) form.set('client_secret', client.secret);
  if (password !== undefined) form.set('password', password);
  const response = await fetch(`${issuer()}/protocol/openid-connect/token`, { method: 'POST', body: form });
  await response.body?.cancel();
  return response.ok;
}

/**
 * A client of the test's own in the realm, a copy of `platform-auth` (realm.json) under another id
 * and secret with the given attributes added (a back-channel logout URL of the instance under
 * test): tests that change a client never touch the one the others share. Returns its credentials,
 * a change of its attributes (e.g. the back-channel URL once the instance listens) and its removal.
 */
export async function createAuthClientCopy(
  clientId: string,
  attributes: Record<string, string>,
): Promise<{ clientId: string; secret: string; setAttributes(changed: Record<string, string>): Promise<void>; remove(): Promise<void> }> {
  const secret = `${clientId}-secret`;
  const call = realmAdminApi('master');
  // The live client, not realm.json: keycloak.sh configure adds what the file cannot hold (the
  // verified phone direct grant flow override the OTP login needs).
  const [live] = (await (await call('/clients?clientId=platform-auth')).json()) as Array<Record<string, unknown> & { attributes?: Record<string, string> }>;
  if (live === undefined) throw new Error('client platform-auth not found');
  // Ids belong to the original; Keycloak assigns the copy's.
  const withoutId = (entry: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(entry).filter(([name]) => name !== 'id'));
  const template = { ...withoutId(live), protocolMappers: (live.protocolMappers as Array<Record<string, unknown>> | undefined)?.map(withoutId) } as Record<string, unknown> & { attributes?: Record<string, string> };
  const response = await call('/clients', { method: 'POST', body: JSON.stringify({ ...template, clientId, secret, attributes: { ...template.attributes, ...attributes } }) });
  if (response.status !== 201) throw new Error(`creating client ${clientId}: ${response.status} ${await response.text()}`);
  const id = response.headers.get('location')!.split('/').pop()!;
  return {
    clientId,
    secret,
    setAttributes: async (changed) => {
      const current = (await (await call(`/clients/${id}`)).json()) as { attributes?: Record<string, string> };
      const updated = await call(`/clients/${id}`, { method: 'PUT', body: JSON.stringify({ ...current, attributes: { ...current.attributes, ...changed } }) });
      if (updated.status !== 204) throw new Error(`updating client ${clientId}: ${updated.status} ${await updated.text()}`);
    },
    remove: async () => {
      await (await call(`/clients/${id}`, { method: 'DELETE' })).body?.cancel();
    },
  };
}

/** A signing key of the test's own, published in the realm's JWKS. */
export interface PassiveRealmKey {
  kid: string;
  privateKey: KeyObject;
  remove(): Promise<void>;
}

/**
 * Adds an RSA key of the test's own to the realm as a passive key (an `rsa` key provider,
 * `active=false`): Keycloak publishes it in the realm's JWKS, as it does every enabled key, and
 * never signs with it. So the test can sign what Keycloak itself would not (a Logout Token with
 * other claims) under a key every relying party of the realm trusts.
 */
export async function addPassiveRealmKey(): Promise<PassiveRealmKey> {
  const call = realmAdminApi('master');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const realmId = ((await (await call('')).json()) as { id: string }).id;
  const name = `test-passive-${randomUUID().slice(0, 8)}`;
  const created = await call('/components', {
    method: 'POST',
    body: JSON.stringify({
      name,
      providerId: 'rsa',
      providerType: 'org.keycloak.keys.KeyProvider',
      parentId: realmId,
      config: { priority: ['-1000'], enabled: ['true'], active: ['false'], algorithm: ['RS256'], privateKey: [privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()] },
    }),
  });
  if (created.status !== 201) throw new Error(`adding a realm key: ${created.status} ${await created.text()}`);
  const id = created.headers.get('location')!.split('/').pop()!;
  const { keys } = (await (await call('/keys')).json()) as { keys: Array<{ kid: string; providerId: string }> };
  const kid = keys.find((key) => key.providerId === id)?.kid;
  if (kid === undefined) throw new Error(`the realm lists no key of provider ${name}`);
  return {
    kid,
    privateKey,
    remove: async () => {
      await (await call(`/components/${id}`, { method: 'DELETE' })).body?.cancel();
    },
  };
}

/** Signs a user out of every Keycloak session through the admin API (`POST /users/{id}/logout`). */
export async function signOutUser(userId: string): Promise<void> {
  const response = await realmAdminApi('master')(`/users/${userId}/logout`, { method: 'POST' });
  if (response.status !== 204) throw new Error(`signing out ${userId}: ${response.status}`);
}

/** Keycloak's userinfo endpoint with a bearer token: its status and claims. */
export async function userinfo(accessToken: string): Promise<{ status: number; claims: Record<string, unknown> }> {
  const response = await fetch(`${issuer()}/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  const text = await response.text();
  return { status: response.status, claims: response.ok ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Keycloak's token introspection (RFC 7662) of a refresh token, as the client it was issued to: is it active? */
export async function introspect(token: string, client: { clientId: string; secret: string }): Promise<boolean> {
  const response = await fetch(`${issuer()}/protocol/openid-connect/token/introspect`, {
    method: 'POST',
    // Keycloak introspects a refresh token only when told it is one.
    body: new URLSearchParams({ token, token_type_hint: 'refresh_token', client_id: client.clientId, client_secret: client.secret }),
  });
  if (!response.ok) throw new Error(`introspection answered ${response.status}`);
  return ((await response.json()) as { active: boolean }).active;
}

/** Keycloak's token revocation (RFC 7009) as the client the refresh token was issued to. */
export async function revokeAtKeycloak(refreshToken: string, client: { clientId: string; secret: string }): Promise<void> {
  const response = await fetch(`${issuer()}/protocol/openid-connect/revoke`, {
    method: 'POST',
    body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: client.clientId, client_secret: client.secret }),
  });
  if (!response.ok) throw new Error(`revocation answered ${response.status}`);
}

/** Deletes the users a test's logins created (usernames are the phone numbers). */
export async function deleteUsersNamed(usernames: Iterable<string>): Promise<void> {
  const admin = keycloakAdmin();
  for (const username of usernames) {
    for (const user of await admin.usersNamed(username)) await admin.deleteUser(user.id);
  }
}
