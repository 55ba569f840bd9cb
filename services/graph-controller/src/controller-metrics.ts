import { Gauge, type Registry } from 'prom-client';
import { counterFromZero } from '@sp/observability';
import type { SubgraphResult } from './federation/subgraph-sync.js';
import type { ReconcileResult } from './reconcile/reconciler.js';

export type ReconcileOutcome = ReconcileResult | 'error';

export interface ControllerMetrics {
  reconciled(result: ReconcileOutcome): void;
  setLeader(leading: boolean): void;
  watchRestarted(reason: 'idle' | 'error'): void;
  subgraphSynced(result: SubgraphResult): void;
}

const RESULTS: readonly ReconcileOutcome[] = ['registered', 'deleted', 'unchanged', 'conflict', 'invalid', 'error'];

/** The controller's counters and its leader gauge, in the service's registry. */
export function createControllerMetrics(registry: Registry): ControllerMetrics {
  const reconciles = counterFromZero(registry, { name: 'graph_controller_reconciles_total', help: 'Reconciles of a Service key, by result', labels: { result: RESULTS } });
  const leader = new Gauge({ name: 'graph_controller_leader', help: '1 while this replica holds the lease and writes, else 0', registers: [registry] });
  leader.set(0);
  const restarts = counterFromZero(registry, {
    name: 'graph_controller_watch_restarts_total',
    help: 'Watches restarted: idle (silent too long, by the watchdog) or error (failed list or broken watch)',
    labels: { reason: ['idle', 'error'] },
  });
  const subgraphs = counterFromZero(registry, {
    name: 'graph_controller_subgraph_publishes_total',
    help: 'Subgraph schemas read from federated Services, by what the registry made of them: published, unchanged (not sent), refused (does not compose, invalid, or refused by the policy)',
    labels: { result: ['published', 'unchanged', 'refused'] },
  });
  return {
    reconciled: (result) => reconciles.inc({ result }),
    subgraphSynced: (result) => subgraphs.inc({ result }),
    setLeader: (leading) => leader.set(leading ? 1 : 0),
    watchRestarted: (reason) => restarts.inc({ reason }),
  };
}

/** The gauges of the controller's state, read when scraped: registered after the queue and the reconciler they read. */
export function registerStateGauges(registry: Registry, read: { queueDepth(): number; registeredNames(): number; refusedSubgraphs(): number }): void {
  new Gauge({
    name: 'graph_controller_subgraphs_refused',
    help: 'Federated Services whose newest subgraph schema the registry refused (the supergraph keeps their last good one)',
    registers: [registry],
    collect() {
      this.set(read.refusedSubgraphs());
    },
  });
  new Gauge({
    name: 'graph_controller_registered_names',
    help: 'Graph names this controller holds registered',
    registers: [registry],
    collect() {
      this.set(read.registeredNames());
    },
  });
  new Gauge({
    name: 'graph_controller_queue_depth',
    help: 'Service keys waiting to be reconciled, including those waiting for a retry',
    registers: [registry],
    collect() {
      this.set(read.queueDepth());
    },
  });
}
