import { Watch, type KubeConfig } from '@kubernetes/client-node';

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
  /** An event or bookmark arrived. */
  onActivity?(): void;
}

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

/**
 * The library's Watch with what a long-running informer needs:
 *
 * - `allowWatchBookmarks=true`, so a healthy watch on a quiet resource still hears from the API
 *   server (a bookmark about once a minute), and `timeoutSeconds`;
 * - a watchdog: informer watches can stall without the connection failing (a half-open TCP
 *   connection, a proxy that stops forwarding); one silent longer than `idleMs` is aborted and
 *   the informer resumes from its last resourceVersion;
 * - `relist()`: makes the informer list again (as after a 410) at the next opportunity, for the
 *   periodic full relist.
 *
 * It plugs into the library's ListWatch, which stays in charge of listing, caching and resuming.
 */
export class WatchdogWatch extends Watch {
  private readonly options: WatchdogWatchOptions;
  private active: { controller: AbortController; expire(reason: 'idle' | 'relist'): void } | undefined;
  private relistRequested = false;

  constructor(config: KubeConfig, options: WatchdogWatchOptions) {
    super(config);
    this.options = options;
    // The library has a connect/inactivity timeout of its own (30 s in 2.x). Keep it as a backstop
    // beyond the watchdog, so the watchdog decides (and is counted) and a quiet watch between
    // bookmarks is not cut early. Harmless if a future version drops the field.
    Reflect.set(this, 'requestTimeoutMs', options.idleMs + 30_000);
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
    if (this.relistRequested) {
      this.relistRequested = false;
      const controller = new AbortController();
      // Deferred: the informer stores the returned controller before it hears about the end.
      setImmediate(() => done(goneError('periodic relist')));
      return controller;
    }
    const params = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: (this.options.serverTimeoutSeconds ?? defaultServerTimeout)() };
    const state: { lastActivity: number; reason: 'idle' | 'relist' | undefined; controller: AbortController | undefined; ended: boolean } = {
      lastActivity: performance.now(),
      reason: undefined,
      controller: undefined,
      ended: false,
    };
    const expire = (why: 'idle' | 'relist'): void => {
      state.reason ??= why;
      state.controller?.abort();
    };
    const watchdog = setInterval(() => {
      if (performance.now() - state.lastActivity < this.options.idleMs) return;
      if (state.reason === undefined) this.options.onIdleRestart?.();
      expire('idle');
    }, Math.max(50, Math.min(1000, this.options.idleMs / 4)));
    watchdog.unref();
    const onEvent: WatchCallback = (phase, object, raw) => {
      state.lastActivity = performance.now();
      this.options.onActivity?.();
      callback(phase, object, raw);
    };
    const onDone: DoneCallback = (err) => {
      if (state.ended) return;
      state.ended = true;
      clearInterval(watchdog);
      if (this.active && this.active.controller === state.controller) this.active = undefined;
      if (state.reason === 'relist') done(goneError('periodic relist'));
      else if (state.reason === 'idle') done(timeoutError(`watch silent for ${this.options.idleMs} ms`));
      else done(err);
    };
    const controller = await super.watch(path, params, onEvent, onDone);
    state.controller = controller;
    if (!state.ended) {
      this.active = { controller, expire };
      this.options.onWatching?.();
    }
    if (state.reason !== undefined) controller.abort(); // expired while connecting
    return controller;
  }
}
