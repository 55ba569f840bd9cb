import { createHash } from 'node:crypto';
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Service } from '@kubernetes/client-node';
import type { Logger } from '@sp/observability';
import { apiStatus, withTimeout } from './kube-client.js';

export type EventType = 'Normal' | 'Warning';

/** Kubernetes Events about Services, as `kubectl describe service` shows them. */
export interface EventRecorder {
  /** Resolves true when the Event was created (or an identical one brought up to date); failures are logged, never thrown. */
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
  /** The wall clock (Unix ms) of the Events' timestamps. */
  now: () => number;
}

/** The longest message the API server keeps (longer ones are rejected). */
const MAX_MESSAGE = 1024;

/**
 * The Event's name: the Service's name and a digest of what is reported (the Service's uid, the
 * reason, the message). The same report made again — by a new leader, after a restart — names
 * the same Event, so the API server answers 409 and the existing one is brought up to date
 * instead of a copy piling up next to it.
 */
export function eventName(service: V1Service, reason: string, message: string): string {
  const digest = createHash('sha256')
    .update(`${service.metadata?.uid ?? ''}\n${reason}\n${message}`)
    .digest('hex')
    .slice(0, 16);
  return `${service.metadata?.name ?? 'unknown'}.${digest}`;
}

/**
 * Creates core/v1 Events in the Service's namespace. A report already on record (same Service,
 * reason and message) is not recorded twice: its `lastTimestamp` is patched instead (the RBAC's
 * `patch` on events). `count` stays: a leader change is not a new occurrence of the conflict.
 */
export function createKubeEventRecorder(options: KubeEventRecorderOptions): EventRecorder {
  const refresh = async (namespace: string, name: string, now: Date): Promise<void> => {
    await options.api.patchNamespacedEvent(
      { name, namespace, body: { lastTimestamp: now, reportingInstance: options.instance } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, withTimeout(options.timeoutMs)),
    );
  };
  return {
    async record(service, type, reason, message) {
      const namespace = service.metadata?.namespace ?? 'default';
      const name = service.metadata?.name ?? 'unknown';
      const now = new Date(options.now());
      const text = message.slice(0, MAX_MESSAGE);
      const eventObjectName = eventName(service, reason, text);
      try {
        await options.api.createNamespacedEvent(
          {
            namespace,
            body: {
              metadata: { name: eventObjectName, namespace },
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
              message: text,
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
        if (apiStatus(err) === 409) return refresh(namespace, eventObjectName, now).then(
          () => true,
          (patchErr: unknown) => {
            options.logger.warn({ err: patchErr, service: `${namespace}/${name}`, reason }, 'could not update an Event');
            return false;
          },
        );
        options.logger.warn({ err, service: `${namespace}/${name}`, reason }, 'could not create an Event');
        return false;
      }
    },
  };
}

export interface BackgroundEvents extends EventRecorder {
  /** Drops the Normal Events still waiting (they only inform) and waits for those being written. */
  stop(): Promise<void>;
}

export interface BackgroundEventsOptions {
  /** Normal Events waiting at most; past it, new ones are dropped. */
  maxQueued: number;
  /** Normal Events written at once. */
  concurrency: number;
  logger: Logger;
}

/**
 * Normal Events (`GraphRegistered`: they only inform) sent in the background, as client-go's
 * recorder sends every Event: the registration does not wait for its Event, at most `concurrency`
 * are written at once, and when `maxQueued` wait, new ones are dropped (client-go drops past
 * 1,000 queued too; the number dropped is logged when the queue is empty again). So a start that
 * registers 10,000 names does not also make 10,000 API server writes in the same minute. Warnings
 * (an invalid annotation, a conflict) are rare and reported once each, so they are written at
 * once and the caller learns whether they were.
 */
export function createBackgroundEvents(recorder: EventRecorder, options: BackgroundEventsOptions): BackgroundEvents {
  const waiting: Array<Parameters<EventRecorder['record']>> = [];
  const sending = new Set<Promise<unknown>>();
  let dropped = 0;

  const pump = (): void => {
    while (sending.size < options.concurrency && waiting.length > 0) {
      const sent = recorder.record(...waiting.shift()!).finally(() => {
        sending.delete(sent);
        pump();
      });
      sending.add(sent);
    }
    if (waiting.length === 0 && dropped > 0) {
      options.logger.warn({ dropped }, 'Normal Events dropped: more were waiting than the queue holds');
      dropped = 0;
    }
  };

  return {
    record(service, type, reason, message) {
      if (type === 'Warning') return recorder.record(service, type, reason, message);
      if (waiting.length >= options.maxQueued) {
        dropped += 1;
        return Promise.resolve(false);
      }
      waiting.push([service, type, reason, message]);
      pump();
      return Promise.resolve(true);
    },
    async stop() {
      waiting.length = 0;
      await Promise.allSettled([...sending]);
    },
  };
}
