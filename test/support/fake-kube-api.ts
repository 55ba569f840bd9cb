import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * An in-test Kubernetes API server, for the faults the real one (test/infra/kube.sh,
 * test/support/kube-apiserver.ts) cannot be made to produce on demand: a watch cut mid-line, a
 * stalled watch, 410 Gone after compaction, frequent bookmarks, injected 500s. It speaks the parts
 * of the real HTTP protocol that @kubernetes/client-node uses, over in-memory objects:
 *
 * - list (`GET /api/v1/services`, `/api/v1/namespaces/{ns}/services`, and the same shapes under
 *   `/apis/{group}/{version}/…`) answering `{kind: "<Kind>List", metadata: {resourceVersion}, items}`,
 *   filtered by an equality `labelSelector` (`a=b,c=d`); `limit` is ignored (one page, as a server
 *   may answer);
 * - watch (`?watch=true&resourceVersion=X`): a chunked stream of newline-delimited JSON events
 *   (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` when `allowWatchBookmarks=true`, `ERROR`) for the
 *   changes after X; X older than the retained history gets an `ERROR` event carrying a 410 Status
 *   (or an HTTP 410, see {@link FakeKubeApiOptions.goneMode}); `timeoutSeconds` ends the stream;
 * - get, create (POST, 409 AlreadyExists), replace (PUT; a stale `metadata.resourceVersion` is a
 *   409 Conflict), JSON merge patch (PATCH) and delete of single objects, each write bumping one
 *   global resourceVersion.
 *
 * Test controls change objects, emit bookmarks, cut or pause open watches, compact history, inject
 * failures, and expose every request and write for assertions.
 */

/** The resource types served, keyed as `{group}/{plural}` (core group: just the plural). */
export const RESOURCES = {
  services: { group: '', version: 'v1', plural: 'services', kind: 'Service' },
  events: { group: '', version: 'v1', plural: 'events', kind: 'Event' },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease' },
  configmaps: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' },
  eventsV1: { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event' },
} as const;

export type ResourceName = keyof typeof RESOURCES;
type ResourceType = (typeof RESOURCES)[ResourceName];

/** A stored object: free-form JSON with Kubernetes object metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One write, as kept in the audit log (never compacted). */
export interface WriteRecord {
  at: number;
  type: WatchEventType;
  resource: ResourceName;
  object: KubeObject;
}

export interface RequestRecord {
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
}

export interface FakeKubeApiOptions {
  /** How many changes are kept for watches to resume from; older resourceVersions get 410. */
  historyLimit?: number;
  /** How a watch from a compacted resourceVersion is refused: an ERROR event in a 200 stream (as the watch cache does) or an HTTP 410. */
  goneMode?: 'event' | 'http';
  /** Send a BOOKMARK to every watch that asked for bookmarks this often (off by default). */
  bookmarkIntervalMs?: number;
}

export interface FakeKubeApi {
  /** Base URL, `http://127.0.0.1:{port}`. */
  readonly url: string;
  /** A KubeConfig pointing at this server without authentication. */
  kubeConfig(): KubeConfig;
  /** Adds an object as the API would (uid, resourceVersion, creationTimestamp unless given). */
  create(resource: ResourceName, object: KubeObject): KubeObject;
  /** Changes a stored object in place through `mutate`; bumps its resourceVersion. */
  update(resource: ResourceName, namespace: string, name: string, mutate: (object: KubeObject) => void): KubeObject;
  remove(resource: ResourceName, namespace: string, name: string): KubeObject;
  get(resource: ResourceName, namespace: string, name: string): KubeObject | undefined;
  list(resource: ResourceName, namespace?: string): KubeObject[];
  /** The current (latest) resourceVersion. */
  resourceVersion(): string;
  /** Sends a BOOKMARK at the current resourceVersion to every open watch that allowed bookmarks. */
  bookmark(): number;
  /**
   * Destroys the socket of every open watch, by default after writing half an event line, so the
   * client sees a connection cut mid-stream. Returns how many were cut.
   */
  cutWatches(options?: { partialLine?: boolean }): number;
  /** Open watches stop receiving anything (events and bookmarks) while their connection stays open. */
  pauseWatches(): number;
  /** Forgets the change history: a watch from any resourceVersion before now gets 410 Gone. */
  compact(): void;
  /** Watches currently open, optionally of one resource. */
  openWatches(resource?: ResourceName): number;
  /** Every request received, in order. */
  readonly requests: readonly RequestRecord[];
  /** Every write (test-side or over HTTP), in order, with its time. */
  readonly writes: readonly WriteRecord[];
  /** Answers matching requests with `status` until the returned function is called. */
  failRequests(match: { method?: string; path: RegExp }, status: number): () => void;
  close(): Promise<void>;
}

interface HistoryEntry {
  rv: number;
  type: WatchEventType;
  resource: ResourceName;
  object: KubeObject;
}

interface OpenWatch {
  resource: ResourceName;
  namespace: string | undefined;
  response: ServerResponse;
  socket: Socket;
  bookmarks: boolean;
  paused: boolean;
  timer: NodeJS.Timeout | undefined;
}

interface Route {
  resource: ResourceName;
  namespace: string | undefined;
  name: string | undefined;
}

class HttpError extends Error {
  readonly code: number;
  readonly reason: string;

  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const apiVersionOf = (type: ResourceType): string => (type.group === '' ? type.version : `${type.group}/${type.version}`);
const objectKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;
const clone = <T>(value: T): T => structuredClone(value);
/** RFC 3339 with whole seconds, as the API server writes metav1.Time. */
const nowTime = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function resourceFor(group: string, version: string, plural: string): ResourceName | undefined {
  const entry = Object.entries(RESOURCES).find(([, type]) => type.group === group && type.version === version && type.plural === plural);
  return entry?.[0] as ResourceName | undefined;
}

/** Splits `/api/v1/…` or `/apis/{group}/{version}/…` into the group, the version and the rest. */
function apiPrefix(segments: string[]): { group: string; version: string | undefined; rest: string[] } {
  if (segments[0] === 'api') return { group: '', version: segments[1], rest: segments.slice(2) };
  if (segments[0] === 'apis') return { group: segments[1] ?? '', version: segments[2], rest: segments.slice(3) };
  return { group: '', version: undefined, rest: [] };
}

/** `{prefix}/{plural}` or `{prefix}/namespaces/{ns}/{plural}[/{name}]`. */
function parseRoute(path: string): Route | undefined {
  const { group, version, rest } = apiPrefix(path.split('/').filter((segment) => segment !== '').map(decodeURIComponent));
  if (version === undefined) return undefined;
  if (rest.length === 1) {
    const resource = resourceFor(group, version, rest[0]!);
    return resource && { resource, namespace: undefined, name: undefined };
  }
  const [namespaces, namespace, plural, name, ...extra] = rest;
  if (namespaces !== 'namespaces' || plural === undefined || extra.length > 0) return undefined;
  const resource = resourceFor(group, version, plural);
  return resource && { resource, namespace, name };
}

async function readJson(req: IncomingMessage): Promise<KubeObject> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject;
    if (typeof body !== 'object' || body === null || typeof body.metadata !== 'object') throw new Error('no metadata');
    return body;
  } catch (err) {
    throw new HttpError(400, 'BadRequest', `invalid body: ${(err as Error).message}`);
  }
}

const isSet = (value: unknown): boolean => value !== undefined && value !== null;

function leaseProblems(object: KubeObject): string[] {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const problems = ['acquireTime', 'renewTime']
    .filter((field) => isSet(spec[field]) && !(typeof spec[field] === 'string' && MICRO_TIME.test(spec[field])))
    .map((field) => `spec.${field}: Invalid value: ${JSON.stringify(spec[field])}: must be RFC 3339 with microseconds`);
  const duration = spec.leaseDurationSeconds;
  if (isSet(duration) && !(Number.isInteger(duration) && (duration as number) > 0)) problems.push('spec.leaseDurationSeconds: must be a positive integer');
  return problems;
}

const badTime = (value: unknown): boolean => isSet(value) && !(typeof value === 'string' && TIME.test(value));

function eventProblems(object: KubeObject): string[] {
  const involved = (object.involvedObject ?? {}) as Record<string, unknown>;
  const problems = [
    !involved.name || !involved.kind ? 'involvedObject: Required value' : '',
    object.type !== 'Normal' && object.type !== 'Warning' ? 'type: Unsupported value' : '',
    object.reason ? '' : 'reason: Required value',
    ...['firstTimestamp', 'lastTimestamp'].map((field) => (badTime(object[field]) ? `${field}: invalid time` : '')),
  ];
  return problems.filter((problem) => problem !== '');
}

/** The checks of the real API server that a client is most likely to get wrong (time formats, required fields). */
function validate(resource: ResourceName, object: KubeObject): void {
  const problems = resource === 'leases' ? leaseProblems(object) : resource === 'events' ? eventProblems(object) : [];
  if (problems.length > 0) throw new HttpError(422, 'Invalid', problems.join('; '));
}

/** Starts the fake API server on a free loopback port. */
export async function startFakeKubeApi(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const historyLimit = options.historyLimit ?? 10_000;
  const goneMode = options.goneMode ?? 'event';
  const objects = new Map<ResourceName, Map<string, KubeObject>>(Object.keys(RESOURCES).map((name) => [name as ResourceName, new Map()]));
  const history: HistoryEntry[] = [];
  const writes: WriteRecord[] = [];
  const requests: RequestRecord[] = [];
  const watches = new Set<OpenWatch>();
  const failures = new Set<{ method?: string; path: RegExp; status: number }>();
  let resourceVersion = 1000;
  /** Changes up to and including this resourceVersion are no longer in the history. */
  let compactedThrough = resourceVersion;

  const store = (resource: ResourceName): Map<string, KubeObject> => objects.get(resource)!;

  const writeLine = (watch: OpenWatch, event: unknown): void => {
    if (!watch.paused && !watch.response.writableEnded) watch.response.write(`${JSON.stringify(event)}\n`);
  };

  const watchedObject = (resource: ResourceName, object: KubeObject): KubeObject => {
    const type = RESOURCES[resource];
    return { ...clone(object), kind: type.kind, apiVersion: apiVersionOf(type) };
  };

  const record = (type: WatchEventType, resource: ResourceName, object: KubeObject): void => {
    const rv = Number(object.metadata.resourceVersion);
    history.push({ rv, type, resource, object: clone(object) });
    while (history.length > historyLimit) compactedThrough = history.shift()!.rv;
    writes.push({ at: Date.now(), type, resource, object: clone(object) });
    for (const watch of watches) {
      if (watch.resource === resource && (watch.namespace === undefined || watch.namespace === object.metadata.namespace)) {
        writeLine(watch, { type, object: watchedObject(resource, object) });
      }
    }
  };

  const insert = (resource: ResourceName, input: KubeObject, namespace: string | undefined): KubeObject => {
    const type = RESOURCES[resource];
    const object = clone(input);
    const name = object.metadata.name ?? (object.metadata.generateName ? `${object.metadata.generateName}${randomUUID().slice(0, 5)}` : undefined);
    if (!name) throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    const ns = namespace ?? object.metadata.namespace ?? 'default';
    if (object.metadata.namespace !== undefined && object.metadata.namespace !== ns) throw new HttpError(400, 'BadRequest', 'the namespace of the object does not match the namespace of the request');
    if (store(resource).has(objectKey(ns, name))) throw new HttpError(409, 'AlreadyExists', `${type.plural} "${name}" already exists`);
    validate(resource, object);
    resourceVersion += 1;
    object.metadata = {
      ...object.metadata,
      name,
      namespace: ns,
      uid: randomUUID(),
      resourceVersion: String(resourceVersion),
      creationTimestamp: object.metadata.creationTimestamp ?? nowTime(),
    };
    delete object.metadata.generateName;
    delete object.kind;
    delete object.apiVersion;
    store(resource).set(objectKey(ns, name), object);
    record('ADDED', resource, object);
    return object;
  };

  const replace = (resource: ResourceName, namespace: string, name: string, input: KubeObject): KubeObject => {
    const current = store(resource).get(objectKey(namespace, name));
    if (!current) throw new HttpError(404, 'NotFound', `${RESOURCES[resource].plural} "${name}" not found`);
    const expected = input.metadata.resourceVersion;
    if (expected !== undefined && expected !== '' && expected !== current.metadata.resourceVersion) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${RESOURCES[resource].plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    validate(resource, input);
    resourceVersion += 1;
    const object = clone(input);
    delete object.kind;
    delete object.apiVersion;
    object.metadata = { ...object.metadata, name, namespace, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp, resourceVersion: String(resourceVersion) };
    store(resource).set(objectKey(namespace, name), object);
    record('MODIFIED', resource, object);
    return object;
  };

  /** JSON merge patch (RFC 7386) of top-level fields, the only kind the controller sends. */
  const mergePatch = (req: IncomingMessage, resource: ResourceName, namespace: string, name: string, patch: KubeObject): KubeObject => {
    if (req.headers['content-type'] !== 'application/merge-patch+json') throw new HttpError(415, 'UnsupportedMediaType', `the fake API server takes merge patches only, not ${req.headers['content-type']}`);
    const current = store(resource).get(objectKey(namespace, name));
    if (!current) throw new HttpError(404, 'NotFound', `${RESOURCES[resource].plural} "${name}" not found`);
    const merged = { ...clone(current), ...patch, metadata: { ...clone(current.metadata), resourceVersion: undefined } } as KubeObject;
    for (const [field, value] of Object.entries(patch)) if (value === null) delete merged[field];
    return replace(resource, namespace, name, merged);
  };

  const destroy = (resource: ResourceName, namespace: string, name: string): KubeObject => {
    const current = store(resource).get(objectKey(namespace, name));
    if (!current) throw new HttpError(404, 'NotFound', `${RESOURCES[resource].plural} "${name}" not found`);
    store(resource).delete(objectKey(namespace, name));
    resourceVersion += 1;
    const object = { ...clone(current), metadata: { ...clone(current.metadata), resourceVersion: String(resourceVersion) } };
    record('DELETED', resource, object);
    return object;
  };

  const listObjects = (resource: ResourceName, namespace?: string): KubeObject[] =>
    [...store(resource).values()].filter((object) => namespace === undefined || object.metadata.namespace === namespace).map(clone);

  const serveList = (res: ServerResponse, route: Route, labelSelector: string | null): void => {
    const wanted = (labelSelector ?? '').split(',').filter(Boolean).map((term) => {
      const [key = '', value = ''] = term.split('=');
      if (!/^[^=!]+=[^=!]*$/.test(term)) throw new HttpError(400, 'BadRequest', `only equality label selectors are supported by the fake API server: ${term}`);
      return [key, value] as const;
    });
    sendJson(res, 200, {
      kind: `${RESOURCES[route.resource].kind}List`,
      apiVersion: apiVersionOf(RESOURCES[route.resource]),
      metadata: { resourceVersion: String(resourceVersion) },
      items: listObjects(route.resource, route.namespace).filter((object) => wanted.every(([key, value]) => object.metadata.labels?.[key] === value)),
    });
  };

  /** Refuses a watch from a resourceVersion older than the history (410 Gone); true when it did. */
  const refuseGone = (res: ServerResponse, from: string, fromRv: number | undefined): boolean => {
    if (fromRv === undefined || (!Number.isNaN(fromRv) && fromRv >= compactedThrough)) return false;
    const gone = status(410, 'Expired', `too old resource version: ${from} (${compactedThrough + 1})`);
    if (goneMode === 'http') {
      sendJson(res, 410, gone);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: gone })}\n`);
    }
    return true;
  };

  /** What a new watch gets first: the changes after its resourceVersion, or (without one) the current state as ADDED events. */
  const backlogFor = (route: Route, fromRv: number | undefined): Array<{ type: WatchEventType; object: KubeObject }> => {
    if (fromRv === undefined) return listObjects(route.resource, route.namespace).map((object) => ({ type: 'ADDED' as const, object }));
    return history.filter(
      (entry) => entry.rv > fromRv && entry.resource === route.resource && (route.namespace === undefined || entry.object.metadata.namespace === route.namespace),
    );
  };

  const serveWatch = (req: IncomingMessage, res: ServerResponse, route: Route, query: URLSearchParams): void => {
    const from = query.get('resourceVersion') ?? '';
    const fromRv = from === '' || from === '0' ? undefined : Number(from);
    if (refuseGone(res, from, fromRv)) return;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const watch: OpenWatch = {
      resource: route.resource,
      namespace: route.namespace,
      response: res,
      socket: req.socket,
      bookmarks: query.get('allowWatchBookmarks') === 'true',
      paused: false,
      timer: undefined,
    };
    for (const entry of backlogFor(route, fromRv)) writeLine(watch, { type: entry.type, object: watchedObject(route.resource, entry.object) });
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    if (timeoutSeconds > 0) watch.timer = setTimeout(() => res.end(), timeoutSeconds * 1000);
    watches.add(watch);
    res.on('close', () => {
      clearTimeout(watch.timer);
      watches.delete(watch);
    });
  };

  const serveItem = async (req: IncomingMessage, res: ServerResponse, route: Route & { namespace: string; name: string }): Promise<void> => {
    if (req.method === 'GET') {
      const object = store(route.resource).get(objectKey(route.namespace, route.name));
      if (!object) throw new HttpError(404, 'NotFound', `${RESOURCES[route.resource].plural} "${route.name}" not found`);
      return sendJson(res, 200, withType(route.resource, object));
    }
    if (req.method === 'PUT') return sendJson(res, 200, withType(route.resource, replace(route.resource, route.namespace, route.name, await readJson(req))));
    if (req.method === 'PATCH') return sendJson(res, 200, withType(route.resource, mergePatch(req, route.resource, route.namespace, route.name, await readJson(req))));
    if (req.method === 'DELETE') return sendJson(res, 200, withType(route.resource, destroy(route.resource, route.namespace, route.name)));
    throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not supported by the fake API server`);
  };

  const withType = (resource: ResourceName, object: KubeObject): KubeObject => watchedObject(resource, object);

  const serveCollection = async (req: IncomingMessage, res: ServerResponse, route: Route, query: URLSearchParams): Promise<void> => {
    if (req.method === 'POST' && route.namespace !== undefined) {
      return sendJson(res, 201, withType(route.resource, insert(route.resource, await readJson(req), route.namespace)));
    }
    if (req.method !== 'GET') throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not supported by the fake API server`);
    const watch = query.get('watch') === 'true' || query.get('watch') === '1';
    if ((watch && query.has('labelSelector')) || query.has('fieldSelector')) throw new HttpError(400, 'BadRequest', 'these selectors are not supported by the fake API server');
    if (watch) return serveWatch(req, res, route, query);
    return serveList(res, route, query.get('labelSelector'));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ at: Date.now(), method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams) });
    for (const failure of failures) {
      if ((failure.method === undefined || failure.method === req.method) && failure.path.test(url.pathname)) {
        throw new HttpError(failure.status, 'InternalError', 'injected failure');
      }
    }
    const route = parseRoute(url.pathname);
    if (!route) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
    if (route.name !== undefined && route.namespace !== undefined) return serveItem(req, res, { ...route, namespace: route.namespace, name: route.name });
    return serveCollection(req, res, route, url.searchParams);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const error = err instanceof HttpError ? err : new HttpError(500, 'InternalError', String(err));
      if (!res.headersSent) sendJson(res, error.code, status(error.code, error.reason, error.message));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const bookmark = (): number => {
    let sent = 0;
    for (const watch of watches) {
      if (!watch.bookmarks || watch.paused) continue;
      const type = RESOURCES[watch.resource];
      writeLine(watch, { type: 'BOOKMARK', object: { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(resourceVersion) } } });
      sent += 1;
    }
    return sent;
  };
  const bookmarkTimer = options.bookmarkIntervalMs ? setInterval(bookmark, options.bookmarkIntervalMs) : undefined;

  return {
    url,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'fake' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
        currentContext: 'fake',
      });
      return kc;
    },
    create: (resource, object) => clone(insert(resource, object, object.metadata.namespace)),
    update(resource, namespace, name, mutate) {
      const current = store(resource).get(objectKey(namespace, name));
      if (!current) throw new Error(`${resource} ${namespace}/${name} not found`);
      const next = clone(current);
      mutate(next);
      return clone(replace(resource, namespace, name, { ...next, metadata: { ...next.metadata, resourceVersion: undefined } }));
    },
    remove: (resource, namespace, name) => clone(destroy(resource, namespace, name)),
    get: (resource, namespace, name) => {
      const object = store(resource).get(objectKey(namespace, name));
      return object && clone(object);
    },
    list: listObjects,
    resourceVersion: () => String(resourceVersion),
    bookmark,
    cutWatches(cutOptions = {}) {
      const open = [...watches];
      for (const watch of open) {
        if (cutOptions.partialLine !== false && !watch.response.writableEnded) watch.response.write('{"type":"MODIFIED","object":{"metadata":');
        watch.socket.destroy();
        watches.delete(watch);
      }
      return open.length;
    },
    pauseWatches() {
      for (const watch of watches) watch.paused = true;
      return watches.size;
    },
    compact() {
      history.length = 0;
      compactedThrough = resourceVersion;
    },
    openWatches: (resource) => [...watches].filter((watch) => resource === undefined || watch.resource === resource).length,
    requests,
    writes,
    failRequests(match, code) {
      const failure = { ...match, status: code };
      failures.add(failure);
      return () => void failures.delete(failure);
    },
    async close() {
      clearInterval(bookmarkTimer);
      for (const watch of watches) watch.response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
