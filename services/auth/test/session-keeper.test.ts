import { describe, expect, it } from '@jest/globals';
import { AppError } from '@sp/core';
import { eventually } from '../../../test/support/eventually.js';
import { manualClock } from '../../../test/support/test-clock.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import type { IdentityProvider, RenewedTokens } from '../src/oidc/identity-provider.js';
import { createSessionKeeper, type SessionKeeper } from '../src/sessions/session-keeper.js';
import type { RenewalResult } from '../src/sessions/session-metrics.js';
import { createSessionPolicy } from '../src/sessions/session-policy.js';
import { createTokenStore, type TokenStore } from '../src/sessions/token-store.js';
import { inProcessCache } from './support/in-process-cache.js';

const policy = createSessionPolicy({ idleSeconds: 1800, maxSeconds: 8 * 3600, renewBeforeSeconds: 60 });
const owner = { subject: 'user-1', phoneNumber: '+4915112345678' };

/**
 * The identity provider's refresh grant as the keeper sees it (the port; Keycloak behind it is
 * covered by session-refresh.test.ts): each grant answers the next scripted outcome, or a new
 * 30 s token, and is held until the test lets it go when `hold` is set.
 */
function scriptedRefresh() {
  let grants = 0;
  let hold: Promise<void> | undefined;
  let outcome: () => RenewedTokens = () => ({ accessToken: `access-${grants}`, refreshToken: `refresh-${grants}`, expiresInSeconds: 30, refreshExpiresInSeconds: undefined });
  const provider = {
    async refresh(): Promise<RenewedTokens> {
      grants++;
      if (hold !== undefined) await hold;
      return outcome();
    },
  } as Partial<IdentityProvider> as IdentityProvider;
  return {
    provider,
    grants: () => grants,
    answer(next: () => RenewedTokens) {
      outcome = next;
    },
    /** Holds every grant until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

describe('session keeper on an injected clock', () => {
  const cache = inProcessCache();

  /** Two replicas (keepers with their own memory) of one session store, on one manual clock, and a session logged in with a 30 s token. */
  async function loggedIn() {
    const clock = manualClock();
    const refresh = scriptedRefresh();
    const renewals: RenewalResult[] = [];
    const replica = (): { keeper: SessionKeeper; tokens: TokenStore } => {
      const tokens = createTokenStore(cache.client, { now: clock.now });
      const keeper = createSessionKeeper({ cache: cache.client, tokens, identityProvider: refresh.provider, policy, logger: silentLogger('auth'), now: clock.now, lockTtlMs: 5000, onRenewal: (result) => renewals.push(result) });
      return { keeper, tokens };
    };
    const [a, b] = [replica(), replica()];
    const record = policy.start(owner, { accessToken: 'access-login', refreshToken: 'refresh-login', expiresInSeconds: 30, refreshExpiresInSeconds: undefined }, clock.now());
    const tokenId = await a.tokens.save(record, policy.ttlMs(record, clock.now()));
    return { clock, refresh, renewals, a, b, tokenId };
  }

  const current = async (replica: { keeper: SessionKeeper; tokens: TokenStore }, tokenId: string) => replica.keeper.current(tokenId, await replica.tokens.get(tokenId));

  it('should serve the record as it is before its renewal time, with no grant', async () => {
    const { clock, a, refresh, tokenId } = await loggedIn();
    clock.advance(10_000);
    expect((await current(a, tokenId))?.accessToken).toBe('access-login');
    expect(refresh.grants()).toBe(0);
  });

  it('should serve the live token past its renewal time and renew it in the background, once', async () => {
    const { clock, a, refresh, tokenId } = await loggedIn();
    // Past half of the 30 s token's life, before its expiry.
    clock.advance(20_000);
    const release = refresh.hold();
    const served = await Promise.all([current(a, tokenId), current(a, tokenId), current(a, tokenId)]);
    expect(served.map((record) => record?.accessToken)).toEqual(['access-login', 'access-login', 'access-login']);
    release();
    await eventually(async () => (await a.tokens.read(tokenId))?.accessToken === 'access-1', 5000, 'the renewed token stored');
    expect(refresh.grants()).toBe(1);
  });

  it('should make requests with an expired token wait for one renewal across replicas, and all get its token', async () => {
    const { clock, a, b, refresh, renewals, tokenId } = await loggedIn();
    clock.advance(31_000);
    const served = await Promise.all(Array.from({ length: 10 }, (_, i) => current(i % 2 === 0 ? a : b, tokenId)));
    expect(new Set(served.map((record) => record?.accessToken))).toEqual(new Set(['access-1']));
    expect(refresh.grants()).toBe(1);
    expect(renewals).toEqual(['renewed']);
    expect(served[0]!.expiresAtMs).toBeGreaterThan(clock.now());
  });

  it('should end the session when the identity provider refuses the refresh token', async () => {
    const { clock, a, refresh, renewals, tokenId } = await loggedIn();
    refresh.answer(() => {
      throw new AppError(401, 'invalid_grant', 'refresh token refused');
    });
    clock.advance(31_000);
    expect(await current(a, tokenId)).toBeUndefined();
    expect(await a.tokens.read(tokenId)).toBeUndefined();
    expect(renewals).toEqual(['refused']);
  });

  it('should answer 503, never the expired token, when renewal fails', async () => {
    const { clock, a, refresh, renewals, tokenId } = await loggedIn();
    refresh.answer(() => {
      throw new AppError(503, 'unavailable', 'identity provider is unavailable');
    });
    clock.advance(31_000);
    await expect(current(a, tokenId)).rejects.toMatchObject({ status: 503 });
    expect(renewals).toEqual(['failed']);
    expect((await a.tokens.read(tokenId))?.accessToken).toBe('access-login');
  });

  it('should let a logout wait for a renewal in progress, so the renewal cannot bring the session back', async () => {
    const { clock, a, b, refresh, tokenId } = await loggedIn();
    clock.advance(31_000);
    const release = refresh.hold();
    const renewing = current(a, tokenId);
    await eventually(() => refresh.grants() === 1, 5000, 'the grant under way');
    const ending = b.keeper.end(tokenId);
    release();
    await renewing;
    expect((await ending)?.subject).toBe('user-1');
    expect(await b.tokens.read(tokenId)).toBeUndefined();
  });
});
