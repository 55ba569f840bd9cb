import type { GraphStore } from './graph-store.js';

/**
 * Graphs in this process' memory: lost on restart and not shared between replicas, so only
 * meant for local runs (`STORE_URL=memory://`); the app warns when it is chosen.
 */
export function createMemoryGraphStore(): GraphStore {
  const graphs = new Map<string, string>();
  let schema: string | undefined;
  return {
    name: 'memory',
    getUrl: (name) => Promise.resolve(graphs.get(name)),
    setUrl(name, url) {
      graphs.set(name, url);
      return Promise.resolve();
    },
    deleteUrl: (name) => Promise.resolve(graphs.delete(name)),
    listUrls: () => Promise.resolve(new Map(graphs)),
    countGraphs: () => Promise.resolve(graphs.size),
    getSchema: () => Promise.resolve(schema),
    setSchema(sdl) {
      schema = sdl;
      return Promise.resolve();
    },
    schemaBytes: () => Promise.resolve(schema === undefined ? 0 : Buffer.byteLength(schema, 'utf8')),
    check: () => Promise.resolve(),
    close() {
      graphs.clear();
      schema = undefined;
      return Promise.resolve();
    },
  };
}
