import type { CacheClient } from '@sp/cache-client';
import { unavailable } from '@sp/core';
import type { Logger } from '@sp/observability';
import type { IdentityProvider } from '../oidc/identity-provider.js';
import type { SessionIndex } from './session-index.js';
import type { SessionKeeper } from './session-keeper.js';
import type { EndReason } from './session-metrics.js';
import type { TokenRecord, TokenStore } from './token-store.js';

/** A live session of a user, as the user's own requests may see it (the token id stays inside). */
export interface UserSession {
  tokenId: string;
  record: TokenRecord;
}

export interface UserSessions {
  /**
   * Enters a new session into its user's index (and its Keycloak session id, for back-channel
   * logout); the user's oldest sessions past Auth__MaxSessionsPerUser are ended, revoked at
   * Keycloak too. Rejects with 503 (the new session ended) when concurrent logins of the same
   * user kept it from a slot.
   */
  register(tokenId: string, record: TokenRecord, ttlMs: number): Promise<void>;
  /**
   * Ends a session: its record removed (after a renewal in progress), taken out of its user's
   * index, and with `revoke` its refresh token revoked at Keycloak, which ends the Keycloak
   * session (a failed revocation is logged: the session is already unreachable here).
   */
  end(tokenId: string | undefined, options: { revoke: boolean; reason: EndReason }): Promise<TokenRecord | undefined>;
  /** The user's live sessions, oldest first. */
  list(subject: string): Promise<UserSession[]>;
  /** The user a Keycloak session id belongs to, while a session of it may be live. */
  subjectOfIdpSession(idpSessionId: string): Promise<string | undefined>;
}

export interface UserSessionsDeps {
  cache: CacheClient<unknown>;
  tokens: TokenStore;
  index: SessionIndex;
  sessions: SessionKeeper;
  identityProvider: IdentityProvider;
  logger: Logger;
  /** Told of each session ended here (one that was still there), with why. */
  onEnded?: (reason: EndReason) => void;
}

const idpSessionKey = (idpSessionId: string): string => `idp-session:${idpSessionId}`;

/** A user's sessions across every replica: the index (session-index.ts) over the session records. */
export function createUserSessions(deps: UserSessionsDeps): UserSessions {
  const end: UserSessions['end'] = async (tokenId, options) => {
    const record = await deps.sessions.end(tokenId);
    if (record === undefined) return undefined;
    deps.onEnded?.(options.reason);
    await deps.index.release(record.subject, tokenId!);
    if (options.revoke && record.refreshToken !== undefined) {
      await deps.identityProvider.revoke(record.refreshToken).catch((err: unknown) => deps.logger.warn({ err }, 'token revocation failed'));
    }
    return record;
  };

  return {
    async register(tokenId, record, ttlMs) {
      if (record.idpSessionId !== undefined) await deps.cache.set(idpSessionKey(record.idpSessionId), record.subject, ttlMs);
      const { placed, displaced } = await deps.index.claim(record.subject, { tokenId, sessionId: record.sessionId!, createdAtMs: record.createdAtMs! }, ttlMs);
      await Promise.all(displaced.map((entry) => end(entry.tokenId, { revoke: true, reason: 'over_bound' })));
      if (displaced.length > 0) deps.logger.info({ ended: displaced.length }, 'sessions past the per-user bound ended');
      if (!placed) {
        await end(tokenId, { revoke: true, reason: 'login_undone' });
        throw unavailable('the session index (too many concurrent logins of one user)');
      }
    },
    end,
    async list(subject) {
      const entries = await deps.index.list(subject);
      const found = await Promise.all(entries.map(async (entry) => ({ tokenId: entry.tokenId, record: await deps.tokens.read(entry.tokenId) })));
      // The record must be the user's own: an index entry is only ever written for it, but the
      // answer goes to that user alone.
      return found.filter((session): session is UserSession => session.record?.subject === subject).sort((a, b) => a.record.createdAtMs! - b.record.createdAtMs!);
    },
    async subjectOfIdpSession(idpSessionId) {
      const subject = await deps.cache.get(idpSessionKey(idpSessionId));
      return typeof subject === 'string' ? subject : undefined;
    },
  };
}
