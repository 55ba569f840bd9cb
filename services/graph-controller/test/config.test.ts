import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@sp/core';
import { loadConfig, SERVICE_ACCOUNT_NAMESPACE_FILE, type ConfigHost } from '../src/config.js';

/** A machine with the given files (path → content). */
function host(files: Record<string, string> = {}): ConfigHost {
  return {
    fileExists: (path) => path in files,
    readFile: (path) => files[path] ?? '',
    hostname: () => 'workstation',
    homedir: () => '/home/dev',
  };
}

const outside = host({ '/home/dev/.kube/config': 'apiVersion: v1' });
const inCluster = host({ [SERVICE_ACCOUNT_NAMESPACE_FILE]: 'platform\n' });
const required = { Registry__Url: 'http://graph-registry.platform:5145', Registry__ApiKey: 'secret' };

function problems(env: Record<string, string>, machine = outside): readonly string[] {
  try {
    loadConfig(env, machine);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadConfig', () => {
  it('should apply the documented defaults in a cluster', () => {
    const config = loadConfig({ ...required, KUBERNETES_SERVICE_HOST: '10.0.0.1', POD_NAME: 'graph-controller-7d9-abc' }, inCluster);
    expect(config).toEqual({
      registry: { url: 'http://graph-registry.platform:5145', apiKey: 'secret', timeoutMs: 5000 },
      namespaces: [],
      clusterDomain: 'cluster.local',
      resyncMs: 300_000,
      watchIdleMs: 120_000,
      backoff: { baseMs: 200, maxMs: 30_000 },
      leaderElection: {
        leaseName: 'graph-controller',
        leaseNamespace: 'platform',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2000,
        identity: 'graph-controller-7d9-abc',
      },
      subgraphs: { pollMs: 60_000, timeoutMs: 5000, maxBytes: 1024 * 1024 },
      kubeSource: 'in-cluster',
      managementPort: 9464,
      logLevel: 'info',
      shutdownGraceMs: 10_000,
    });
  });

  it('should read every setting', () => {
    const config = loadConfig(
      {
        ...required,
        Registry__Url: 'https://registry.example/api/',
        Registry__TimeoutMs: '2000',
        Controller__Namespaces: ' shop, billing ,shop,',
        Controller__ClusterDomain: 'corp.example',
        Controller__ResyncSeconds: '60',
        Controller__WatchIdleSeconds: '90',
        Controller__BackoffBaseMs: '100',
        Controller__BackoffMaxMs: '5000',
        Controller__LeaseName: 'graphs',
        Controller__LeaseNamespace: 'ops',
        Controller__LeaseDurationSeconds: '30',
        Controller__RenewDeadlineSeconds: '20',
        Controller__RetryPeriodSeconds: '4',
        KUBECONFIG: '/etc/kube/config',
        Management__Port: '9500',
        Log__Level: 'debug',
        Shutdown__GracePeriodMs: '20000',
      },
      host({ '/etc/kube/config': '' }),
    );
    expect(config).toMatchObject({
      registry: { url: 'https://registry.example/api', timeoutMs: 2000 },
      namespaces: ['shop', 'billing'],
      clusterDomain: 'corp.example',
      resyncMs: 60_000,
      watchIdleMs: 90_000,
      backoff: { baseMs: 100, maxMs: 5000 },
      leaderElection: { leaseName: 'graphs', leaseNamespace: 'ops', leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 4000 },
      kubeSource: 'kubeconfig',
      managementPort: 9500,
      logLevel: 'debug',
      shutdownGraceMs: 20_000,
    });
  });

  it('should name the host, with a random suffix, when there is no POD_NAME', () => {
    const env = { ...required, Controller__LeaseNamespace: 'ops' };
    expect(loadConfig(env, outside).leaderElection.identity).toMatch(/^workstation_[0-9a-f]{8}$/);
    expect(loadConfig(env, outside).leaderElection.identity).not.toBe(loadConfig(env, outside).leaderElection.identity);
  });

  it('should report every problem at once, by variable name', () => {
    expect(
      problems({
        Registry__Url: 'ftp://registry',
        Controller__Namespaces: 'shop,Bad_NS',
        Controller__WatchIdleSeconds: '0',
        Controller__LeaseDurationSeconds: '10',
        Controller__RenewDeadlineSeconds: '10',
        Controller__RetryPeriodSeconds: '12',
        Log__Level: 'loud',
      }),
    ).toEqual([
      'Registry__Url: must be a URL with scheme http or https',
      'Registry__ApiKey: is required',
      'Controller__Namespaces: "Bad_NS" is not a namespace name',
      'Controller__WatchIdleSeconds: Too small: expected number to be >0',
      'Log__Level: must be fatal, error, warn, info, debug, trace or silent',
      'Controller__RenewDeadlineSeconds: must be less than Controller__LeaseDurationSeconds',
      'Controller__RetryPeriodSeconds: must be less than Controller__RenewDeadlineSeconds',
      'Controller__LeaseNamespace: is required outside a cluster (no service account namespace file)',
    ]);
  });

  it('should require a lease namespace and a kubeconfig outside a cluster', () => {
    expect(problems(required, host())).toEqual([
      'Controller__LeaseNamespace: is required outside a cluster (no service account namespace file)',
      'KUBECONFIG: is required outside a cluster (no in-cluster service account and no ~/.kube/config)',
    ]);
    expect(problems({ ...required, Controller__LeaseNamespace: 'ops', KUBECONFIG: '/a:/b' }, host({ '/a': '' }))).toEqual(['KUBECONFIG: file not found: /b']);
  });

  it('should reject a backoff cap below its base', () => {
    expect(problems({ ...required, Controller__LeaseNamespace: 'ops', Controller__BackoffBaseMs: '500', Controller__BackoffMaxMs: '100' })).toEqual([
      'Controller__BackoffMaxMs: must not be less than Controller__BackoffBaseMs',
    ]);
  });

  it('should treat an empty namespace list as all namespaces', () => {
    expect(loadConfig({ ...required, Controller__LeaseNamespace: 'ops', Controller__Namespaces: ' ' }, outside).namespaces).toEqual([]);
  });
});
