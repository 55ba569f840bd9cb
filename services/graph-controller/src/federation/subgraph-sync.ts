import { createHash } from 'node:crypto';
import type { V1Service } from '@kubernetes/client-node';
import type { Logger } from '@sp/observability';
import type { EventRecorder } from '../kube/kube-event-recorder.js';
import type { GraphRegistryClient } from '../registry/graph-registry-client.js';
import type { SdlReader } from './subgraph-sdl-reader.js';

/** How one sync of a subgraph ended (the `result` label of graph_controller_subgraph_publishes_total, with `error`). */
export type SubgraphResult = 'published' | 'unchanged' | 'refused';

export const SUBGRAPH_EVENT_REASONS = {
  refused: 'SubgraphSchemaRefused',
  published: 'SubgraphSchemaPublished',
} as const;

export interface SubgraphSyncDeps {
  readSdl: SdlReader;
  graphRegistry: Pick<GraphRegistryClient, 'publishSubgraph' | 'removeSubgraph'>;
  events: EventRecorder;
  logger: Logger;
  onResult?(result: SubgraphResult): void;
}

/** Keeps the registry's subgraph schemas in line with what the federated Services serve. */
export interface SubgraphSync {
  /**
   * Reads the subgraph's SDL at `url` and publishes it when it differs from what this controller
   * last published under `name`. A refusal (does not compose, invalid, policy) is a Warning Event
   * on the Service, once per distinct refusal; the supergraph keeps its last good version. Rejects
   * when the subgraph cannot be read or the registry fails (the reconcile retries with backoff).
   */
  sync(name: string, url: string, service: V1Service | undefined, signal: AbortSignal): Promise<SubgraphResult>;
  /**
   * The graph is no longer federated (or gone): takes its subgraph out of the supergraph when this
   * controller published it (never a schema someone else published), and forgets it.
   */
  leave(name: string, signal: AbortSignal, registered: boolean): Promise<void>;
  /** Subgraphs whose newest schema the registry refused. */
  refusedCount(): number;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The Warning's message: the registry's error and its reasons, as many as fit an Event (1024 characters). */
function refusalMessage(name: string, error: string, reasons: readonly string[]): string {
  const text = `subgraph schema of graph "${name}" refused: ${error}${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`;
  return text.length <= 1024 ? text : `${text.slice(0, 1021)}...`;
}

export function createSubgraphSync(deps: SubgraphSyncDeps): SubgraphSync {
  /** name → SHA-256 of the SDL this controller published (or found the registry holding). */
  const published = new Map<string, string>();
  /** name → `sha256 message` of the refusal last reported (an Event once per distinct refusal). */
  const refused = new Map<string, string>();

  const report = async (name: string, sdlSha: string, service: V1Service | undefined, message: string): Promise<void> => {
    const id = `${sdlSha} ${message}`;
    if (refused.get(name) === id) return;
    deps.logger.warn({ graph: name, message }, 'subgraph schema refused by the registry: the supergraph keeps its last good version');
    if (service === undefined || (await deps.events.record(service, 'Warning', SUBGRAPH_EVENT_REASONS.refused, message))) refused.set(name, id);
  };

  return {
    async sync(name, url, service, signal) {
      const sdl = await deps.readSdl(url, signal);
      const digest = sha256(sdl);
      if (published.get(name) === digest) {
        // Back to the schema last published (a refused deploy rolled back): nothing is refused any more.
        refused.delete(name);
        deps.onResult?.('unchanged');
        return 'unchanged';
      }
      const outcome = await deps.graphRegistry.publishSubgraph(name, sdl, signal);
      if (outcome.outcome === 'refused') {
        await report(name, digest, service, refusalMessage(name, outcome.error, outcome.reasons));
        deps.onResult?.('refused');
        return 'refused';
      }
      published.set(name, digest);
      refused.delete(name);
      if (outcome.outcome === 'published') {
        deps.logger.info({ graph: name, version: outcome.version, supergraphVersion: outcome.supergraphVersion }, 'subgraph schema published');
        if (service !== undefined) await deps.events.record(service, 'Normal', SUBGRAPH_EVENT_REASONS.published, `published the subgraph schema of graph "${name}" as version ${outcome.version}`);
      }
      deps.onResult?.(outcome.outcome);
      return outcome.outcome;
    },
    async leave(name, signal, registered) {
      if (!published.has(name) && !refused.has(name)) return;
      // A registered graph keeps its URL: only its subgraph leaves. A deregistered one left with its URL.
      if (registered && published.has(name)) await deps.graphRegistry.removeSubgraph(name, signal);
      published.delete(name);
      refused.delete(name);
    },
    refusedCount: () => refused.size,
  };
}
