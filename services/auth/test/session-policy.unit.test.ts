import { describe, expect, it } from '@jest/globals';
import { createSessionPolicy, touchIntervalMs } from '../src/sessions/session-policy.js';

const owner = { subject: 'user-1', phoneNumber: '+4915112345678' };
/** Idle 30 min, absolute 8 h, renew 60 s before expiry (the defaults' shape). */
const policy = createSessionPolicy({ idleSeconds: 1800, maxSeconds: 8 * 3600, renewBeforeSeconds: 60 });
const T0 = 1_800_000_000_000;
const grant = (expiresInSeconds: number, more: { refreshToken?: string; refreshExpiresInSeconds?: number; requestedAtMs?: number } = {}) => ({
  accessToken: `access-${expiresInSeconds}`,
  refreshToken: 'refreshToken' in more ? more.refreshToken : 'refresh-1',
  expiresInSeconds,
  refreshExpiresInSeconds: more.refreshExpiresInSeconds,
  ...(more.requestedAtMs === undefined ? {} : { requestedAtMs: more.requestedAtMs }),
});

describe('session policy', () => {
  it('should write a use back every tenth of the idle limit, between 1 s and 60 s', () => {
    expect(touchIntervalMs(1800_000)).toBe(60_000);
    expect(touchIntervalMs(100_000)).toBe(10_000);
    expect(touchIntervalMs(4_000)).toBe(1_000);
  });

  it('should count the token\'s life from when the grant was requested, less a margin', () => {
    const record = policy.start(owner, grant(300, { requestedAtMs: T0 - 500 }), T0);
    expect(record.issuedAtMs).toBe(T0 - 500);
    expect(record.expiresAtMs).toBe(T0 - 500 + 300_000 - 2000);
    expect(record.sessionEndsAtMs).toBe(T0 + 8 * 3600_000);
  });

  it('should renew renewBefore ahead of expiry, but never before half the token\'s life', () => {
    const long = policy.start(owner, grant(300), T0);
    expect(policy.tokenDue(long, long.expiresAtMs - 60_001)).toBe(false);
    expect(policy.tokenDue(long, long.expiresAtMs - 60_000)).toBe(true);
    const short = policy.start(owner, grant(30), T0);
    const halfLife = (short.expiresAtMs - short.issuedAtMs) / 2;
    expect(policy.tokenDue(short, short.expiresAtMs - halfLife - 1)).toBe(false);
    expect(policy.tokenDue(short, short.expiresAtMs - halfLife)).toBe(true);
  });

  it('should let GET /auth act at the first of renewal, write-back of the use and expiry', () => {
    const record = policy.start(owner, grant(300), T0);
    // A 5-minute token: the 60 s write-back of the use comes first.
    expect(record.renewAtMs).toBe(T0 + 60_000);
    const seen = policy.seen(record, T0 + 60_000);
    expect(seen.lastSeenAtMs).toBe(T0 + 60_000);
    expect(seen.renewAtMs).toBe(T0 + 120_000);
  });

  it('should never renew a token it has no refresh token for, and end the session at its expiry', () => {
    const record = policy.start(owner, grant(300, { refreshToken: undefined }), T0);
    expect(policy.tokenDue(record, record.expiresAtMs + 1)).toBe(false);
    expect(policy.ttlMs(record, T0)).toBe(record.expiresAtMs - T0);
  });

  it('should end the session at the first of idle limit, absolute limit and refresh token expiry', () => {
    const record = policy.start(owner, grant(300, { refreshExpiresInSeconds: 3600 }), T0);
    expect(policy.ttlMs(record, T0)).toBe(1800_000);
    const active = policy.seen(record, T0 + 1700_000);
    expect(policy.ttlMs(active, T0 + 1700_000)).toBe(1800_000);
    // Used all along: the refresh token's hour is what ends it.
    const later = policy.seen(active, T0 + 3500_000);
    expect(policy.ttlMs(later, T0 + 3500_000)).toBe(100_000);
    const renewedForever = policy.renewed(later, grant(300, { refreshExpiresInSeconds: 0 }), T0 + 7 * 3600_000);
    expect(policy.ttlMs(renewedForever, T0 + 7 * 3600_000)).toBe(1800_000);
    // Used near the end: the absolute limit, 8 h after the login, comes before the idle limit.
    const nearEnd = policy.seen(renewedForever, T0 + 27_360_000);
    expect(policy.ttlMs(nearEnd, T0 + 27_360_000)).toBe(1_440_000);
  });

  it('should keep the previous refresh token when a renewal brings none, and drop its stated expiry', () => {
    const record = policy.start(owner, grant(300, { refreshToken: 'refresh-1', refreshExpiresInSeconds: 3600 }), T0);
    const renewed = policy.renewed(record, grant(300, { refreshToken: undefined }), T0 + 240_000);
    expect(renewed.refreshToken).toBe('refresh-1');
    expect(renewed.refreshExpiresAtMs).toBeUndefined();
    expect(renewed.accessToken).toBe('access-300');
    expect(renewed.sessionEndsAtMs).toBe(record.sessionEndsAtMs);
  });

  it("should take the groups of a renewal's ID token, and keep the login's when it brings none", () => {
    const record = policy.start({ ...owner, groups: ['subscribers'] }, grant(300), T0);
    const withIdToken = policy.renewed(record, { ...grant(300), groups: ['clients', 'subscribers'] }, T0 + 240_000);
    expect(withIdToken.groups).toEqual(['clients', 'subscribers']);
    // Removed from every group in Keycloak: none from then on.
    expect(policy.renewed(withIdToken, { ...grant(300), groups: [] }, T0 + 480_000).groups).toEqual([]);
    expect(policy.renewed(record, grant(300), T0 + 240_000).groups).toEqual(['subscribers']);
  });
});
