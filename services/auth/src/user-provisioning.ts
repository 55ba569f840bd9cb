import { randomBytes } from 'node:crypto';
import type { IdentityProvider, LoginTokens } from './identity-provider.js';
import type { UserDirectory } from './keycloak-admin.js';

export interface OtpLoginRequest {
  /** E.164; also the Keycloak username. */
  phoneNumber: string;
  /** Set on a new user only; an existing user keeps its own. */
  locale: string;
  /** The group of the role claimed. */
  group: string;
}

/**
 * Tokens for the owner of a verified phone number. The user is found by exact username or
 * created (username and attribute phoneNumber = the E.164 number, locale), and put in the role's
 * group. Keycloak issues tokens only against a credential, and none is shared or guessable here:
 * a fresh 256-bit random password is set through the admin API (non-temporary), used once for
 * the password grant and dropped. Side effect: any earlier password of that user stops working.
 */
export async function loginByPhone(users: UserDirectory, identityProvider: IdentityProvider, request: OtpLoginRequest): Promise<LoginTokens> {
  const user =
    (await users.findByUsername(request.phoneNumber)) ??
    (await users.createUser({ username: request.phoneNumber, phoneNumber: request.phoneNumber, locale: request.locale }));
  const password = randomBytes(32).toString('base64url');
  await Promise.all([users.addToGroup(user.id, request.group), users.setPassword(user.id, password)]);
  return identityProvider.passwordGrant(user.username, password);
}
