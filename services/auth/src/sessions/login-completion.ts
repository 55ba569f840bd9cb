import type Koa from 'koa';
import { badGateway } from '@sp/core';
import type { Logger } from '@sp/observability';
import { userLoggedInEvent, type EventPublisher } from '@sp/messaging';
import type { LoginFacts } from '../events.js';
import type { LoginTokens } from '../oidc/identity-provider.js';
import { sessionCookie } from './session-cookie.js';
import type { SessionPolicy } from './session-policy.js';
import { newSessionId, type TokenStore } from './token-store.js';
import type { UserSessions } from './user-sessions.js';

export interface LoginCompletionDeps {
  tokens: TokenStore;
  userSessions: UserSessions;
  policy: SessionPolicy;
  publisher: EventPublisher;
  topic: string;
  logger: Logger;
  now: () => number;
}

/** Longest User-Agent kept with a session (GET /sessions shows it; browsers send ~150 characters). */
const USER_AGENT_MAX = 256;

/**
 * The common end of both logins: the session (tokens included) goes to the cache under a fresh
 * TokenId and into its user's index (ending the oldest past the per-user bound), the
 * UserLoggedInEvent is published, and only then is the cookie set. If the event cannot be
 * published the login is undone (session ended, Keycloak session revoked) and the caller gets the
 * 503: no session exists that the rest of the platform never heard of.
 */
export function createLoginCompletion(deps: LoginCompletionDeps) {
  return async (ctx: Koa.Context, login: LoginTokens, facts: Omit<LoginFacts, 'userId'>): Promise<void> => {
    if (login.expiresInSeconds <= 0) throw badGateway('identity provider', new Error('it issued an expired token'));
    const now = deps.now();
    const userAgent = ctx.get('user-agent').slice(0, USER_AGENT_MAX);
    const owner = {
      subject: login.subject,
      phoneNumber: facts.phoneNumber,
      groups: login.groups,
      sessionId: newSessionId(),
      ip: ctx.ip,
      ...(userAgent === '' ? {} : { userAgent }),
      ...(login.idpSessionId === undefined ? {} : { idpSessionId: login.idpSessionId }),
    };
    const record = deps.policy.start(owner, login, now);
    const ttlMs = deps.policy.ttlMs(record, now);
    const tokenId = await deps.tokens.save(record, ttlMs);
    try {
      await deps.userSessions.register(tokenId, record, ttlMs);
      await deps.publisher.publish(deps.topic, userLoggedInEvent({ ...facts, userId: login.subject }));
    } catch (err) {
      await deps.userSessions.end(tokenId, { revoke: true, reason: 'login_undone' }).catch((undoErr: unknown) => deps.logger.warn({ err: undoErr }, 'undoing a login failed'));
      throw err;
    }
    ctx.append('Set-Cookie', sessionCookie(tokenId, deps.policy.cookieMaxAgeSeconds));
  };
}

export type CompleteLogin = ReturnType<typeof createLoginCompletion>;
