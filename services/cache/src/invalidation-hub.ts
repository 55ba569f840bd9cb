import type { AppError } from '@sp/core';

/** What happened to a key, as Subscribe announces it. */
export type ChangeKind = 'WRITTEN' | 'REMOVED' | 'EXPIRED' | 'EVICTED';

/** One Subscribe stream's end of the hub. */
export interface ChangeListener {
  changed(key: string, kind: ChangeKind): void;
  /** Announcements can no longer be guaranteed: the stream must end so its client flushes. */
  lost(reason: AppError): void;
}

/**
 * The service's fan-out of key changes to its Subscribe streams. The backend tells it what
 * changed (the memory store as it writes; the Redis backend from keyspace notifications) and
 * whether every change is being seen (`setSource`): a stream may only start while it is, and every
 * stream ends the moment it no longer is, because a change missed then would never be announced.
 */
export interface InvalidationHub {
  announce(key: string, kind: ChangeKind): void;
  /** Why no stream can start now (Redis notifications not flowing), or undefined when they can. */
  unavailable(): AppError | undefined;
  /** The backend's report: `undefined` while every change is seen, otherwise why not. */
  setSource(problem: AppError | undefined): void;
  /** Adds a listener for keys under any of `prefixes`; returns its removal. */
  subscribe(prefixes: readonly string[], listener: ChangeListener): () => void;
  /** Number of open streams (a gauge). */
  size(): number;
  /** Ends every stream (the service is shutting down). */
  close(reason: AppError): void;
}

interface Subscription {
  prefixes: readonly string[];
  listener: ChangeListener;
}

/** A hub whose source starts as `initialProblem` (memory: none; Redis: not subscribed yet). */
export function createInvalidationHub(initialProblem?: AppError): InvalidationHub {
  const subscriptions = new Set<Subscription>();
  let problem = initialProblem;

  const endAll = (reason: AppError): void => {
    const ended = [...subscriptions];
    subscriptions.clear();
    for (const { listener } of ended) listener.lost(reason);
  };

  return {
    announce(key, kind) {
      for (const { prefixes, listener } of subscriptions) {
        if (prefixes.some((prefix) => key.startsWith(prefix))) listener.changed(key, kind);
      }
    },
    unavailable: () => problem,
    setSource(next) {
      problem = next;
      if (next !== undefined) endAll(next);
    },
    subscribe(prefixes, listener) {
      const subscription = { prefixes, listener };
      subscriptions.add(subscription);
      return () => void subscriptions.delete(subscription);
    },
    size: () => subscriptions.size,
    close: endAll,
  };
}
