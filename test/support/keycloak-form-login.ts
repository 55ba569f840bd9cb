/** The cookies a browser would keep for one host (name → value; attributes ignored). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: { headers: { getSetCookie(): string[] } }): void {
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

/**
 * Follows Keycloak's real pages as a browser would, with form posts: the authorization URL (login
 * page HTML), then the login form's POST with the user's credentials. Resolves with the URL
 * Keycloak sends the browser back to (the client's redirect URI with code and state).
 */
export async function signInWithKeycloakForm(authorizationUrl: string, username: string, password: string): Promise<URL> {
  const jar = new CookieJar();
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  jar.store(page);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`Keycloak's login page answered ${page.status}`);
  const submitted = await fetch(loginFormAction(html), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ username, password, credentialId: '' }),
  });
  const location = submitted.headers.get('location');
  if (submitted.status !== 302 || location === null) throw new Error(`Keycloak did not accept the login (${submitted.status}): ${(await submitted.text()).slice(0, 500)}`);
  return new URL(location);
}
