import { badGateway, forbidden } from '@sp/core';
import type { CacheClient } from '@sp/cache-client';
import type { IdentityProvider, LoginTokens } from '../oidc/identity-provider.js';
import type { UserDirectory } from './user-directory.js';
import { withCacheLock } from '../cache-lock.js';

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
 * Calls to Keycloak one login makes one after another, at most: the grant by number, two user
 * searches, a create that finds the number taken (409), the two searches again, the grant and the
 * revocation of a refused role's session (8), plus a fetch of the admin token and one repeat of a
 * call refused with 401 (its token and the call again).
 */
export const KEYCLOAK_CALLS_PER_LOGIN = 10;

/**
 * The per-number lock lives as long as the slowest login the timeouts allow, each call taking its
 * full Oidc__TimeoutMs, plus 2 s for the cache calls: it cannot expire while its login still runs.
 * (A holder that dies frees the number after it; a waiter still gives up after 10 s with 503.)
 */
export const provisioningLockTtlMs = (keycloakTimeoutMs: number): number => KEYCLOAK_CALLS_PER_LOGIN * keycloakTimeoutMs + 2000;

const LOCK_WAIT_MS = 10_000;

const ANOTHER_ROLE = 'this phone number belongs to an account of another role';

/** The user's tokens when it exists and is in the claimed role's group; else its new session is ended again and the login refused (403). */
async function grantInRole(deps: ProvisioningDeps, username: string, group: string): Promise<LoginTokens | undefined> {
  const tokens = await deps.identityProvider.verifiedPhoneGrant(username);
  if (tokens === undefined || tokens.groups.includes(group)) return tokens;
  if (tokens.refreshToken !== undefined) await deps.identityProvider.revoke(tokens.refreshToken);
  throw forbidden(ANOTHER_ROLE);
}

/**
 * Tokens for the owner of a verified phone number. One identity per number: the user whose
 * username is the number (every user this service created) gets its tokens from one grant, its
 * groups read from the ID token; otherwise the user is found by the exact `phoneNumber` attribute
 * (a user created elsewhere, e.g. the realm's demo client), or created when none exists, directly
 * in the claimed role's group and without any credential. Role integrity: an existing user who is
 * not in the claimed role's group is refused (403), its new Keycloak session revoked, and it is
 * left as it is. The grant is the client's "verified phone direct grant" (identity-provider.ts): no
 * password is set or hashed, and a password the user has for the browser login stays as it is.
 * Logins of one number run one at a time across replicas (a lock in the cache service), so
 * concurrent first logins create one user.
 */
export function loginByPhone(deps: ProvisioningDeps, request: OtpLoginRequest): Promise<LoginTokens> {
  const lock = { ttlMs: provisioningLockTtlMs(deps.keycloakTimeoutMs), waitMs: LOCK_WAIT_MS };
  return withCacheLock(deps.cache, `lock:provision:${request.phoneNumber}`, lock, async () => {
    const returning = await grantInRole(deps, request.phoneNumber, request.group);
    if (returning !== undefined) return returning;
    const existing = await deps.users.findByPhone(request.phoneNumber);
    // Taken meanwhile by a login outside this lock (another service, the console): that user is the one.
    const user = existing ?? (await deps.users.createUser({ username: request.phoneNumber, phoneNumber: request.phoneNumber, locale: request.locale, group: request.group })) ?? (await deps.users.findByPhone(request.phoneNumber));
    const tokens = user === undefined ? undefined : await grantInRole(deps, user.username, request.group);
    if (tokens === undefined) throw badGateway('identity provider', new Error('the user it just created or found is gone or disabled'));
    return tokens;
  });
}
