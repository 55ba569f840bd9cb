import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'undici';
import type { AppError } from '@sp/core';
import { createOidcTokenClient, type OidcTokenClient } from '@sp/identity';
import { infra } from '../../../test/support/infra.js';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.js';
import { createKeycloakAdmin } from '../src/users/keycloak-admin.js';
import type { UserDirectory } from '../src/users/user-directory.js';
import { keycloakAdmin, keycloakUrl } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';

const dispatcher = new Agent({ connect: { timeout: 3000 }, headersTimeout: 3000, bodyTimeout: 3000 });
const admin = keycloakAdmin();
const createdUsers: string[] = [];

function adminTokens(password = infra('KEYCLOAK_ADMIN_PASSWORD'), serverUrl = keycloakUrl()): OidcTokenClient {
  return createOidcTokenClient({
    issuer: `${serverUrl}/realms/${infra('KEYCLOAK_REALM')}`,
    grant: { type: 'password', clientId: 'admin-cli', username: infra('KEYCLOAK_ADMIN_USERNAME'), password },
    allowInsecureHttp: true,
    timeoutMs: 3000,
  });
}

const directory = (tokens: OidcTokenClient = adminTokens(), serverUrl = keycloakUrl()): UserDirectory =>
  createKeycloakAdmin({ serverUrl, realm: infra('KEYCLOAK_REALM'), timeoutMs: 3000 }, { tokens, dispatcher });

const failure = (promise: Promise<unknown>): Promise<AppError> => promise.then(() => Promise.reject(new Error('expected a failure')), (err: unknown) => err as AppError);

let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

afterAll(async () => {
  await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
  await dispatcher.close();
});

describe('the user directory on Keycloak admin client', () => {
  it('should create a user in its group without any credential, find it by number, and refuse a second one of that name', async () => {
    const users = directory();
    const phoneNumber = newPhoneNumber();
    expect(await users.findByPhone(phoneNumber)).toBeUndefined();
    const created = await users.createUser({ username: phoneNumber, phoneNumber, locale: 'de', group: 'subscribers' });
    createdUsers.push(created!.id);
    expect(await users.findByPhone(phoneNumber)).toEqual(created);
    expect(await admin.groupsOf(created!.id)).toEqual(['subscribers']);
    expect(await admin.credentialTypesOf(created!.id)).toEqual([]);
    expect(await users.createUser({ username: phoneNumber, phoneNumber, locale: 'de', group: 'clients' })).toBeUndefined();
    expect(await admin.groupsOf(created!.id)).toEqual(['subscribers']);
  });

  it('should find a user by the exact phoneNumber attribute only, whatever its username', async () => {
    const phoneNumber = newPhoneNumber();
    const id = await admin.createUser({ username: `someone-${phoneNumber.slice(1)}`, password: 'x-Password-1', phoneNumber });
    createdUsers.push(id);
    const prefixOnly = await admin.createUser({ username: `prefix-${phoneNumber.slice(1)}`, password: 'x-Password-1', phoneNumber: `${phoneNumber}9` });
    createdUsers.push(prefixOnly);
    expect(await directory().findByPhone(phoneNumber)).toEqual({ id, username: `someone-${phoneNumber.slice(1)}` });
  });

  it('should drop an admin token Keycloak refuses (401) and repeat the call once with a fresh one', async () => {
    const real = adminTokens();
    const invalidated: string[] = [];
    let handedOutStale = false;
    const tokens: OidcTokenClient = {
      token: () => {
        if (handedOutStale) return real.token();
        handedOutStale = true;
        return Promise.resolve('revoked-token');
      },
      invalidate: (token) => {
        invalidated.push(token);
        real.invalidate(token);
      },
    };
    expect(await directory(tokens).findByPhone(newPhoneNumber())).toBeUndefined();
    expect(invalidated).toEqual(['revoked-token']);
  });

  it('should answer 502 when Keycloak refuses the admin credentials or the request (a username its user profile refuses)', async () => {
    const wrongPassword = await failure(directory(adminTokens('wrong-password')).findByPhone(newPhoneNumber()));
    expect([wrongPassword.status, wrongPassword.code]).toEqual([502, 'bad_gateway']);
    const invalidUsername = await failure(directory().createUser({ username: '<bad user>', phoneNumber: newPhoneNumber(), locale: 'en', group: 'clients' }));
    expect([invalidUsername.status, invalidUsername.code]).toEqual([502, 'bad_gateway']);
  });

  it('should answer 503 when Keycloak goes away between the admin token and the admin call', async () => {
    proxy = await startTcpProxy(new URL(keycloakUrl()));
    const tokens = adminTokens(infra('KEYCLOAK_ADMIN_PASSWORD'), proxy.url);
    const users = directory(tokens, proxy.url);
    expect(await users.findByPhone(newPhoneNumber())).toBeUndefined();
    await proxy.cut();
    const error = await failure(users.findByPhone(newPhoneNumber()));
    expect([error.status, error.code, error.message]).toEqual([503, 'unavailable', 'identity provider is unavailable']);
    await proxy.restore();
    expect(await users.findByPhone(newPhoneNumber())).toBeUndefined();
  });
});
