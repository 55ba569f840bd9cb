import { beforeEach, describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import { AppError } from '@sp/core';
import { createClaimIndex, type ClaimIndex } from '../src/reconcile/claim-index.js';
import { createClaimMemory, type ClaimMemory } from '../src/reconcile/claim-memory.js';
import { serviceKey } from '../src/reconcile/desired-state.js';
import type { GraphRegistryClient } from '../src/registry/graph-registry-client.js';
import type { EventRecorder, EventType } from '../src/kube/kube-event-recorder.js';
import type { OwnedName } from '../src/ownership/ownership-records.js';
import { createReconciler, NotLeaderError, type Reconciler } from '../src/reconcile/reconciler.js';
import { createRegistryView, type RegistryView } from '../src/registry/registry-view.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { graph, service } from './support/services.js';

/** The registry as a map, with a log of writes and of reads: the reconcile logic tested without a network. */
function memoryRegistry() {
  const graphs = new Map<string, string>();
  const writes: string[] = [];
  const reads: string[] = [];
  let down = false;
  const check = (): void => {
    if (down) throw new AppError(503, 'unavailable', 'graph registry is unavailable');
  };
  const registry: GraphRegistryClient = {
    get: (name) => Promise.resolve().then(() => (check(), reads.push(name), graphs.get(name))),
    list: () => Promise.resolve().then(() => (check(), new Map(graphs))),
    register: (name, url) =>
      Promise.resolve().then(() => {
        check();
        writes.push(`POST ${name} ${url}`);
        graphs.set(name, url);
      }),
    remove: (name) =>
      Promise.resolve().then(() => {
        check();
        writes.push(`DELETE ${name}`);
        return graphs.delete(name);
      }),
    publishSubgraph: () => Promise.reject(new Error('the reconciler publishes no subgraph schema')),
    removeSubgraph: () => Promise.reject(new Error('the reconciler removes no subgraph schema')),
  };
  return { registry, graphs, writes, reads, setDown: (value: boolean) => void (down = value) };
}

interface RecordedEvent {
  service: string;
  type: EventType;
  reason: string;
  message: string;
}

describe('reconciler', () => {
  let services: Map<string, V1Service>;
  let index: ClaimIndex;
  let view: RegistryView;
  let registry: ReturnType<typeof memoryRegistry>;
  let events: RecordedEvent[];
  let memory: ClaimMemory;
  let owned: Map<string, OwnedName>;
  let leader: AbortController | undefined;
  let reconciler: Reconciler;

  /** As the informer does: the cache changes and every claim seen is remembered. */
  const put = (svc: V1Service): string => {
    services.set(serviceKey(svc), svc);
    const claim = index.set(svc);
    if (claim) memory.observe(claim);
    return serviceKey(svc);
  };
  const drop = (key: string): string => {
    services.delete(key);
    index.delete(key);
    return key;
  };
  const warnings = (reason: string) => events.filter((event) => event.type === 'Warning' && event.reason === reason);

  beforeEach(() => {
    services = new Map();
    index = createClaimIndex('cluster.local');
    registry = memoryRegistry();
    view = createRegistryView(registry.registry);
    events = [];
    memory = createClaimMemory(Date.now);
    owned = new Map();
    leader = new AbortController();
    const recorder: EventRecorder = {
      record: (svc, type, reason, message) => {
        events.push({ service: serviceKey(svc), type, reason, message });
        return Promise.resolve(true);
      },
    };
    reconciler = createReconciler({
      claims: index,
      getService: (key) => services.get(key),
      graphRegistry: registry.registry,
      view,
      events: recorder,
      memory,
      ownership: {
        description: 'test/records',
        load: () => Promise.resolve(new Map(owned)),
        own: (name, record) => {
          owned.set(name, record);
          return Promise.resolve();
        },
        ownAll: (entries) => {
          for (const [name, record] of entries) owned.set(name, record);
          return Promise.resolve();
        },
        disown: (name) => Promise.resolve(void owned.delete(name)),
      },
      writeSignal: () => leader?.signal,
      logger: silentLogger(),
    });
  });

  it('should register a new Service and record a Normal Event on it', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await expect(reconciler.reconcile(key)).resolves.toBe('registered');
    expect(registry.graphs.get('orders')).toBe('http://orders.shop.svc.cluster.local:8080/graphql');
    expect(events).toEqual([{ service: 'shop/orders', type: 'Normal', reason: 'GraphRegistered', message: expect.stringContaining('registered graph "orders"') }]);
    expect(reconciler.registeredNames()).toBe(1);
  });

  it('should record a name as its own while it is registered, and forget it once deleted', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    expect(owned).toEqual(new Map([['orders', { service: 'shop/orders', url: 'http://orders.shop.svc.cluster.local:8080/graphql' }]]));
    await reconciler.reconcile(drop(key));
    expect(registry.graphs.has('orders')).toBe(false);
    expect(owned.size).toBe(0);
  });

  it('should be idempotent: a second reconcile writes nothing', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    await expect(reconciler.reconcile(key)).resolves.toBe('unchanged');
    expect(registry.writes).toHaveLength(1);
  });

  it('should re-register when the registry lost the name (resync heals)', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    registry.graphs.clear();
    await expect(reconciler.reconcile(key)).resolves.toBe('registered');
    expect(registry.graphs.get('orders')).toBe('http://orders.shop.svc.cluster.local:8080/graphql');
  });

  it('should follow a re-annotation to another port, path and scheme', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/path': '/v2', 'graph-registry.io/scheme': 'https' }) }));
    await expect(reconciler.reconcile(key)).resolves.toBe('registered');
    expect(registry.graphs.get('orders')).toBe('https://orders.shop.svc.cluster.local:8080/v2');
  });

  it('should move a renamed graph: delete the old name, register the new one', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders-v2') }));
    await expect(reconciler.reconcile(key)).resolves.toBe('registered');
    expect([...registry.graphs.keys()]).toEqual(['orders-v2']);
    expect(registry.writes).toEqual(['POST orders http://orders.shop.svc.cluster.local:8080/graphql', 'DELETE orders', 'POST orders-v2 http://orders.shop.svc.cluster.local:8080/graphql']);
  });

  it('should delete the registration when the Service is deleted', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    await expect(reconciler.reconcile(drop(key))).resolves.toBe('deleted');
    expect(registry.graphs.size).toBe(0);
    expect(reconciler.registeredNames()).toBe(0);
    expect(reconciler.isTracking(key)).toBe(false);
  });

  it('should delete the registration when the annotation is removed', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    put(service({ name: 'orders', namespace: 'shop' }));
    await expect(reconciler.reconcile(key)).resolves.toBe('deleted');
    expect(registry.graphs.has('orders')).toBe(false);
  });

  it('should delete what a Service registered even if this replica never wrote it (seen by the informer only)', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    registry.graphs.set('orders', 'http://orders.shop.svc.cluster.local:8080/graphql'); // written by a previous leader
    await expect(reconciler.reconcile(drop(key))).resolves.toBe('deleted');
    expect(registry.graphs.size).toBe(0);
  });

  it('should never delete a URL someone else registered under the name', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    registry.graphs.set('orders', 'http://hand-registered.example/graphql');
    await expect(reconciler.reconcile(drop(key))).resolves.toBe('unchanged');
    expect(registry.graphs.get('orders')).toBe('http://hand-registered.example/graphql');
    expect(registry.writes.filter((write) => write.startsWith('DELETE'))).toEqual([]);
  });

  it('should do nothing for a deleted Service the controller knows nothing about', async () => {
    registry.graphs.set('orders', 'http://orders.shop.svc.cluster.local:8080/graphql');
    await expect(reconciler.reconcile('shop/orders')).resolves.toBe('unchanged');
    expect(registry.graphs.size).toBe(1);
  });

  describe('resync re-checks', () => {
    it('should re-check against the registry view: no request per name while the registry is right', async () => {
      const keys = ['orders', 'billing', 'search'].map((name) => put(service({ name, namespace: 'shop', annotations: graph(name) })));
      for (const key of keys) await reconciler.reconcile(key);
      registry.reads.length = 0;
      await view.refresh();
      for (const key of keys) await expect(reconciler.reconcile(key, 'resync')).resolves.toBe('unchanged');
      expect(registry.reads).toEqual([]);
      expect(registry.writes).toHaveLength(3);
    });

    it('should heal a name the registry lost, read afresh before it is written', async () => {
      const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
      await reconciler.reconcile(key);
      registry.graphs.clear();
      await view.refresh();
      await expect(reconciler.reconcile(key, 'resync')).resolves.toBe('registered');
      expect(registry.reads).toEqual(['orders', 'orders']);
      expect(registry.graphs.get('orders')).toBe('http://orders.shop.svc.cluster.local:8080/graphql');
    });

    it('should not delete on the word of a stale view: the name is read again first', async () => {
      const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
      await reconciler.reconcile(key);
      await view.refresh();
      registry.graphs.set('orders', 'http://hand-registered.example/graphql'); // after the view was read
      await expect(reconciler.reconcile(drop(key), 'resync')).resolves.toBe('unchanged');
      expect(registry.graphs.get('orders')).toBe('http://hand-registered.example/graphql');
    });
  });

  describe('conflicts', () => {
    const older = () => service({ name: 'orders', namespace: 'shop', created: '2026-01-01T00:00:00Z', annotations: graph('orders') });
    const younger = () => service({ name: 'orders', namespace: 'billing', created: '2026-02-01T00:00:00Z', annotations: graph('orders') });

    it('should give the name to the oldest Service and warn the younger one once', async () => {
      const loser = put(younger());
      const winner = put(older());
      await expect(reconciler.reconcile(loser)).resolves.toBe('conflict');
      await expect(reconciler.reconcile(winner)).resolves.toBe('unchanged');
      await expect(reconciler.reconcile(loser)).resolves.toBe('conflict');
      expect(registry.graphs.get('orders')).toBe('http://orders.shop.svc.cluster.local:8080/graphql');
      expect(warnings('GraphNameConflict')).toEqual([
        { service: 'billing/orders', type: 'Warning', reason: 'GraphNameConflict', message: expect.stringContaining('already claimed by the older Service shop/orders') },
      ]);
    });

    it('should keep the older Service registered when a younger one claims its name later', async () => {
      const winner = put(older());
      await reconciler.reconcile(winner);
      const loser = put(younger());
      await expect(reconciler.reconcile(loser)).resolves.toBe('conflict');
      expect(registry.writes).toHaveLength(1);
      expect(warnings('GraphNameConflict')).toHaveLength(1);
    });

    it('should break a tie of creation times by namespace/name', async () => {
      const created = '2026-01-01T00:00:00Z';
      const a = put(service({ name: 'orders', namespace: 'shop', created, annotations: graph('orders') }));
      put(service({ name: 'orders', namespace: 'billing', created, annotations: graph('orders') }));
      await expect(reconciler.reconcile(a)).resolves.toBe('conflict');
      expect(registry.graphs.get('orders')).toBe('http://orders.billing.svc.cluster.local:8080/graphql');
    });

    it('should hand the name to the next oldest when the winner goes, and warn again on a new conflict', async () => {
      const winner = put(older());
      const loser = put(younger());
      await reconciler.reconcile(winner);
      await expect(reconciler.reconcile(drop(winner))).resolves.toBe('registered');
      expect(registry.graphs.get('orders')).toBe('http://orders.billing.svc.cluster.local:8080/graphql');
      await expect(reconciler.reconcile(loser)).resolves.toBe('unchanged');
      put(service({ name: 'orders', namespace: 'ancient', created: '2020-01-01T00:00:00Z', annotations: graph('orders') }));
      await expect(reconciler.reconcile(loser)).resolves.toBe('conflict');
      expect(warnings('GraphNameConflict').map((event) => event.service)).toEqual(['billing/orders', 'billing/orders']);
    });
  });

  describe('invalid annotations', () => {
    it('should warn once and register nothing', async () => {
      const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/port': 'grpc' }) }));
      await expect(reconciler.reconcile(key)).resolves.toBe('invalid');
      await expect(reconciler.reconcile(key)).resolves.toBe('invalid');
      expect(registry.writes).toEqual([]);
      expect(warnings('InvalidGraphAnnotation')).toEqual([
        { service: 'shop/orders', type: 'Warning', reason: 'InvalidGraphAnnotation', message: 'graph not registered: graph-registry.io/port "grpc" names no port of the Service' },
      ]);
      expect(reconciler.isTracking(key)).toBe(true);
    });

    it('should warn again when the problem changes', async () => {
      const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/path': 'x' }) }));
      await reconciler.reconcile(key);
      put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/path': '/a b' }) }));
      await reconciler.reconcile(key);
      expect(warnings('InvalidGraphAnnotation')).toHaveLength(2);
    });

    it('should deregister a Service whose annotations become invalid, and register it again once fixed', async () => {
      const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
      await reconciler.reconcile(key);
      put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/scheme': 'ftp' }) }));
      await expect(reconciler.reconcile(key)).resolves.toBe('invalid');
      expect(registry.graphs.has('orders')).toBe(false);
      put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
      await expect(reconciler.reconcile(key)).resolves.toBe('registered');
      expect(reconciler.isTracking(key)).toBe(true); // remembered claim
    });
  });

  it('should not write, nor record Events, without leadership', async () => {
    leader = undefined;
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders', { 'graph-registry.io/port': 'grpc' }) }));
    await expect(reconciler.reconcile(key)).rejects.toBeInstanceOf(NotLeaderError);
    const valid = put(service({ name: 'billing', namespace: 'shop', annotations: graph('billing') }));
    await expect(reconciler.reconcile(valid)).rejects.toBeInstanceOf(NotLeaderError);
    expect(registry.writes).toEqual([]);
    expect(events).toEqual([]);
  });

  it('should stop writing as soon as the term is aborted', async () => {
    const term = leader!;
    term.abort();
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await expect(reconciler.reconcile(key)).rejects.toBeInstanceOf(NotLeaderError);
    expect(registry.writes).toEqual([]);
  });

  it('should fail on a registry error and succeed on the retry (nothing half-remembered)', async () => {
    const key = put(service({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await reconciler.reconcile(key);
    drop(key);
    registry.setDown(true);
    await expect(reconciler.reconcile(key)).rejects.toMatchObject({ status: 503 });
    registry.setDown(false);
    await expect(reconciler.reconcile(key)).resolves.toBe('deleted');
  });
});
