import type { ReadableStream } from 'node:stream/web';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { startFakeKubeApi, type FakeKubeApi } from '../../../test/support/fake-kube-api.js';
import { serviceObject } from './support/services.js';

interface WatchEvent {
  type: string;
  object: { kind?: string; code?: number; metadata?: Record<string, unknown> };
}

interface Body {
  kind?: string;
  code?: number;
  reason?: string;
  metadata: { name?: string; resourceVersion?: string };
  items: Array<{ metadata: { name: string } }>;
}

/** A watch read the way a client reads it: a chunked body of newline-delimited JSON events. */
async function openWatch(url: string) {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const next = async (): Promise<WatchEvent | undefined> => {
    for (;;) {
      const newline = buffer.indexOf('\n');
      if (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        return JSON.parse(line) as WatchEvent;
      }
      if (ended) return undefined;
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return { response, next, close: () => controller.abort() };
}

const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Body });

describe('fake Kubernetes API server', () => {
  let api: FakeKubeApi;
  beforeEach(async () => {
    api = await startFakeKubeApi();
  });
  afterEach(async () => {
    await api.close();
  });

  it('should list with the current resourceVersion, across namespaces or in one', async () => {
    api.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
    api.create('services', serviceObject({ name: 'b', namespace: 'billing' }));
    const all = await json(await fetch(`${api.url}/api/v1/services`));
    expect(all.body).toMatchObject({ kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: api.resourceVersion() } });
    expect(all.body.items.map((item) => item.metadata.name)).toEqual(['a', 'b']);
    const shop = await json(await fetch(`${api.url}/api/v1/namespaces/shop/services`));
    expect(shop.body.items).toHaveLength(1);
    expect(shop.body.items[0]!.metadata).toMatchObject({ name: 'a', namespace: 'shop', uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.stringMatching(/Z$/) });
  });

  it('should stream the changes after a resourceVersion as chunked newline-delimited JSON', async () => {
    api.create('services', serviceObject({ name: 'before', namespace: 'shop' }));
    const from = api.resourceVersion();
    api.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
    const watch = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${from}`);
    expect(watch.response.headers.get('transfer-encoding')).toBe('chunked');
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { kind: 'Service', apiVersion: 'v1', metadata: { name: 'a' } } });
    api.update('services', 'shop', 'a', (svc) => void (svc.metadata.labels = { tier: 'api' }));
    expect(await watch.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'a', labels: { tier: 'api' } } } });
    const deleted = api.remove('services', 'shop', 'a');
    expect(await watch.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: deleted.metadata.resourceVersion } } });
    watch.close();
  });

  it('should send bookmarks only to watches that allow them', async () => {
    const withBookmarks = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${api.resourceVersion()}&allowWatchBookmarks=true`);
    const without = await openWatch(`${api.url}/api/v1/namespaces/shop/services?watch=true&resourceVersion=${api.resourceVersion()}`);
    expect(api.bookmark()).toBe(1);
    api.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
    expect(await withBookmarks.next()).toEqual({ type: 'BOOKMARK', object: { kind: 'Service', apiVersion: 'v1', metadata: { resourceVersion: '1000' } } });
    expect(await without.next()).toMatchObject({ type: 'ADDED' });
    withBookmarks.close();
    without.close();
  });

  it('should answer a watch from a compacted resourceVersion with 410 Gone, as an ERROR event or as HTTP 410', async () => {
    const old = api.resourceVersion();
    api.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
    api.compact();
    const watch = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${old}`);
    expect(await watch.next()).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(await watch.next()).toBeUndefined();
    const current = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${api.resourceVersion()}`);
    expect(current.response.status).toBe(200);
    current.close();
    const http = await startFakeKubeApi({ goneMode: 'http', historyLimit: 1 });
    try {
      const start = http.resourceVersion();
      http.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
      http.create('services', serviceObject({ name: 'b', namespace: 'shop' }));
      expect((await json(await fetch(`${http.url}/api/v1/services?watch=true&resourceVersion=${start}`))).status).toBe(410);
    } finally {
      await http.close();
    }
  });

  it('should end a watch after timeoutSeconds, and cut or pause open watches on request', async () => {
    const timed = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${api.resourceVersion()}&timeoutSeconds=1`);
    const started = Date.now();
    expect(await timed.next()).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThan(900);
    const paused = await openWatch(`${api.url}/api/v1/services?watch=true&resourceVersion=${api.resourceVersion()}`);
    expect(api.pauseWatches()).toBe(1);
    api.create('services', serviceObject({ name: 'a', namespace: 'shop' }));
    expect(api.cutWatches()).toBe(1);
    await expect(paused.next()).rejects.toThrow();
    expect(api.openWatches()).toBe(0);
  });

  it('should create, get and replace Leases with optimistic concurrency, and insist on MicroTime', async () => {
    const base = `${api.url}/apis/coordination.k8s.io/v1/namespaces/platform/leases`;
    const post = (body: unknown) => fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const put = (body: unknown) => fetch(`${base}/graph-controller`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await json(await fetch(`${base}/graph-controller`))).status).toBe(404);
    const lease = { metadata: { name: 'graph-controller' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' } };
    const created = await json(await post(lease));
    expect(created).toMatchObject({ status: 201, body: { kind: 'Lease', metadata: { namespace: 'platform', resourceVersion: expect.any(String) } } });
    expect((await json(await post(lease))).body).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    const rv = created.body.metadata.resourceVersion;
    expect((await json(await put({ ...lease, metadata: { ...lease.metadata, resourceVersion: rv } }))).status).toBe(200);
    expect((await json(await put({ ...lease, metadata: { ...lease.metadata, resourceVersion: rv } }))).body).toMatchObject({ code: 409, reason: 'Conflict' });
    const millis = await json(await put({ ...lease, spec: { ...lease.spec, renewTime: '2026-01-01T00:00:00.000Z' } }));
    expect(millis.body).toMatchObject({ code: 422, reason: 'Invalid', message: expect.stringContaining('spec.renewTime') });
  });

  it('should create Events and validate them, and inject failures', async () => {
    const base = `${api.url}/api/v1/namespaces/shop/events`;
    const post = (body: unknown) => fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const event = { metadata: { name: 'orders.1' }, involvedObject: { kind: 'Service', name: 'orders', namespace: 'shop' }, type: 'Warning', reason: 'X', message: 'm' };
    expect((await post(event)).status).toBe(201);
    expect(api.list('events', 'shop')).toHaveLength(1);
    expect((await json(await post({ ...event, metadata: { name: 'orders.2' }, type: 'Loud' }))).status).toBe(422);
    const undo = api.failRequests({ method: 'POST', path: /\/events$/ }, 503);
    expect((await post({ ...event, metadata: { name: 'orders.3' } })).status).toBe(503);
    undo();
    expect((await post({ ...event, metadata: { name: 'orders.3' } })).status).toBe(201);
    expect(api.requests.filter((request) => request.method === 'POST')).toHaveLength(4);
  });
});
