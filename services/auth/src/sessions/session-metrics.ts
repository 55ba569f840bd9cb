import { Counter, type Registry } from 'prom-client';
import { counterFromZero } from '@sp/observability';

/** `renewed`: new tokens; `refused`: Keycloak refused the refresh token (session ended); `failed`: Keycloak or the cache service failed. */
export type RenewalResult = 'renewed' | 'refused' | 'failed';

/** Why a session was ended by this service (idle and absolute ends just expire and are not counted). */
export const END_REASONS = ['logout', 'user', 'over_bound', 'backchannel', 'login_undone'] as const;
export type EndReason = (typeof END_REASONS)[number];

/** `accepted`: a valid Logout Token; `invalid`: refused with 400. */
export type BackchannelResult = 'accepted' | 'invalid';

export interface SessionMetrics {
  renewal: (result: RenewalResult) => void;
  ended: (reason: EndReason) => void;
  backchannel: (result: BackchannelResult) => void;
}

/**
 * Counts the refresh grants of session renewal (one per session at a time across replicas), the
 * sessions this replica ended by reason, and the back-channel Logout Tokens it was sent. Every
 * series exists from the start, at 0, so a rate over it is defined before the first event.
 */
export function createSessionMetrics(registry: Registry): SessionMetrics {
  const registers = [registry];
  const renewals = new Counter({ name: 'session_renewals_total', help: 'Access-token renewals by GET /auth, by outcome', labelNames: ['result'], registers });
  const ended = counterFromZero(registry, { name: 'auth_sessions_ended_total', help: 'Sessions ended by this replica, by reason (logout, user: GET/DELETE /sessions, over_bound: Auth__MaxSessionsPerUser, backchannel, login_undone)', labels: { reason: END_REASONS } });
  const backchannel = counterFromZero(registry, { name: 'auth_backchannel_logouts_total', help: 'Back-channel Logout Tokens received, by result (accepted, invalid: 400)', labels: { result: ['accepted', 'invalid'] } });
  return {
    renewal: (result) => renewals.inc({ result }),
    ended: (reason) => ended.inc({ reason }),
    backchannel: (result) => backchannel.inc({ result }),
  };
}
