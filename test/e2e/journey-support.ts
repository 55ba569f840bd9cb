import { Agent, fetch as undiciFetch } from 'undici';
import { infra } from '../support/infra.js';

/** An HTTP answer as the journey looks at it. */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** Set-Cookie headers, one string each. */
  cookies: string[];
  text: string;
}

export interface HttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const TIMEOUT_MS = 20_000;

async function answerOf(response: { status: number; headers: Headers; text(): Promise<string> }): Promise<HttpAnswer> {
  return { status: response.status, headers: response.headers, cookies: response.headers.getSetCookie(), text: await response.text() };
}

/** Plain HTTP (graph registry, webhooks), no redirects followed. */
export async function http(url: string, request: HttpRequest = {}): Promise<HttpAnswer> {
  const response = await fetch(url, { ...request, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  return answerOf(response);
}

export interface HttpsClient {
  request(path: string, request?: HttpRequest): Promise<HttpAnswer>;
  close(): Promise<void>;
}

/**
 * HTTPS to the auth service. With `ca`, exactly that certificate (or the CA that signed it: `make
 * up`'s local CA) is trusted; without, the certificate is not verified.
 */
export function httpsClient(baseUrl: string, ca: string | undefined): HttpsClient {
  const dispatcher = new Agent({ connect: ca === undefined ? { rejectUnauthorized: false } : { ca } });
  return {
    async request(path, request = {}) {
      const response = await undiciFetch(`${baseUrl}${path}`, { ...request, redirect: 'manual', dispatcher, signal: AbortSignal.timeout(TIMEOUT_MS) });
      return answerOf(response);
    },
    close: () => dispatcher.close(),
  };
}

/** `abc…[REDACTED]`: enough of a secret to tell two apart, never enough to use it. */
export function redact(secret: string, keep = 3): string {
  return `${secret.slice(0, keep)}…[REDACTED]`;
}

/** A parsed Set-Cookie header: name, value and attributes (lower-case names, `true` for flags). */
export interface SetCookie {
  name: string;
  value: string;
  attributes: Record<string, string | true>;
}

export function parseSetCookie(header: string): SetCookie {
  const [pair = '', ...rest] = header.split(';').map((part) => part.trim());
  const eq = pair.indexOf('=');
  const attributes: Record<string, string | true> = {};
  for (const part of rest) {
    const at = part.indexOf('=');
    if (at === -1) attributes[part.toLowerCase()] = true;
    else attributes[part.slice(0, at).toLowerCase()] = part.slice(at + 1);
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
}

/** The text of the reply SMS in a TwiML answer (undefined for an empty `<Response/>`). */
export function twimlMessage(twiml: string): string | undefined {
  const match = /<Message>([\s\S]*)<\/Message>/.exec(twiml);
  const entities: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
  return match?.[1]?.replace(/&(lt|gt|quot|apos|amp);/g, (_, name: string) => entities[name]!);
}

/** The claims of a JWT, decoded without verification (for display only). */
export function jwtClaims(token: string): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Fails with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** `200`, or `503 {"error":"…"}` with the start of the body, for error messages. */
export function statusLine(answer: HttpAnswer): string {
  return answer.text === '' ? String(answer.status) : `${answer.status} ${answer.text.slice(0, 200)}`;
}

export interface KeycloakAdminSettings {
  url: string;
  realm: string;
  username: string;
  password: string;
}

export interface KeycloakUserView {
  id: string;
  username: string;
  attributes: Record<string, string[]>;
  groups: string[];
}

/** The realm's admin API address and the headers of a call as its admin (a fresh token). */
async function realmAdmin(settings: KeycloakAdminSettings): Promise<{ admin: string; headers: Record<string, string> }> {
  const realmUrl = `${settings.url}/realms/${encodeURIComponent(settings.realm)}`;
  const grant = new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: settings.username, password: settings.password });
  const tokenAnswer = await http(`${realmUrl}/protocol/openid-connect/token`, { method: 'POST', body: grant.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  check(tokenAnswer.status === 200, `Keycloak admin login: ${tokenAnswer.status}`);
  const headers = { authorization: `Bearer ${(JSON.parse(tokenAnswer.text) as { access_token: string }).access_token}` };
  return { admin: `${settings.url}/admin/realms/${encodeURIComponent(settings.realm)}`, headers };
}

/** The users named `username` with their groups, through the realm's admin API. */
export async function keycloakUsers(settings: KeycloakAdminSettings, username: string): Promise<KeycloakUserView[]> {
  const { admin, headers } = await realmAdmin(settings);
  const users = JSON.parse((await http(`${admin}/users?${new URLSearchParams({ username, exact: 'true' }).toString()}`, { headers })).text) as Array<Omit<KeycloakUserView, 'groups'>>;
  return Promise.all(
    users.map(async (user) => {
      const groups = JSON.parse((await http(`${admin}/users/${user.id}/groups`, { headers })).text) as Array<{ name: string }>;
      return { id: user.id, username: user.username, attributes: user.attributes ?? {}, groups: groups.map((group) => group.name) };
    }),
  );
}

/** Creates a user with a password (and a phoneNumber attribute) through the realm's admin API; its id. */
export async function keycloakCreateUser(settings: KeycloakAdminSettings, user: { username: string; password: string; phoneNumber: string }): Promise<string> {
  const { admin, headers } = await realmAdmin(settings);
  const representation = { username: user.username, enabled: true, attributes: { phoneNumber: [user.phoneNumber] }, credentials: [{ type: 'password', value: user.password, temporary: false }] };
  const answer = await http(`${admin}/users`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(representation) });
  check(answer.status === 201, `creating ${user.username} in Keycloak: ${statusLine(answer)}`);
  return answer.headers.get('location')!.split('/').pop()!;
}

/** Deletes a user through the realm's admin API. */
export async function keycloakDeleteUser(settings: KeycloakAdminSettings, userId: string): Promise<void> {
  const { admin, headers } = await realmAdmin(settings);
  await http(`${admin}/users/${encodeURIComponent(userId)}`, { method: 'DELETE', headers });
}

/** The admin of the shared Keycloak (test/infra/keycloak.sh), for the journey's look-up of provisioned users. */
export function sharedKeycloakAdmin(): KeycloakAdminSettings {
  return { url: infra('KEYCLOAK_URL'), realm: infra('KEYCLOAK_REALM'), username: infra('KEYCLOAK_ADMIN_USERNAME'), password: infra('KEYCLOAK_ADMIN_PASSWORD') };
}

/**
 * Signs a user out of every Keycloak session through the realm's admin API (`POST
 * /users/{id}/logout`): the answer's status, and when (performance.now()) the request went out,
 * after the admin's token was fetched.
 */
export async function keycloakSignOut(settings: KeycloakAdminSettings, userId: string): Promise<{ status: number; askedAt: number }> {
  const { admin, headers } = await realmAdmin(settings);
  const askedAt = performance.now();
  return { status: (await http(`${admin}/users/${encodeURIComponent(userId)}/logout`, { method: 'POST', headers })).status, askedAt };
}

/** Keycloak's userinfo endpoint of the realm, called with an access token: its status and claims. */
export async function keycloakUserinfo(settings: KeycloakAdminSettings, accessToken: string): Promise<{ status: number; claims: Record<string, unknown> }> {
  const answer = await http(`${settings.url}/realms/${encodeURIComponent(settings.realm)}/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  let claims: Record<string, unknown> = {};
  try {
    claims = answer.status === 200 ? (JSON.parse(answer.text) as Record<string, unknown>) : {};
  } catch {
    // not JSON: the status says enough
  }
  return { status: answer.status, claims };
}
