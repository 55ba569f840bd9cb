import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import type { Logger } from '@sp/platform';
import { withTimeout } from './kube-client.js';

export type EventType = 'Normal' | 'Warning';

/** Kubernetes Events about Services, as `kubectl describe service` shows them. */
export interface EventRecorder {
  /** Resolves true when the Event was created; failures are logged, never thrown. */
  record(service: V1Service, type: EventType, reason: string, message: string): Promise<boolean>;
}

export interface KubeEventRecorderOptions {
  api: CoreV1Api;
  /** `source.component` and `reportingComponent`. */
  component: string;
  /** `reportingInstance`: this replica. */
  instance: string;
  timeoutMs: number;
  logger: Logger;
}

/** The longest message the API server keeps (longer ones are rejected). */
const MAX_MESSAGE = 1024;

/** Creates core/v1 Events in the Service's namespace, named like client-go's recorder (`{object}.{unique}`). */
export function createKubeEventRecorder(options: KubeEventRecorderOptions): EventRecorder {
  return {
    async record(service, type, reason, message) {
      const namespace = service.metadata?.namespace ?? 'default';
      const name = service.metadata?.name ?? 'unknown';
      const now = new Date();
      try {
        await options.api.createNamespacedEvent(
          {
            namespace,
            body: {
              metadata: { name: `${name}.${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`, namespace },
              involvedObject: {
                apiVersion: 'v1',
                kind: 'Service',
                name,
                namespace,
                uid: service.metadata?.uid,
                resourceVersion: service.metadata?.resourceVersion,
              },
              type,
              reason,
              message: message.slice(0, MAX_MESSAGE),
              source: { component: options.component },
              reportingComponent: options.component,
              reportingInstance: options.instance,
              firstTimestamp: now,
              lastTimestamp: now,
              count: 1,
            },
          },
          withTimeout(options.timeoutMs),
        );
        return true;
      } catch (err) {
        options.logger.warn({ err, service: `${namespace}/${name}`, reason }, 'could not create an Event');
        return false;
      }
    },
  };
}
