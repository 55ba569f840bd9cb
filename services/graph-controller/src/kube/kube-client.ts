import { ConfigError } from '@sp/core';
import { ApiException, KubeConfig, Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';

/**
 * Per-call options that bound a Kubernetes API call: the generated clients have no timeout of
 * their own, and a call that never answers would stall a lease renewal or an informer's list.
 */
export function withTimeout(timeoutMs: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          return new Observable(Promise.resolve(context));
        },
        post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** The HTTP status of a failed Kubernetes API call, when it got an answer. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/**
 * The KubeConfig of the process: KUBECONFIG (or ~/.kube/config) outside a cluster, the pod's
 * service account inside one. The library reads its own variables and files; what it cannot load
 * is a ConfigError naming KUBECONFIG, as a bad variable would be.
 */
export function loadKubeConfig(source: 'kubeconfig' | 'in-cluster'): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (source === 'in-cluster') kubeConfig.loadFromCluster();
    else kubeConfig.loadFromDefault();
  } catch (err) {
    // One line, as every configuration problem is reported (a YAML error adds the text it points at).
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
    throw new ConfigError([`KUBECONFIG: ${message}`]);
  }
  if (!kubeConfig.getCurrentCluster()) throw new ConfigError(['KUBECONFIG: the kubeconfig names no current cluster']);
  return kubeConfig;
}

/** How long one connection pool serves, before a new one picks up what the kubeconfig says then (a rotated CA, a client certificate). */
const POOL_LIFETIME_MS = 10 * 60_000;

/**
 * The KubeConfig with one connection pool for the process. @kubernetes/client-node builds a new
 * undici Agent for every request (2.0: `createDispatcher` in config.js), so every API call opens
 * a new TLS connection, and each stays open for its keep-alive: at a few hundred calls a second
 * that is a TLS handshake per call on both sides and a pile of idle connections (measured: 50
 * Services registered per second and 450 MiB of RSS at 1,000 Services). Here the library still
 * authenticates every request (tokens refresh as it decides), but the request goes through one
 * Agent, renewed every 10 minutes; the Agent it built is closed unused.
 */
export class PooledKubeConfig extends KubeConfig {
  private pool: { dispatcher: Dispatcher; until: number } | undefined;

  constructor(source: KubeConfig) {
    super();
    this.loadFromString(source.exportConfig());
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const built = context.getDispatcher();
    if (!built) return; // plain HTTP without TLS options: the global dispatcher pools already
    const now = Date.now();
    if (!this.pool || now >= this.pool.until) {
      const retired = this.pool?.dispatcher;
      this.pool = { dispatcher: built, until: now + POOL_LIFETIME_MS };
      void retired?.close(); // waits for its requests (a watch) to end
    } else {
      void built.close();
    }
    context.setDispatcher(this.pool.dispatcher);
  }
}
