import { ApiException, KubeConfig, Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

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
 * service account inside one. The library reads its own variables and files.
 */
export function loadKubeConfig(source: 'kubeconfig' | 'in-cluster'): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (source === 'in-cluster') kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster()) throw new Error('the kubeconfig names no current cluster');
  return kubeConfig;
}
