import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRegistry } from '@sp/platform';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { createAuthAdapters, type AuthAdapters } from '../src/adapters.js';
import { loadConfig } from '../src/config.js';
import { loginByPhone } from '../src/user-provisioning.js';
import { testEnvironment } from './support/auth-fixture.js';
import { keycloakAdmin, userinfo } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';

/**
 * Provisioning against the real Keycloak and cache service, below the HTTP layer: over HTTP one
 * number has one live code at a time, but two replicas (or a retry racing its original) can still
 * provision one number at the same moment.
 */
describe('first-login provisioning against real Keycloak', () => {
  let cacheService: RunningCacheService;
  const replicas: AuthAdapters[] = [];
  const admin = keycloakAdmin();
  const createdUsers: string[] = [];

  beforeAll(async () => {
    cacheService = await startCacheService();
    const config = loadConfig(testEnvironment(cacheService.address));
    for (let i = 0; i < 2; i++) replicas.push(createAuthAdapters(config, { logger: silentLogger('auth'), registry: createRegistry('auth') }));
  });

  afterAll(async () => {
    await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
    await Promise.all(replicas.map((adapters) => adapters.close()));
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

  it('should refuse a role the existing user does not have, without changing its groups', async () => {
    const phoneNumber = newPhoneNumber();
    await loginByPhone(replicas[0]!, { phoneNumber, locale: 'en', group: 'clients' });
    const [user] = await admin.usersNamed(phoneNumber);
    createdUsers.push(user!.id);
    await expect(loginByPhone(replicas[1]!, { phoneNumber, locale: 'en', group: 'subscribers' })).rejects.toMatchObject({ status: 403 });
    expect(await admin.groupsOf(user!.id)).toEqual(['clients']);
  });
});
