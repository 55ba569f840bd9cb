import type { GraphRegistryClient } from './graph-registry-client.js';

/**
 * What the registry holds, as far as this replica knows: every registration read at once
 * (`GET /`) when a resync starts, then kept up to date by this replica's own reads and writes.
 * A resync compares against it instead of asking the registry name by name, so an idle resync
 * costs one request; anything that looks different is read again before it is written.
 */
export interface RegistryView {
  /** Reads every registration; reads and writes made while it is under way are kept over it. */
  refresh(signal?: AbortSignal): Promise<void>;
  /** The URL under the name (undefined: none); `unknown` before the first refresh. */
  lookup(name: string): string | undefined | typeof UNKNOWN;
  /** This replica read or wrote the name. */
  note(name: string, url: string | undefined): void;
  /** Forgets everything (leadership lost: another replica writes now). */
  clear(): void;
}

export const UNKNOWN: unique symbol = Symbol('unknown');

export function createRegistryView(graphRegistry: Pick<GraphRegistryClient, 'list'>): RegistryView {
  let graphs: Map<string, string> | undefined;
  /** Reads and writes made while a refresh is under way: newer than what it returns. */
  let meanwhile: Map<string, string | undefined> | undefined;

  const apply = (target: Map<string, string>, name: string, url: string | undefined): void => {
    if (url === undefined) target.delete(name);
    else target.set(name, url);
  };

  return {
    async refresh(signal) {
      const during = new Map<string, string | undefined>();
      meanwhile = during;
      try {
        const fresh = await graphRegistry.list(signal);
        for (const [name, url] of during) apply(fresh, name, url);
        graphs = fresh;
      } finally {
        if (meanwhile === during) meanwhile = undefined;
      }
    },
    lookup: (name) => (graphs ? graphs.get(name) : UNKNOWN),
    note(name, url) {
      meanwhile?.set(name, url);
      if (graphs) apply(graphs, name, url);
    },
    clear() {
      graphs = undefined;
    },
  };
}
