import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { infra } from '../../../test/support/infra.js';
import { loadConfig } from '../src/config.js';
import { createIdpHttp } from '../src/oidc/idp-http.js';
import { createKeycloakOidc } from '../src/oidc/keycloak-oidc.js';
import { testEnvironment } from './support/auth-fixture.js';
import { authClient, introspect, keycloakAdmin, passwordAccepted, userinfo } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';

/**
 * The realm's "verified phone direct grant" (test/infra/keycloak/verified-phone-grant.mjs): the
 * auth service's client gets a user's tokens without a password, and nothing else changes for
 * anyone's password.
 */
describe('the verified phone grant against real Keycloak', () => {
  const admin = keycloakAdmin();
  const createdUsers: string[] = [];
  const http = createIdpHttp({ timeoutMs: 5000, ignoreCertificateErrors: false });
  const config = loadConfig(testEnvironment('127.0.0.1:1'));
  const keycloak = createKeycloakOidc(config.oidc, { fetch: http.fetch, redirectUri: `${config.publicBaseUrl}/redirect` });

  afterAll(async () => {
    await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
    await http.close();
  });

  async function newUser(password: string): Promise<{ id: string; username: string }> {
    const phoneNumber = newPhoneNumber();
    const id = await admin.createUser({ username: phoneNumber, password, phoneNumber, groups: ['/subscribers'] });
    createdUsers.push(id);
    return { id, username: phoneNumber };
  }

  it('should issue a user tokens without a password: a normal Keycloak session that renews and ends on revocation', async () => {
    const password = randomBytes(12).toString('base64url');
    const user = await newUser(password);
    const tokens = (await keycloak.verifiedPhoneGrant(user.username))!;
    expect(tokens).toMatchObject({ subject: user.id, phoneNumber: user.username, groups: ['subscribers'] });
    expect((await userinfo(tokens.accessToken)).claims).toMatchObject({ sub: user.id, preferred_username: user.username });
    const renewed = await keycloak.refresh(tokens.refreshToken!);
    expect((await userinfo(renewed.accessToken)).status).toBe(200);
    await keycloak.revoke(renewed.refreshToken!);
    expect(await introspect(renewed.refreshToken!, authClient())).toBe(false);
    expect((await userinfo(renewed.accessToken)).status).toBe(401);
    // The user's own password is neither needed nor changed.
    expect(await passwordAccepted(user.username, password)).toBe(true);
    expect(await admin.credentialTypesOf(user.id)).toEqual(['password']);
  });

  it('should issue nothing for a user that does not exist', async () => {
    expect(await keycloak.verifiedPhoneGrant(newPhoneNumber())).toBeUndefined();
  });

  it("should leave every other client's password grant as it was: a missing or wrong password is refused", async () => {
    const password = randomBytes(12).toString('base64url');
    const user = await newUser(password);
    for (const client of [{ clientId: 'admin-cli' }, { clientId: infra('KEYCLOAK_SERVICES_CLIENT_ID'), secret: infra('KEYCLOAK_SERVICES_CLIENT_SECRET') }]) {
      expect(await passwordAccepted(user.username, password, client)).toBe(true);
      expect(await passwordAccepted(user.username, 'wrong-Password-1', client)).toBe(false);
      expect(await passwordAccepted(user.username, undefined, client)).toBe(false);
    }
  });
});
