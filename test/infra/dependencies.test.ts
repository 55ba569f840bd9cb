import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import Stripe from 'stripe';
import { Redis } from 'ioredis';
import { infra } from '../support/infra.js';

const run = promisify(execFile);

describe('local dependencies are the real thing', () => {
  it('Redis answers PING and keeps a value with a TTL', async () => {
    const redis = new Redis(infra('REDIS_URL'), { lazyConnect: true });
    try {
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      await redis.set('infra-test', 'v', 'PX', 10_000);
      expect(await redis.get('infra-test')).toBe('v');
      expect(await redis.pttl('infra-test')).toBeGreaterThan(9000);
      expect(await redis.info('server')).toMatch(/redis_version:\d+/);
    } finally {
      redis.disconnect();
    }
  });

  it('Keycloak issues a client-credentials token that verifies against its JWKS', async () => {
    const issuer = `${infra('KEYCLOAK_URL')}/realms/${infra('KEYCLOAK_REALM')}`;
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string; jwks_uri: string; issuer: string };
    expect(discovery.issuer).toBe(issuer);
    const response = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: infra('KEYCLOAK_SERVICES_CLIENT_ID'),
        client_secret: infra('KEYCLOAK_SERVICES_CLIENT_SECRET'),
      }),
    });
    expect(response.status).toBe(200);
    const { access_token: accessToken } = (await response.json()) as { access_token: string };
    const { payload, protectedHeader } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(discovery.jwks_uri)), { issuer });
    // The realm's default signature algorithm (realm.json): ECDSA P-256, a fraction of RSA-2048's signing cost per token.
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.azp).toBe(infra('KEYCLOAK_SERVICES_CLIENT_ID'));
    await expect(jwtVerify(`${accessToken.slice(0, -4)}AAAA`, createRemoteJWKSet(new URL(discovery.jwks_uri)))).rejects.toThrow(/signature/);
  });

  it('stripe-mock answers checkout.sessions.retrieve made with the stripe library', async () => {
    const url = new URL(infra('STRIPE_MOCK_URL'));
    const stripe = new Stripe('sk_test_123', { host: url.hostname, port: Number(url.port), protocol: 'http' });
    const session = await stripe.checkout.sessions.retrieve('cs_test_123');
    expect(session.object).toBe('checkout.session');
    expect(session.id).toBe('cs_test_123');
  });

  it('helm runs', async () => {
    const { stdout } = await run(infra('HELM_BIN'), ['version', '--short']);
    expect(stdout).toMatch(/^v\d+\.\d+\.\d+/);
  });
});
