import type Koa from 'koa';
import { badGateway, type EventPublisher, type Logger } from '@sp/platform';
import { userLoggedInEvent, type LoginFacts } from './events.js';
import type { IdentityProvider, LoginTokens } from './identity-provider.js';
import { sessionCookie } from './session-cookie.js';
import type { SessionPolicy } from './session-policy.js';
import type { TokenStore } from './token-store.js';

export interface LoginCompletionDeps {
  tokens: TokenStore;
  policy: SessionPolicy;
  publisher: EventPublisher;
  identityProvider: IdentityProvider;
  topic: string;
  logger: Logger;
  now: () => number;
}

/**
 * The common end of both logins: the session (tokens included) goes to the cache under a fresh TokenId, the
 * UserLoggedInEvent is published, and only then is the cookie set. If the event cannot be
 * published the login is undone (cached token removed, Keycloak session revoked) and the caller
 * gets the 503: no session exists that the rest of the platform never heard of.
 */
export function createLoginCompletion(deps: LoginCompletionDeps) {
  return async (ctx: Koa.Context, login: LoginTokens, facts: Omit<LoginFacts, 'userId'>): Promise<void> => {
    if (login.expiresInSeconds <= 0) throw badGateway('identity provider', new Error('it issued an expired token'));
    const now = deps.now();
    const record = deps.policy.start({ subject: login.subject, phoneNumber: facts.phoneNumber }, login, now);
    const tokenId = await deps.tokens.save(record, deps.policy.ttlMs(record, now));
    try {
      await deps.publisher.publish(deps.topic, userLoggedInEvent({ ...facts, userId: login.subject }));
    } catch (err) {
      const undo = await Promise.allSettled([deps.tokens.remove(tokenId), login.refreshToken === undefined ? undefined : deps.identityProvider.revoke(login.refreshToken)]);
      for (const outcome of undo) if (outcome.status === 'rejected') deps.logger.warn({ err: outcome.reason as unknown }, 'undoing a login failed');
      throw err;
    }
    ctx.append('Set-Cookie', sessionCookie(tokenId, deps.policy.cookieMaxAgeSeconds));
  };
}

export type CompleteLogin = ReturnType<typeof createLoginCompletion>;
