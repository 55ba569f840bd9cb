import { afterEach, describe, expect, it } from '@jest/globals';
import { infra } from '../../../test/support/infra.js';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.js';
import { AppError } from '@sp/core';
import { createOidcTokenClient, type OidcGrant, type OidcTokenClientOptions } from '../src/oidc-token-client.js';

const realmPath = (): string => `/realms/${infra('KEYCLOAK_REALM')}`;
const servicesGrant = (clientSecret = infra('KEYCLOAK_SERVICES_CLIENT_SECRET')): OidcGrant => ({ type: 'client_credentials', clientId: infra('KEYCLOAK_SERVICES_CLIENT_ID'), clientSecret });

/** A token client against the real Keycloak (or `serverUrl`) that counts the requests it sends to the token endpoint. */
function countingClient(options: Partial<OidcTokenClientOptions> & { serverUrl?: string } = {}) {
  const requests = { token: 0 };
  const client = createOidcTokenClient({
    issuer: `${options.serverUrl ?? infra('KEYCLOAK_URL')}${realmPath()}`,
    grant: options.grant ?? servicesGrant(),
    allowInsecureHttp: true,
    timeoutMs: 3000,
    fetch: (url, init) => {
      if (url.endsWith('/protocol/openid-connect/token')) requests.token++;
      return fetch(url, init);
    },
    ...options,
  });
  return { client, requests };
}

const failure = (promise: Promise<unknown>): Promise<AppError> => promise.then(() => Promise.reject(new Error('expected a failure')), (err: unknown) => err as AppError);

/** The claims of a JWT, read without checking it (the receivers check it; here only what it says matters). */
const claims = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe('createOidcTokenClient against Keycloak', () => {
  it('should fetch a client-credentials token of the service account once and reuse it', async () => {
    const { client, requests } = countingClient();
    const first = await client.token();
    expect(claims(first).azp).toBe(infra('KEYCLOAK_SERVICES_CLIENT_ID'));
    expect(await client.token()).toBe(first);
    expect(await client.token()).toBe(first);
    expect(requests.token).toBe(1);
  });

  it('should let concurrent callers share one request to the token endpoint', async () => {
    const { client, requests } = countingClient();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => client.token()));
    expect(new Set(tokens).size).toBe(1);
    expect(requests.token).toBe(1);
  });

  it('should renew the token the margin before it expires, not earlier', async () => {
    let now = Date.now();
    const { client, requests } = countingClient({ now: () => now, refreshMarginMs: 30_000 });
    const first = await client.token();
    const lifetimeMs = ((claims(first).exp as number) - (claims(first).iat as number)) * 1000;
    now += lifetimeMs - 31_000;
    expect(await client.token()).toBe(first);
    expect(requests.token).toBe(1);
    now += 2000;
    const renewed = await client.token();
    expect(renewed).not.toBe(first);
    expect(requests.token).toBe(2);
  });

  it('should fetch a new token after the receiver refused the cached one', async () => {
    const { client, requests } = countingClient();
    const first = await client.token();
    client.invalidate('some-other-token');
    expect(await client.token()).toBe(first);
    client.invalidate(first);
    expect(await client.token()).not.toBe(first);
    expect(requests.token).toBe(2);
  });

  it('should get a password-grant token of the realm admin through admin-cli that the admin API accepts', async () => {
    const { client } = countingClient({ grant: { type: 'password', clientId: 'admin-cli', username: infra('KEYCLOAK_ADMIN_USERNAME'), password: infra('KEYCLOAK_ADMIN_PASSWORD') } });
    const response = await fetch(`${infra('KEYCLOAK_URL')}/admin${realmPath()}/users?max=1`, { headers: { authorization: `Bearer ${await client.token()}` } });
    expect(response.status).toBe(200);
  });

  it('should answer 502 when Keycloak refuses the client secret or the admin password', async () => {
    const wrongSecret = await failure(countingClient({ grant: servicesGrant('wrong-secret') }).client.token());
    expect(wrongSecret).toBeInstanceOf(AppError);
    expect([wrongSecret.status, wrongSecret.code]).toEqual([502, 'bad_gateway']);
    const wrongPassword = await failure(countingClient({ grant: { type: 'password', clientId: 'admin-cli', username: infra('KEYCLOAK_ADMIN_USERNAME'), password: 'wrong' } }).client.token());
    expect(wrongPassword.status).toBe(502);
  });

  it('should answer 502 for a realm Keycloak does not have', async () => {
    const client = createOidcTokenClient({ issuer: `${infra('KEYCLOAK_URL')}/realms/no-such-realm`, grant: servicesGrant(), allowInsecureHttp: true });
    const error = await failure(client.token());
    expect(error.status).toBe(502);
  });

  it('should answer 503 when Keycloak cannot be reached, and recover once it is back', async () => {
    proxy = await startTcpProxy(new URL(infra('KEYCLOAK_URL')));
    await proxy.cut();
    const { client } = countingClient({ serverUrl: proxy.url });
    const error = await failure(client.token());
    expect([error.status, error.code, error.message]).toEqual([503, 'unavailable', 'identity provider is unavailable']);
    await proxy.restore();
    expect(claims(await client.token()).azp).toBe(infra('KEYCLOAK_SERVICES_CLIENT_ID'));
  });

  it('should keep handing out a still valid token while Keycloak is down during renewal, and answer 503 once it has expired', async () => {
    proxy = await startTcpProxy(new URL(infra('KEYCLOAK_URL')));
    let now = Date.now();
    const { client, requests } = countingClient({ serverUrl: proxy.url, now: () => now });
    const first = await client.token();
    const lifetimeMs = ((claims(first).exp as number) - (claims(first).iat as number)) * 1000;
    await proxy.cut();
    now += lifetimeMs - 10_000;
    expect(await client.token()).toBe(first);
    expect(requests.token).toBe(2);
    now += 20_000;
    expect((await failure(client.token())).status).toBe(503);
  });
});
