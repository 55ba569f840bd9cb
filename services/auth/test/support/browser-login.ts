import { expect } from '@jest/globals';
import type { HttpsClient, Reply } from './https-client.js';

/** The cookies a browser would keep for Keycloak's host. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const decodeEntities = (text: string): string => text.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");

/** The action URL of Keycloak's login form, as its HTML page states it. */
export function loginFormAction(html: string): string {
  const form = /<form\b[^>]*\bid="kc-form-login"[^>]*>/.exec(html)?.[0];
  const action = form === undefined ? undefined : /\baction="([^"]+)"/.exec(form)?.[1];
  if (action === undefined) throw new Error(`no login form in Keycloak's page: ${html.slice(0, 500)}`);
  return decodeEntities(action);
}

/** Where a browser would be sent next: the path and query of the auth service's /redirect. */
export interface KeycloakReturn {
  /** e.g. `/redirect?state=…&session_state=…&iss=…&code=…` */
  redirectPath: string;
}

/**
 * Follows Keycloak's real pages as a browser would, with form posts: the authorization URL the
 * auth service redirected to (login page HTML), then the login form's POST with the user's
 * credentials. Resolves with the auth service URL Keycloak sends the browser back to.
 */
export async function signInAtKeycloak(authorizationUrl: string, username: string, password: string): Promise<KeycloakReturn> {
  const jar = new CookieJar();
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  jar.store(page);
  const html = await page.text();
  expect(page.status).toBe(200);
  const submitted = await fetch(loginFormAction(html), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ username, password, credentialId: '' }),
  });
  const location = submitted.headers.get('location');
  if (submitted.status !== 302 || location === null) throw new Error(`Keycloak did not accept the login (${submitted.status}): ${(await submitted.text()).slice(0, 500)}`);
  const back = new URL(location);
  return { redirectPath: `${back.pathname}${back.search}` };
}

/**
 * GET /login?redirectUri=… on the auth service: must be a 302 to Keycloak. `cookie` is the Cookie
 * header the starting browser sends back to /redirect (the login's binding cookie).
 */
export async function startBrowserLogin(client: HttpsClient, redirectUri: string): Promise<{ reply: Reply; authorizationUrl: URL; cookie: { cookie: string } }> {
  const reply = await client.get(`/login?${new URLSearchParams({ redirectUri }).toString()}`);
  expect(reply.status).toBe(302);
  expect(reply.cookies).toHaveLength(1);
  const [binding = ''] = reply.cookies[0]!.split(';');
  return { reply, authorizationUrl: new URL(reply.headers.get('location')!), cookie: { cookie: binding } };
}
