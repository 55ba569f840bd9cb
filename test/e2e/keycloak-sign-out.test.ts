// A sign-out in Keycloak ending the session on two auth replicas run as `make up` runs its one:
// the settings `scripts/platform.sh env` prints (what `make up` gives each service), the
// certificate issued by the same local CA script, the shared Keycloak that test/infra/keycloak.sh
// started trusting that CA. Only ports, the cache address, the key files and the Keycloak client
// (a copy of platform-auth whose back-channel URL names replica A) differ.
import { openSync, readSync, closeSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, jsonSerializer, type CacheClient } from '@sp/cache-client';
import { createAuthClientCopy, deleteUsersNamed, issuer, keycloakAdmin } from '../../services/auth/test/support/keycloak.js';
import { newPhoneNumber } from '../../services/auth/test/support/phones.js';
import { eventually } from '../support/eventually.js';
import { makeUpSettings } from '../support/make-up-settings.js';
import { stopServices, type ServiceProcess } from '../support/service-process.js';
import { startAll } from '../support/start-all.js';
import { httpsClient, keycloakSignOut, sharedKeycloakAdmin, type HttpsClient } from './journey-support.js';
import { issueLocalCertificate, localCaCertificate, type IssuedCertificate } from './local-tls.js';
import { startPlatformService } from './platform-service.js';
import { SIGN_OUT_WITHIN_MS } from './journey.js';
import { HANG_GUARD_MS } from '../support/progress.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const keycloakLog = `${root}.cache/run/keycloak.log`;
/** What Keycloak's JVM logs when it does not trust a server's certificate. */
const TLS_ERRORS = /PKIX|SSLHandshakeException|unable to find valid certification path|certificate_unknown/i;

/** What Keycloak logged since `offset` (its log is shared with every other suite). */
function keycloakLogSince(offset: number): string {
  const size = statSync(keycloakLog).size;
  const buffer = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(keycloakLog, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

describe('a sign-out in Keycloak, with the trust `make up` configures, on two auth replicas', () => {
  let client: Awaited<ReturnType<typeof createAuthClientCopy>>;
  let tls: IssuedCertificate;
  let cache: ServiceProcess;
  let replicas: ServiceProcess[] = [];
  let clients: HttpsClient[] = [];
  let records: CacheClient<unknown>;
  const phoneNumbers: string[] = [];

  beforeAll(async () => {
    const [cacheSettings, authSettings] = [makeUpSettings('cache'), makeUpSettings('auth')];
    [client, tls] = await Promise.all([createAuthClientCopy(`platform-auth-signout-${Date.now().toString(36)}`, { 'backchannel.logout.url': '' }), issueLocalCertificate()]);
    cache = await startPlatformService({ name: 'cache', env: () => cacheSettings });
    const replica = (port: number): Record<string, string> => ({
      ...authSettings,
      Auth__PublicBaseUrl: `https://localhost:${port}`,
      Cache__Url: `127.0.0.1:${cache.port}`,
      Tls__CertPath: tls.certPath,
      Tls__KeyPath: tls.keyPath,
      Oidc__ClientId: client.clientId,
      Oidc__ClientSecret: client.secret,
    });
    replicas = await startAll<[ServiceProcess, ServiceProcess]>([
      [startPlatformService({ name: 'auth', env: replica }), (started) => started.stop()],
      [startPlatformService({ name: 'auth', env: replica }), (started) => started.stop()],
    ]);
    // Keycloak posts to replica A only, as to `make up`'s https://localhost:5555; B learns through the cache.
    await client.setAttributes({ 'backchannel.logout.url': `https://localhost:${replicas[0]!.port}/backchannel-logout` });
    // Each replica verified against the local CA alone, under the name Keycloak uses.
    clients = replicas.map((started) => httpsClient(`https://localhost:${started.port}`, localCaCertificate()));
    records = createCacheClient<unknown>({ address: `127.0.0.1:${cache.port}` }, jsonSerializer);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    records?.close();
    await Promise.all(clients.map((https) => https.close()));
    await stopServices([...replicas, ...(cache === undefined ? [] : [cache])]);
    tls?.remove();
    await client?.remove();
    await deleteUsersNamed(phoneNumbers);
  });

  /** An OTP login through replica B as `make up` answers it (Development: the code comes back). */
  async function login(): Promise<{ cookie: string; userId: string; refreshToken: string }> {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const json = { 'content-type': 'application/json' };
    const otp = await clients[1]!.request('/otp', { method: 'POST', headers: json, body: JSON.stringify({ phoneNumber }) });
    expect(otp.status).toBe(200);
    const { code } = JSON.parse(otp.text) as { code: string };
    const verified = await clients[1]!.request('/otp/verify', { method: 'POST', headers: { ...json, 'x-role-claim': 'subscriber' }, body: JSON.stringify({ phoneNumber, code }) });
    expect(verified.status).toBe(200);
    const cookie = verified.cookies.find((header) => header.startsWith('TokenId='))!.split(';')[0]!;
    const record = (await records.get(`token:${cookie.slice('TokenId='.length)}`)) as { refreshToken: string };
    const [user] = await keycloakAdmin().usersNamed(phoneNumber);
    return { cookie, userId: user!.id, refreshToken: record.refreshToken };
  }

  const statuses = async (cookie: string): Promise<number[]> => Promise.all(clients.map(async (https) => (await https.request('/auth', { headers: { cookie } })).status));

  /**
   * Runs `signOut` (it resolves with when its request to Keycloak went out; Keycloak answers once it
   * has posted its Logout Tokens), then expects a 401 on both replicas within SIGN_OUT_WITHIN_MS of
   * Keycloak's answer (its own time to answer is Keycloak's speed, which a busy machine stretches:
   * issue 40), and no TLS error in Keycloak's log meanwhile. How long Keycloak's answer took from
   * the request, and the 401s from that answer, in ms.
   */
  async function endsEverywhere(cookie: string, signOut: () => Promise<number>): Promise<{ keycloakMs: number; endedMs: number }> {
    expect(await statuses(cookie)).toEqual([200, 200]);
    const logOffset = statSync(keycloakLog).size;
    const asked = await signOut();
    const answered = performance.now();
    await eventually(async () => JSON.stringify(await statuses(cookie)) === '[401,401]', SIGN_OUT_WITHIN_MS, 'a 401 on both replicas').catch((err: Error) => {
      throw new Error(`${err.message}; Keycloak logged meanwhile:\n${keycloakLogSince(logOffset).slice(-3000)}`);
    });
    const ended = performance.now();
    expect(keycloakLogSince(logOffset)).not.toMatch(TLS_ERRORS);
    expect(ended - answered).toBeLessThan(SIGN_OUT_WITHIN_MS);
    return { keycloakMs: answered - asked, endedMs: ended - answered };
  }

  const report = (what: string, { keycloakMs, endedMs }: { keycloakMs: number; endedMs: number }): void =>
    void process.stdout.write(`${what}, make up's trust: Keycloak answered after ${keycloakMs.toFixed(0)} ms, 401 on both replicas ${endedMs.toFixed(0)} ms after its answer\n`);

  it(`should answer 401 on both replicas within ${SIGN_OUT_WITHIN_MS} ms of Keycloak's answer to a sign-out through its admin API`, async () => {
    const { cookie, userId } = await login();
    const signOut = async (): Promise<number> => {
      const { status, askedAt } = await keycloakSignOut(sharedKeycloakAdmin(), userId);
      expect(status).toBe(204);
      return askedAt;
    };
    report('Keycloak sign-out (admin API)', await endsEverywhere(cookie, signOut));
  });

  it(`should answer 401 on both replicas within ${SIGN_OUT_WITHIN_MS} ms of Keycloak's answer to a logout at its end-session endpoint`, async () => {
    const { cookie, refreshToken } = await login();
    const took = await endsEverywhere(cookie, async () => {
      const askedAt = performance.now();
      const response = await fetch(`${issuer()}/protocol/openid-connect/logout`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: client.clientId, client_secret: client.secret, refresh_token: refreshToken }),
      });
      expect(response.status).toBe(204);
      return askedAt;
    });
    report('Keycloak end-session endpoint', took);
  });
});
