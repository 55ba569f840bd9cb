import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import { loadConfig } from '../src/config.js';

const required = {
  Oidc__Realm: 'subscription-platform',
  Oidc__ServerUrl: 'https://keycloak.example.test',
  Oidc__ClientId: 'platform-auth',
  Oidc__ClientSecret: 'secret',
  Oidc__AdminCredentials__Username: 'platform-admin',
  Oidc__AdminCredentials__Password: 'password',
  MessageBroker__BrokerList: 'kafka-0:9092, kafka-1:9092',
  Cache__Url: 'cache:7777',
};
/** What Production needs besides: TLS files, or the statement that TLS ends in front. */
const production = { ...required, Tls__TerminatedUpstream: 'true' };

const problemsOf = (environment: Record<string, string>): readonly string[] => configProblems(() => loadConfig(environment));

describe('loadConfig', () => {
  it('should report every missing and invalid variable at once, by name', () => {
    const problems = problemsOf({
      Oidc__ServerUrl: 'keycloak:8080',
      Cache__Url: 'not an address',
      Auth__Port: '70000',
      Auth__AllowedRedirectUris: 'https://ok.example.test, https://user@bad.example.test',
      Otp__MaxAttempts: '0',
      IGNORE_SSL_CERT_VALIDATION: 'maybe',
      Tls__CertPath: '/nonexistent/cert.pem',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'Oidc__Realm: is required',
        'Oidc__ClientId: is required',
        'Oidc__ClientSecret: is required',
        'Oidc__AdminCredentials__Username: is required',
        'Oidc__AdminCredentials__Password: is required',
        'MessageBroker__BrokerList: is required',
        'Oidc__ServerUrl: must be a URL with scheme https or http',
        expect.stringMatching(/^Cache__Url: must be host:port/),
        expect.stringMatching(/^Auth__Port: /),
        'Auth__AllowedRedirectUris: "https://user@bad.example.test" must not carry user information',
        expect.stringMatching(/^Otp__MaxAttempts: /),
        'IGNORE_SSL_CERT_VALIDATION: must be true or false',
        'Tls__CertPath and Tls__KeyPath: give both or neither',
        'Tls__CertPath: cannot read /nonexistent/cert.pem',
      ]),
    );
    expect(problems).toHaveLength(14);
  });

  it('should apply the documented defaults', () => {
    const config = loadConfig(production);
    expect(config).toMatchObject({
      port: 5555,
      host: '0.0.0.0',
      managementPort: 9464,
      publicBaseUrl: 'https://localhost:5555',
      proxyHops: 0,
      environment: 'Production',
      tls: undefined,
      tlsTerminatedUpstream: true,
      groups: { client: 'clients', subscriber: 'subscribers' },
      locales: { supported: ['en', 'de', 'fr', 'es'], fallback: 'en' },
      otp: { ttlSeconds: 300, maxAttempts: 5, cooldownSeconds: 30, maxPerPhone: 5, maxPerIp: 20, windowSeconds: 3600 },
      kafka: { brokers: ['kafka-0:9092', 'kafka-1:9092'], notificationsTopic: 'notifications', userAuthenticationTopic: 'user-authentication', publishTimeoutMs: 5000 },
      cache: { address: 'cache:7777', deadlineMs: 2000 },
      warnings: [],
    });
    expect(config.oidc).toMatchObject({ issuer: 'https://keycloak.example.test/realms/subscription-platform', allowInsecureHttp: false, ignoreCertificateErrors: false, stateTtlSeconds: 300 });
    // No allowlist: every redirect URI is refused.
    expect(config.allowedRedirects.check('https://localhost:5555/')).toBeUndefined();
  });

  it('should refuse a plain-HTTP identity provider in Production unless it is on loopback', () => {
    expect(problemsOf({ ...production, Oidc__ServerUrl: 'http://keycloak:8080' })).toEqual([
      'Oidc__ServerUrl: must be https in Production (plain http is accepted for loopback addresses or outside Production)',
    ]);
    expect(loadConfig({ ...production, Oidc__ServerUrl: 'http://127.0.0.1:8080/' }).oidc).toMatchObject({ allowInsecureHttp: true, issuer: 'http://127.0.0.1:8080/realms/subscription-platform' });
    expect(loadConfig({ ...required, Oidc__ServerUrl: 'http://keycloak:8080', NODE_ENV: 'Development' }).oidc.allowInsecureHttp).toBe(true);
  });

  it('should take the environment from ASPNETCORE_ENVIRONMENT, else NODE_ENV, else Production', () => {
    expect(loadConfig(production).environment).toBe('Production');
    expect(loadConfig({ ...required, NODE_ENV: 'development' }).environment).toBe('Development');
    expect(loadConfig({ ...required, ASPNETCORE_ENVIRONMENT: 'Development', NODE_ENV: 'production' }).environment).toBe('Development');
    const mixed = loadConfig({ ...production, ASPNETCORE_ENVIRONMENT: 'Production', NODE_ENV: 'development' });
    expect(mixed.environment).toBe('Production');
    expect(mixed.warnings).toEqual(['NODE_ENV=development is ignored: ASPNETCORE_ENVIRONMENT=Production decides the environment']);
    expect(loadConfig({ ...required, NODE_ENV: 'staging' }).environment).toBe('Other');
    // Only the exact name turns development on.
    expect(loadConfig({ ...production, ASPNETCORE_ENVIRONMENT: 'Develop' }).environment).toBe('Other');
  });

  it('should refuse to start in Production without TLS files unless TLS ends in front, and with IGNORE_SSL_CERT_VALIDATION', () => {
    expect(problemsOf(required)).toEqual([
      'Tls__CertPath: required in Production, with Tls__KeyPath (or Tls__TerminatedUpstream=true when TLS ends at a proxy in front of the service)',
    ]);
    expect(problemsOf({ ...required, ASPNETCORE_ENVIRONMENT: 'Production', NODE_ENV: 'Development', Tls__TerminatedUpstream: 'false' })).toHaveLength(1);
    expect(problemsOf({ ...production, IGNORE_SSL_CERT_VALIDATION: 'true' })).toEqual(['IGNORE_SSL_CERT_VALIDATION: must not be true in Production']);
    expect(problemsOf({ ...production, IGNORE_SSL_CERT_VALIDATION: 'yes', ASPNETCORE_ENVIRONMENT: 'Production', NODE_ENV: 'Development' })).toEqual([
      'IGNORE_SSL_CERT_VALIDATION: must not be true in Production',
    ]);
  });

  it('should honour IGNORE_SSL_CERT_VALIDATION outside Production, with a warning', () => {
    const development = loadConfig({ ...required, IGNORE_SSL_CERT_VALIDATION: 'true', ASPNETCORE_ENVIRONMENT: 'Development' });
    expect(development.environment).toBe('Development');
    expect(development.oidc.ignoreCertificateErrors).toBe(true);
    expect(development.warnings).toEqual([expect.stringMatching(/NOT validated/)]);
  });

  it('should read the TLS files, the proxy setting and the allowlist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-config-'));
    writeFileSync(join(dir, 'tls.crt'), 'cert');
    writeFileSync(join(dir, 'tls.key'), 'key');
    const config = loadConfig({
      ...required,
      Tls__CertPath: join(dir, 'tls.crt'),
      Tls__KeyPath: join(dir, 'tls.key'),
      Auth__TrustProxy: 'true',
      Auth__ProxyHops: '2',
      Auth__AllowedRedirectUris: 'https://app.example.test/, https://admin.example.test/ui/',
      Auth__SupportedLocales: 'de,en',
      Auth__DefaultLocale: 'de',
    });
    expect(config.tls).toEqual({ certPath: join(dir, 'tls.crt'), keyPath: join(dir, 'tls.key') });
    expect(loadConfig({ ...production, Auth__Port: '6000' }).publicBaseUrl).toBe('https://localhost:6000');
    expect(config.proxyHops).toBe(2);
    expect(config.locales).toEqual({ supported: ['de', 'en'], fallback: 'de' });
    expect(config.allowedRedirects.check('https://app.example.test/any/path?x=1')).toBe('https://app.example.test/any/path?x=1');
    expect(config.allowedRedirects.check('https://admin.example.test/ui/home')).toBe('https://admin.example.test/ui/home');
    expect(config.allowedRedirects.check('https://admin.example.test/other')).toBeUndefined();
  });

  it('should default the session lifetimes to Keycloak\'s own defaults and refuse an idle limit above the absolute one', () => {
    expect(loadConfig(production).session).toEqual({ idleSeconds: 1800, maxSeconds: 36_000, renewBeforeSeconds: 60, nearCacheEntries: 10_000, maxPerUser: 10 });
    expect(
      loadConfig({ ...production, Auth__SessionIdleSeconds: '600', Auth__SessionMaxSeconds: '3600', Auth__SessionRenewBeforeSeconds: '30', Auth__SessionNearCacheEntries: '0', Auth__MaxSessionsPerUser: '3' }).session,
    ).toEqual({
      idleSeconds: 600,
      maxSeconds: 3600,
      renewBeforeSeconds: 30,
      nearCacheEntries: 0,
      maxPerUser: 3,
    });
    expect(problemsOf({ ...production, Auth__MaxSessionsPerUser: '0' })).toEqual([expect.stringMatching(/^Auth__MaxSessionsPerUser: /)]);
    // The local memory of earlier versions is gone: a deployment that still sets it is told so.
    expect(loadConfig({ ...production, Auth__SessionCacheMs: '1000' }).warnings).toEqual([expect.stringContaining('Auth__SessionCacheMs is no longer used')]);
    expect(problemsOf({ ...production, Auth__SessionIdleSeconds: '7200', Auth__SessionMaxSeconds: '3600' })).toEqual(['Auth__SessionIdleSeconds: must not exceed Auth__SessionMaxSeconds (3600)']);
    expect(problemsOf({ ...production, Auth__SessionIdleSeconds: '0', Auth__SessionRenewBeforeSeconds: 'soon' })).toEqual([
      expect.stringMatching(/^Auth__SessionIdleSeconds: /),
      expect.stringMatching(/^Auth__SessionRenewBeforeSeconds: /),
    ]);
  });
  describe('OTP fraud controls', () => {
    it('should default to 6 prefix digits, 20 codes a prefix, 600 a minute, every country, mobile and fixed-line-or-mobile numbers', () => {
      expect(loadConfig(production).otpFraud).toEqual({
        prefixDigits: 6,
        maxPerPrefix: 20,
        maxPerMinute: 600,
        allowedCountries: new Set(['*']),
        blockedCountries: new Set(),
        monitoredCountries: new Set(),
        allowedNumberTypes: new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE']),
      });
    });

    it('should read country codes in any case and number types', () => {
      const config = loadConfig({ ...production, Otp__AllowedCountries: 'de, Fr,001', Otp__MonitoredCountries: 'fr', Otp__BlockedCountries: 'ru', Otp__AllowedNumberTypes: 'mobile,FIXED_LINE', Otp__PrefixDigits: '4' });
      expect(config.otpFraud).toMatchObject({ prefixDigits: 4, allowedCountries: new Set(['DE', 'FR', '001']), monitoredCountries: new Set(['FR']), blockedCountries: new Set(['RU']), allowedNumberTypes: new Set(['MOBILE', 'FIXED_LINE']) });
    });

    it('should refuse unknown countries and types, * outside the allow list, and monitored countries that never get a code', () => {
      expect(
        problemsOf({ ...production, Otp__AllowedCountries: 'DE,XX', Otp__BlockedCountries: '*', Otp__MonitoredCountries: 'GB', Otp__AllowedNumberTypes: 'MOBILE,SATELLITE', Otp__MaxPerPrefix: '0', Otp__MaxPerMinute: 'many' }),
      ).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^Otp__AllowedCountries: unknown country XX/),
          expect.stringMatching(/^Otp__BlockedCountries: unknown country \*/),
          expect.stringMatching(/^Otp__AllowedNumberTypes: must list types among MOBILE, /),
          expect.stringMatching(/^Otp__MaxPerPrefix: /),
          expect.stringMatching(/^Otp__MaxPerMinute: /),
          'Otp__MonitoredCountries: GB never get a code (blocked, or not in Otp__AllowedCountries)',
        ]),
      );
      expect(problemsOf({ ...production, Otp__BlockedCountries: 'RU', Otp__MonitoredCountries: 'RU,001' })).toEqual(['Otp__MonitoredCountries: RU, 001 never get a code (blocked, or not in Otp__AllowedCountries)']);
    });
  });
});
