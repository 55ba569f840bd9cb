import { randomBytes } from 'node:crypto';
import { badGateway, forbidden } from '@sp/platform';
import type { CacheClient } from '@sp/cache-client';
import type { IdentityProvider, LoginTokens } from './identity-provider.js';
import type { UserDirectory } from './user-directory.js';
import { withCacheLock } from './cache-lock.js';

export interface OtpLoginRequest {
  /** E.164; also the username of a user this login creates. */
  phoneNumber: string;
  /** Set on a new user only; an existing user keeps its own. */
  locale: string;
  /** The group of the role claimed. */
  group: string;
}

export interface ProvisioningDeps {
  users: UserDirectory;
  identityProvider: IdentityProvider;
  /** Where the per-number lock lives (the cache service, shared by the replicas). */
  cache: CacheClient<unknown>;
  /** The bound of one call to Keycloak (Oidc__TimeoutMs): the lock's TTL is derived from it. */
  keycloakTimeoutMs: number;
}

/**
 * Calls to Keycloak one login makes one after another, at most: two user searches, a create that
 * finds the number taken (409), the two searches again, the user's groups, the password and the
 * grant (8), plus a fetch of the admin token and one repeat of a call refused with 401 (its token
 * and the call again).
 */
export const KEYCLOAK_CALLS_PER_LOGIN = 11;

/**
 * The per-number lock lives as long as the slowest login the timeouts allow, each call taking its
 * full Oidc__TimeoutMs, plus 2 s for the cache calls: it cannot expire while its login still runs,
 * which would let a second login of the number replace the first one's password before its grant.
 * (A holder that dies frees the number after it; a waiter still gives up after 10 s with 503.)
 */
export const provisioningLockTtlMs = (keycloakTimeoutMs: number): number => KEYCLOAK_CALLS_PER_LOGIN * keycloakTimeoutMs + 2000;

const LOCK_WAIT_MS = 10_000;


/**
 * Tokens for the owner of a verified phone number. One identity per number: the user is found by
 * exact username or by the exact `phoneNumber` attribute (a user created elsewhere, e.g. the
 * realm's demo client) and created only when neither exists, directly in the claimed role's
 * group. Role integrity: an existing user who is not in the claimed role's group is refused (403)
 * and left as it is. Keycloak issues tokens only against a credential, and none is shared or
 * guessable here: a fresh 256-bit random password is set through the admin API (non-temporary),
 * used once for the password grant and dropped; any earlier password of that user stops working.
 * Logins of one number run one at a time across replicas (a lock in the cache service), so
 * concurrent first logins create one user and no login's password is replaced before its grant.
 */
export function loginByPhone(deps: ProvisioningDeps, request: OtpLoginRequest): Promise<LoginTokens> {
  const lock = { ttlMs: provisioningLockTtlMs(deps.keycloakTimeoutMs), waitMs: LOCK_WAIT_MS };
  return withCacheLock(deps.cache, `lock:provision:${request.phoneNumber}`, lock, async () => {
    const password = randomBytes(32).toString('base64url');
    const existing = await deps.users.findByPhone(request.phoneNumber);
    const created = existing === undefined ? await deps.users.createUser({ username: request.phoneNumber, phoneNumber: request.phoneNumber, locale: request.locale, group: request.group, password }) : undefined;
    if (created !== undefined) return deps.identityProvider.passwordGrant(created.username, password);
    // Taken meanwhile by a login outside this lock (another service, the console): that user is the one.
    const user = existing ?? (await deps.users.findByPhone(request.phoneNumber));
    if (user === undefined) throw badGateway('identity provider', new Error('the user it just created or found is gone'));
    if (!(await deps.users.groupsOf(user.id)).includes(request.group)) throw forbidden('this phone number belongs to an account of another role');
    await deps.users.setPassword(user.id, password);
    return deps.identityProvider.passwordGrant(user.username, password);
  });
}
