// Users the auth benchmark creates in the shared Keycloak realm, through the realm admin's API.
import { fetch } from 'undici';

async function adminHeaders(infra: Record<string, string>): Promise<Record<string, string>> {
  const realmUrl = `${infra.KEYCLOAK_URL}/realms/${infra.KEYCLOAK_REALM}`;
  const response = await fetch(`${realmUrl}/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: infra.KEYCLOAK_ADMIN_USERNAME!, password: infra.KEYCLOAK_ADMIN_PASSWORD! }),
  });
  const token = (await response.json()) as { access_token: string };
  return { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };
}

const adminUrl = (infra: Record<string, string>): string => `${infra.KEYCLOAK_URL}/admin/realms/${infra.KEYCLOAK_REALM}`;

/** A user who signs in at Keycloak's login page with a password and has a verified email (oauth2-proxy needs one). */
export async function createPasswordUser(infra: Record<string, string>, user: { username: string; password: string; email: string }): Promise<void> {
  const response = await fetch(`${adminUrl(infra)}/users`, {
    method: 'POST',
    headers: await adminHeaders(infra),
    body: JSON.stringify({ username: user.username, email: user.email, emailVerified: true, enabled: true, credentials: [{ type: 'password', value: user.password, temporary: false }] }),
  });
  if (response.status !== 201) throw new Error(`creating ${user.username}: ${response.status} ${await response.text()}`);
}

/** Removes the users the benchmark created (by exact username). */
export async function deleteKeycloakUsers(infra: Record<string, string>, usernames: string[]): Promise<void> {
  const headers = await adminHeaders(infra);
  for (const username of usernames) {
    const users = (await (await fetch(`${adminUrl(infra)}/users?${new URLSearchParams({ username, exact: 'true' }).toString()}`, { headers })).json()) as Array<{ id: string }>;
    for (const user of users) await (await fetch(`${adminUrl(infra)}/users/${user.id}`, { method: 'DELETE', headers })).text();
  }
}

/**
 * What each OTP login cost Keycloak before the verified phone direct grant, for reference: a fresh
 * random password set through the admin API, then spent in a password grant (`admin-cli`, the
 * realm's own direct grant flow), `count` times for one user. Resolves with the wall time per round.
 */
export async function passwordRounds(infra: Record<string, string>, username: string, count: number): Promise<number> {
  const headers = await adminHeaders(infra);
  const [user] = (await (await fetch(`${adminUrl(infra)}/users?${new URLSearchParams({ username, exact: 'true' }).toString()}`, { headers })).json()) as Array<{ id: string }>;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const password = `Round-${i}-${Math.random().toString(36).slice(2)}`;
    const reset = await fetch(`${adminUrl(infra)}/users/${user!.id}/reset-password`, { method: 'PUT', headers, body: JSON.stringify({ type: 'password', value: password, temporary: false }) });
    await reset.text();
    const grant = await fetch(`${infra.KEYCLOAK_URL}/realms/${infra.KEYCLOAK_REALM}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username, password }),
    });
    await grant.text();
    if (!reset.ok || !grant.ok) throw new Error(`password round answered ${reset.status} / ${grant.status}`);
  }
  return (performance.now() - started) / count;
}
