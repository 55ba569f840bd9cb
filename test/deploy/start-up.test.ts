import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { repoRoot, services } from './support/service-config.js';

// An empty HOME: no ~/.kube/config for the controller to fall back on.
const home = mkdtempSync(join(tmpdir(), 'start-up-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe.each(services)('%s started with a bad configuration', (service) => {
  it('should exit 1 naming every problem on its own line, without a stack trace', () => {
    // Every service has a required variable or a numeric port: either way the start is refused.
    const run = spawnSync(process.execPath, [join(repoRoot, `services/${service}/dist/main.js`)], {
      env: { PATH: process.env.PATH, HOME: home, Cache__Port: 'not-a-port' },
      encoding: 'utf8',
      // A hang guard, not a speed target: a loaded machine took over 10 s to start a process and refuse it.
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${service}: invalid configuration: \\S+: .+`));
    expect(run.stdout).toBe('');
  });
});

describe('auth started in Production without its safeguards', () => {
  it('should refuse to start, one clear line for each: no TLS files nor TLS ending in front, certificate checks off', () => {
    const run = spawnSync(process.execPath, [join(repoRoot, 'services/auth/dist/main.js')], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        Oidc__Realm: 'platform',
        Oidc__ServerUrl: 'https://keycloak.example.test',
        Oidc__ClientId: 'auth',
        Oidc__ClientSecret: 'client-secret-value',
        Oidc__AdminCredentials__Username: 'admin',
        Oidc__AdminCredentials__Password: 'admin-password-value',
        MessageBroker__BrokerList: '127.0.0.1:9',
        Cache__Url: '127.0.0.1:9',
        // The case that once ran in development: the one switch says Production.
        ASPNETCORE_ENVIRONMENT: 'Production',
        NODE_ENV: 'development',
        IGNORE_SSL_CERT_VALIDATION: 'true',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      'auth: invalid configuration: Tls__CertPath: required in Production, with Tls__KeyPath (or Tls__TerminatedUpstream=true when TLS ends at a proxy in front of the service)',
      'auth: invalid configuration: IGNORE_SSL_CERT_VALIDATION: must not be true in Production',
    ]);
    expect(run.stderr).not.toMatch(/client-secret-value|admin-password-value/);
  });
});

describe('graph controller started with a kubeconfig it cannot use', () => {
  it.each([
    ['not YAML', 'clusters: [unclosed'],
    ['no current cluster', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n'],
  ])('should exit 1 with one line naming KUBECONFIG (%s), without a stack trace', (_case, content) => {
    const kubeconfig = join(home, `kubeconfig-${_case.replace(/\W+/g, '-')}`);
    writeFileSync(kubeconfig, content);
    const run = spawnSync(process.execPath, [join(repoRoot, 'services/graph-controller/dist/main.js')], {
      env: { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfig, Registry__Url: 'http://127.0.0.1:9', Registry__ApiKey: 'key', Controller__LeaseNamespace: 'platform' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^graph-controller: invalid configuration: KUBECONFIG: .+/)]);
    // The variables were valid, so the start line came first (JSON, on stdout); the kubeconfig,
    // read when the controller is created, is refused after it. Nothing else is written.
    expect(run.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([expect.stringMatching(/^graph-controller \S+ starting$/)]);
  });
});
