import type Koa from 'koa';
import type { AuthServices } from '../services.js';
import { callerSession } from './user-session-auth.js';

/** What listSessions uses. */
export type ListSessionsDeps = Pick<AuthServices, 'tokens' | 'userSessions' | 'now'>;

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * GET /sessions: the caller's own live sessions, oldest first, each with its public id (never the
 * token id), when it began, when it was last seen (written back at most once per tenth of the
 * idle limit), the IP and User-Agent of its login, and whether it is the caller's.
 */
export function listSessions(deps: ListSessionsDeps): Koa.Middleware {
  return async (ctx) => {
    const caller = await callerSession(ctx, deps);
    const sessions = await deps.userSessions.list(caller.record.subject);
    ctx.body = {
      sessions: sessions
        .filter(({ record }) => record.sessionId !== undefined)
        .map(({ tokenId, record }) => ({
          id: record.sessionId,
          createdAt: iso(record.createdAtMs),
          lastSeenAt: iso(record.lastSeenAtMs),
          ip: record.ip ?? null,
          userAgent: record.userAgent ?? null,
          current: tokenId === caller.tokenId,
        })),
    };
  };
}
