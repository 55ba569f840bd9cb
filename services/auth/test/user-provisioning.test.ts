import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { loginByPhone, type ProvisioningDeps } from '../src/users/user-provisioning.js';
import { createTestAuth } from './support/auth-fixture.js';
import { keycloakAdmin, userinfo } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';

/**
 * Provisioning against the real Keycloak and cache service, below the HTTP layer: over HTTP one
 * number has one live code at a time, but two replicas (or a retry racing its original) can still
 * provision one number at the same moment.
 */
describe('first-login provisioning against real Keycloak', () => {
  let cacheService: RunningCacheService;
  const replicas: Array<ProvisioningDeps & { close(): Promise<void> }> = [];
  const admin = keycloakAdmin();
  const createdUsers: string[] = [];

  beforeAll(async () => {
    cacheService = await startCacheService();
    // Oidc__TimeoutMs as deployed by default: 5 s.
    for (let i = 0; i < 2; i++) {
      const { auth, config } = createTestAuth(cacheService.address, { Oidc__TimeoutMs: '5000' });
      const { users, identityProvider, cache } = auth.services;
      replicas.push({ users, identityProvider, cache, keycloakTimeoutMs: config.oidc.timeoutMs, close: () => auth.close() });
    }
  });

  afterAll(async () => {
    await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
    await Promise.all(replicas.map((replica) => replica.close()));
    await cacheService.close();
  });

  it('should create one user for 5 concurrent first logins of a new number over two replicas, each getting a working token', async () => {
    const phoneNumber = newPhoneNumber();
    const logins = await Promise.all(Array.from({ length: 5 }, (_, i) => loginByPhone(replicas[i % 2]!, { phoneNumber, locale: 'de', group: 'subscribers' })));
    const users = await admin.usersNamed(phoneNumber);
    createdUsers.push(...users.map((user) => user.id));
    expect(users).toHaveLength(1);
    expect(await admin.usersWithPhone(phoneNumber)).toHaveLength(1);
    expect(await admin.groupsOf(users[0]!.id)).toEqual(['subscribers']);
    for (const tokens of logins) {
      const info = await userinfo(tokens.accessToken);
      expect(info.status).toBe(200);
      expect(info.claims.sub).toBe(users[0]!.id);
    }
  });

  it('should keep a number locked for the whole of a login whose Keycloak calls are slow but within their timeouts', async () => {
    // Every directory call and grant answers 4.5 s late (a slow network, each within the 5 s
    // Oidc__TimeoutMs): the first login of a new number (grant refused, search, create, grant)
    // takes over 18 s. A second login of the number starts 1 s in and waits its 10 s. With a lock
    // that expired mid-login (a fixed TTL shorter than the login), it got in and ran beside the
    // first; now it gives up with 503 and makes no call to Keycloak.
    const phoneNumber = newPhoneNumber();
    const calls = [0, 0];
    const slow = (deps: ProvisioningDeps, replica: number): ProvisioningDeps => {
      const late = async <T>(call: () => Promise<T>): Promise<T> => {
        calls[replica]!++;
        await sleep(4500);
        return call();
      };
      return {
        ...deps,
        users: {
          findByPhone: (number) => late(() => deps.users.findByPhone(number)),
          createUser: (user) => late(() => deps.users.createUser(user)),
        },
        identityProvider: { ...deps.identityProvider, verifiedPhoneGrant: (username) => late(() => deps.identityProvider.verifiedPhoneGrant(username)) },
      };
    };
    const first = loginByPhone(slow(replicas[0]!, 0), { phoneNumber, locale: 'en', group: 'subscribers' });
    await sleep(1000);
    const second = await loginByPhone(slow(replicas[1]!, 1), { phoneNumber, locale: 'en', group: 'subscribers' }).then(
      () => 'logged in',
      (err: unknown) => err,
    );
    const tokens = await first;
    createdUsers.push(tokens.subject);
    expect(calls).toEqual([4, 0]);
    expect(second).toMatchObject({ status: 503 });
    expect((await userinfo(tokens.accessToken)).status).toBe(200);
  }, 60_000);

  it('should refuse a role the existing user does not have, without changing its groups or leaving it a new Keycloak session', async () => {
    const phoneNumber = newPhoneNumber();
    await loginByPhone(replicas[0]!, { phoneNumber, locale: 'en', group: 'clients' });
    const [user] = await admin.usersNamed(phoneNumber);
    createdUsers.push(user!.id);
    expect(await admin.sessionCountOf(user!.id)).toBe(1);
    await expect(loginByPhone(replicas[1]!, { phoneNumber, locale: 'en', group: 'subscribers' })).rejects.toMatchObject({ status: 403 });
    expect(await admin.groupsOf(user!.id)).toEqual(['clients']);
    // The grant that read its groups opened a session; the refusal revoked it again.
    expect(await admin.sessionCountOf(user!.id)).toBe(1);
  });

  it('should refuse a role the user found by its phoneNumber attribute does not have', async () => {
    const phoneNumber = newPhoneNumber();
    const id = await admin.createUser({ username: `member-${phoneNumber.slice(1)}`, password: 'a-Password-1', phoneNumber, groups: ['/clients'] });
    createdUsers.push(id);
    await expect(loginByPhone(replicas[0]!, { phoneNumber, locale: 'en', group: 'subscribers' })).rejects.toMatchObject({ status: 403 });
    expect(await admin.sessionCountOf(id)).toBe(0);
    expect((await loginByPhone(replicas[1]!, { phoneNumber, locale: 'en', group: 'clients' })).subject).toBe(id);
  });
});
