import { STATUS_CODES } from 'node:http';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { kubeGet, type Query } from '../kube/kube-request.js';

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

export interface WatchdogWatchOptions {
  /** A watch that delivered nothing (no event, no bookmark) for this long is cut and resumed. */
  idleMs: number;
  /** Asked of the API server per watch, so it ends streams itself now and then (client-go uses 5–10 min). */
  serverTimeoutSeconds?: () => number;
  /** The watchdog cut a silent watch. */
  onIdleRestart?(): void;
  /** A watch stream is open (the informer has listed and is now watching). */
  onWatching?(): void;
  /** Applied to the object of every ADDED, MODIFIED and DELETED event before the informer gets it. */
  transform?(object: unknown): unknown;
}

const OBJECT_EVENTS = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/** An Error the informer (ListWatch) treats as a client-side timeout: it resumes from its resourceVersion at once. */
function timeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}

/** An Error the informer treats as 410 Gone: it drops its resourceVersion and lists again. */
function goneError(message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode: 410 });
}

const defaultServerTimeout = (): number => 300 + Math.floor(Math.random() * 300);

interface WatchState {
  lastActivity: number;
  reason: 'idle' | 'relist' | undefined;
  ended: boolean;
}

/** Calls `onLine` for each line of the response body, until it ends or the request is aborted. */
async function readLines(body: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  for await (const line of createInterface({ input: Readable.fromWeb(body), crlfDelay: Infinity })) onLine(line);
}

/**
 * The library's Watch, for the library's informer (ListWatch stays in charge of listing, caching
 * and resuming), with what a long-running informer needs:
 *
 * - `allowWatchBookmarks=true`, so a healthy watch on a quiet resource still hears from the API
 *   server (a bookmark about once a minute), and `timeoutSeconds`;
 * - a watchdog: informer watches can stall without the connection failing (a half-open TCP
 *   connection, a proxy that stops forwarding); one silent longer than `idleMs` is aborted and
 *   the informer resumes from its last resourceVersion;
 * - `relist()`: makes the informer list again (as after a 410) at the next opportunity, for the
 *   periodic full relist.
 *
 * The stream is opened here, with the library's public request context (authentication, TLS
 * dispatcher) and undici's fetch as the library does, not by `super.watch`: the library's own
 * inactivity timeout (30 s) is not configurable and would cut a healthy watch between bookmarks.
 */
export class WatchdogWatch extends Watch {
  private readonly options: WatchdogWatchOptions;
  private active: { controller: AbortController; expire(reason: 'idle' | 'relist'): void } | undefined;
  private relistRequested = false;

  constructor(config: KubeConfig, options: WatchdogWatchOptions) {
    super(config);
    this.options = options;
  }

  /** Lists again: now if a watch is open, else when the next one would start. */
  relist(): void {
    if (this.active) this.active.expire('relist');
    else this.relistRequested = true;
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    const controller = new AbortController();
    if (this.relistRequested) {
      this.relistRequested = false;
      // Deferred: the informer stores the returned controller before it hears about the end.
      setImmediate(() => done(goneError('periodic relist')));
      return controller;
    }
    const state: WatchState = { lastActivity: performance.now(), reason: undefined, ended: false };
    const expire = (why: 'idle' | 'relist'): void => {
      state.reason ??= why;
      controller.abort();
    };
    const watchdog = setInterval(() => {
      if (performance.now() - state.lastActivity < this.options.idleMs) return;
      if (state.reason === undefined) this.options.onIdleRestart?.();
      expire('idle');
    }, Math.max(50, Math.min(1000, this.options.idleMs / 4)));
    watchdog.unref();
    const finish = (err: unknown): void => {
      if (state.ended) return;
      state.ended = true;
      clearInterval(watchdog);
      controller.abort();
      if (this.active?.controller === controller) this.active = undefined;
      if (state.reason === 'relist') done(goneError('periodic relist'));
      else if (state.reason === 'idle') done(timeoutError(`watch silent for ${this.options.idleMs} ms`));
      else done(err);
    };
    const onLine = (line: string): void => {
      state.lastActivity = performance.now();
      let event: { type: string; object: unknown };
      try {
        event = JSON.parse(line) as { type: string; object: unknown };
      } catch {
        return; // as the library: a line that is not JSON is skipped
      }
      const object = this.options.transform && OBJECT_EVENTS.has(event.type) ? this.options.transform(event.object) : event.object;
      callback(event.type, object, event);
    };
    try {
      const query = { watch: true, ...queryParams, allowWatchBookmarks: true, timeoutSeconds: (this.options.serverTimeoutSeconds ?? defaultServerTimeout)() };
      const body = await this.open(path, query, controller.signal);
      if (!state.ended) {
        this.active = { controller, expire };
        this.options.onWatching?.();
      }
      readLines(body, onLine).then(() => finish(null), finish);
    } catch (err) {
      finish(err);
    }
    return controller;
  }

  /** Sends the watch request; resolves with the event stream once the server accepted it. */
  private async open(path: string, query: Query, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const response = await kubeGet(this.config, path, query, signal);
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel();
      throw Object.assign(new Error(response.statusText || STATUS_CODES[response.status] || 'watch failed'), { statusCode: response.status });
    }
    return response.body;
  }
}
