import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import { loadConfig } from '../src/config.js';

const valid = {
  WEBHOOKS_API_KEY: 'code-1',
  PAYMENT_PROVIDER_API_KEY: 'sk_test_123',
  PAYMENT_PROVIDER_WEBHOOKS_SECRET: 'whsec_1',
  SMS_PROVIDER_ACCOUNT_SID: `AC${'a'.repeat(32)}`,
  SMS_PROVIDER_AUTH_TOKEN: 'token-1',
  SMS_PROVIDER_MESSAGE_SERVICE_SID: `MG${'b'.repeat(32)}`,
  GRAPHQL_API_URL: 'http://gateway:4000/graphql',
  LOCALIZATION_API_URL: 'http://localization:8080/',
  AUTH_API_URL: 'https://auth:5555',
  STORE_URL: 'redis://redis:6379',
  Cache__Url: 'cache:7777',
  MessageBroker__BrokerList: 'kafka-0:9092,kafka-1:9092',
  AccountUrl: 'https://app.example.com/account',
  BillingPortalUrl: 'https://billing.example.com',
  ClientLinkBaseUri: 'https://app.example.com/c/',
  Oidc__ServerUrl: 'http://keycloak:8080/',
  Oidc__Realm: 'subscription-platform',
  Oidc__ClientId: 'platform-services',
  Oidc__ClientSecret: 'secret',
  Webhooks__PublicBaseUrl: 'https://hooks.example.com/',
};

const problemsOf = (environment: Record<string, string>): readonly string[] => configProblems(() => loadConfig(environment));

describe('configuration', () => {
  it('should report every missing required variable at once, by name', () => {
    expect(problemsOf({})).toEqual([
      'Webhooks__PublicBaseUrl: is required',
      'WEBHOOKS_API_KEY: is required',
      'PAYMENT_PROVIDER_API_KEY: is required',
      'PAYMENT_PROVIDER_WEBHOOKS_SECRET: is required',
      'SMS_PROVIDER_ACCOUNT_SID: is required',
      'SMS_PROVIDER_AUTH_TOKEN: is required',
      'GRAPHQL_API_URL: is required',
      'LOCALIZATION_API_URL: is required',
      'STORE_URL: is required',
      'Cache__Url: is required',
      'MessageBroker__BrokerList: is required',
      'AccountUrl: is required',
      'BillingPortalUrl: is required',
      'ClientLinkBaseUri: is required',
      'Oidc__ServerUrl: is required',
      'Oidc__Realm: is required',
      'Oidc__ClientId: is required',
      'Oidc__ClientSecret: is required',
    ]);
  });

  it('should report missing and invalid variables together', () => {
    const rest: Record<string, string> = { ...valid };
    delete rest.GRAPHQL_API_URL;
    delete rest.Oidc__ClientSecret;
    expect(
      problemsOf({
        ...rest,
        STORE_URL: 'postgres://db',
        SMS_PROVIDER_ACCOUNT_SID: 'not-a-sid',
        Webhooks__Port: '70000',
        SmsProvider__ValidateSignature: 'maybe',
        WEBHOOKS_API_KEY: ' , ',
        Cache__Url: 'http://cache',
        AUTH_API_URL: 'nope',
      }),
    ).toEqual([
      expect.stringMatching(/^Webhooks__Port: /),
      'WEBHOOKS_API_KEY: must list at least one value',
      'SMS_PROVIDER_ACCOUNT_SID: must be a Twilio account SID (AC followed by 32 hex digits)',
      'SmsProvider__ValidateSignature: must be true or false',
      'GRAPHQL_API_URL: is required',
      'AUTH_API_URL: must be a URL with scheme http or https',
      'STORE_URL: must be memory:// or a Redis URL (must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...)',
      'Cache__Url: must be host:port of the cache service (grpc:// or dns: prefix allowed)',
      'Oidc__ClientSecret: is required',
    ]);
  });

  it('should apply the documented defaults and normalize URLs', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      port: 5000,
      host: '0.0.0.0',
      managementPort: 9464,
      apiKeys: ['code-1'],
      store: { kind: 'redis', url: 'redis://redis:6379' },
      brokers: ['kafka-0:9092', 'kafka-1:9092'],
      topics: { payments: 'Payments', notifications: 'notifications', foreignProducts: 'ForeignProducts' },
      publicBaseUrl: 'https://hooks.example.com',
      localizationUrl: 'http://localization:8080',
      links: { clientBase: 'https://app.example.com/c' },
      oidc: { serverUrl: 'http://keycloak:8080', realm: 'subscription-platform' },
      announcementTtlMs: 24 * 60 * 60 * 1000,
      logLevel: 'info',
      shutdownGraceMs: 10_000,
    });
    expect(config.smsProvider.validateSignature).toBe(true);
    expect(config.paymentProvider.apiUrl).toBeUndefined();
  });

  it.each([['redis+sentinel://:pw@s1:26379,s2:26379/mymaster'], ['redis+cluster://n1:6379,n2:6379'], ['rediss://:pw@redis.example.com:6380/2']])(
    'should accept STORE_URL=%s',
    (url) => {
      expect(loadConfig({ ...valid, STORE_URL: url }).store).toEqual({ kind: 'redis', url });
    },
  );

  it('should refuse a Redis URL without host', () => {
    expect(problemsOf({ ...valid, STORE_URL: 'redis://' })).toEqual(['STORE_URL: a redis:// or rediss:// URL must name a host']);
  });

  it('should take comma-separated secrets for rotation and the overrides', () => {
    const config = loadConfig({
      ...valid,
      WEBHOOKS_API_KEY: 'old, new',
      PAYMENT_PROVIDER_WEBHOOKS_SECRET: 'whsec_old,whsec_new',
      SMS_PROVIDER_AUTH_TOKEN: 'a,b,c',
      PAYMENT_PROVIDER_API_URL: 'http://127.0.0.1:12111',
      SmsProvider__ValidateSignature: 'false',
      Announcements__DraftTtlMs: '3600000',
      MessageBroker__PaymentsTopic: 'payments-v2',
      STORE_URL: 'memory://',
      Webhooks__Port: '0',
    });
    expect(config.apiKeys).toEqual(['old', 'new']);
    expect(config.paymentProvider).toEqual({ apiKey: 'sk_test_123', livemode: false, apiUrl: 'http://127.0.0.1:12111', webhookSecrets: ['whsec_old', 'whsec_new'] });
    expect(config.smsProvider).toMatchObject({ authTokens: ['a', 'b', 'c'], validateSignature: false, messageRetentionMs: 30 * 24 * 3_600_000 });
    expect(config).toMatchObject({ announcementTtlMs: 3_600_000, port: 0, store: { kind: 'memory' }, topics: { payments: 'payments-v2' } });
  });

  it.each([
    ['sk_test_123', false],
    ['rk_test_abc', false],
    ['sk_live_51Habc', true],
    ['rk_live_51Habc', true],
  ])('should read the mode of PAYMENT_PROVIDER_API_KEY=%s (live: %s)', (key, livemode) => {
    expect(loadConfig({ ...valid, PAYMENT_PROVIDER_API_KEY: key }).paymentProvider.livemode).toBe(livemode);
  });

  it.each([['pk_test_123'], ['sk_123'], ['whsec_123'], ['sk_prod_123']])('should refuse PAYMENT_PROVIDER_API_KEY=%s, whose mode cannot be told', (key) => {
    expect(problemsOf({ ...valid, PAYMENT_PROVIDER_API_KEY: key })).toEqual([
      'PAYMENT_PROVIDER_API_KEY: must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)',
    ]);
  });
  it('should default reconciliation, the event log and dead letters, and refuse values out of range by name', () => {
    const config = loadConfig(valid);
    expect(config.reconcileIntervalMs).toBe(300_000);
    expect(config.adminApiKeys).toBeUndefined();
    expect(config.eventLog).toEqual({ retentionMs: 7 * 24 * 60 * 60 * 1000, maxEvents: 100_000, deadAfterFailures: 10 });
    const tuned = loadConfig({ ...valid, PaymentProvider__ReconcileIntervalSeconds: '0', WEBHOOKS_ADMIN_API_KEY: 'admin-new, admin-old', Webhooks__EventLogDays: '2', Webhooks__DeadAfterFailures: '3' });
    expect(tuned).toMatchObject({ reconcileIntervalMs: 0, adminApiKeys: ['admin-new', 'admin-old'], eventLog: { retentionMs: 2 * 24 * 60 * 60 * 1000, deadAfterFailures: 3 } });
    expect(problemsOf({ ...valid, PaymentProvider__ReconcileIntervalSeconds: '-1', Webhooks__EventLogDays: '0', Webhooks__EventLogMaxEvents: 'many', Webhooks__DeadAfterFailures: '0', WEBHOOKS_ADMIN_API_KEY: ' , ' })).toEqual([
      'WEBHOOKS_ADMIN_API_KEY: must list at least one value',
      'PaymentProvider__ReconcileIntervalSeconds: must be 0 (off) or a number of seconds',
      expect.stringMatching(/^Webhooks__EventLogDays: /),
      expect.stringMatching(/^Webhooks__EventLogMaxEvents: /),
      expect.stringMatching(/^Webhooks__DeadAfterFailures: /),
    ]);
  });
});
