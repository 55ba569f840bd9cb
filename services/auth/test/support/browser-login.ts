import { expect } from '@jest/globals';
import { signInWithKeycloakForm } from '../../../../test/support/keycloak-form-login.js';
import type { HttpsClient, Reply } from './https-client.js';

/** Where a browser would be sent next: the path and query of the auth service's /redirect. */
export interface KeycloakReturn {
  /** e.g. `/redirect?state=…&session_state=…&iss=…&code=…` */
  redirectPath: string;
}

/**
 * Follows Keycloak's real pages as a browser would (login page, then the form's POST with the
 * user's credentials). Resolves with the auth service URL Keycloak sends the browser back to.
 */
export async function signInAtKeycloak(authorizationUrl: string, username: string, password: string): Promise<KeycloakReturn> {
  const back = await signInWithKeycloakForm(authorizationUrl, username, password);
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
